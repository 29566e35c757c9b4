import { parseTaskId } from '@dotasks/core';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';

export interface HeartbeatOptions extends GlobalOptions {
  id?: string;
  lease?: number;
}

/** Renews the lease of a task (or of every task the owner holds). */
export async function heartbeat(options: HeartbeatOptions): Promise<CommandOutput> {
  const store = openStore(options);
  const leases = await store.heartbeat({
    owner: actingOwner(options),
    id: options.id === undefined ? undefined : parseTaskId(options.id),
    ttlSeconds: options.lease,
  });
  const text = leases.length ? leases.map((l) => `renewed #${l.task} until ${l.expiresAt ?? 'forever'}`).join('\n') : 'no leases to renew';
  return { text, json: { leases } };
}
