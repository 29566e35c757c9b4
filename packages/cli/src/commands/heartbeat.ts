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
  const lines = leases.length ? leases.map((l) => `renewed #${l.task} until ${l.expiresAt ?? 'forever'}`) : ['no leases to renew'];
  if (options.sync && leases.length) {
    // Published, so other machines see the claim is alive and do not reap it.
    const { syncBoard } = await import('@dotasks/core');
    const report = await syncBoard(store);
    lines.push(`synced with ${report.remote}/${report.branch}`);
  }
  return { text: lines.join('\n'), json: { leases } };
}
