import { parseTaskId } from '@dotasks/core';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks heartbeat` takes, as declared in the command table. */
export interface HeartbeatOptions extends CommandArgs<'heartbeat'>, GlobalOptions {}

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
