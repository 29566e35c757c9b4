import { parseTaskId } from '@dotasks/core';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { openStoreToSync, skippedWarnings, syncLines } from '../sync-output.js';

/** What `tasks heartbeat` takes, as declared in the command table. */
export interface HeartbeatOptions extends CommandArgs<'heartbeat'>, GlobalOptions {}

/** Renews the lease of a task (or of every task the owner holds). */
export async function heartbeat(options: HeartbeatOptions): Promise<CommandOutput> {
  const { store, notes } = options.sync ? await openStoreToSync(options) : { store: openStore(options), notes: [] };
  const leases = await store.heartbeat({
    owner: actingOwner(options),
    id: options.id === undefined ? undefined : parseTaskId(options.id),
    ttlSeconds: options.lease,
  });
  const lines = [...notes, ...(leases.length ? leases.map((l) => `renewed #${l.task} until ${l.expiresAt ?? 'forever'}`) : ['no leases to renew'])];
  if (options.sync && leases.length) {
    // Published, so other machines see the claim is alive and do not reap it.
    const { syncBoard } = await import('@dotasks/core');
    const report = await syncBoard(store);
    lines.push(...syncLines(report).filter((l) => !/^(in|out) /.test(l)), `synced with ${report.remote}/${report.branch}`);
    return { text: lines.join('\n'), json: { leases, sync: report }, warnings: skippedWarnings(report) };
  }
  return { text: lines.join('\n'), json: { leases } };
}
