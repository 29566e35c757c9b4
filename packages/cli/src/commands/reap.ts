import { TasksError, printable } from '../core-read.js';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { openStoreToSync, skippedWarnings, syncLines } from '../sync-output.js';

/** What `tasks reap` takes, as declared in the command table. */
export interface ReapOptions extends CommandArgs<'reap'>, GlobalOptions {}

/**
 * Releases tasks whose lease expired or whose process is gone; with `--sync`
 * also, on the shared board, the claims of other machines that were not
 * renewed for a whole lease as this clone saw them (docs/protocol.md,
 * "Leases across machines").
 */
export async function reap(options: ReapOptions): Promise<CommandOutput> {
  if (options.sync && options.dryRun) throw new TasksError('E_USAGE', '--dry-run does not go with --sync: a sync releases what ran out as it merges');
  const { store, notes } = options.sync ? await openStoreToSync(options) : { store: openStore(options), notes: [] };
  const sync = options.sync ? (await import('@dotasks/core')).syncBoard : undefined;
  const before = sync ? await sync(store) : undefined;
  const reaped = await store.reap({ actor: actingOwner(options), dryRun: options.dryRun });
  // What was released here goes out at once, so no other machine goes on seeing it claimed.
  const after = sync && reaped.length ? await sync(store) : undefined;
  const verb = options.dryRun ? 'would release' : 'released';
  const lines = [...notes, ...(before ? syncLines(before).filter((l) => !/^(in|out) /.test(l)) : [])];
  for (const r of reaped)
    lines.push(`${verb} #${r.task} (owner ${printable(r.owner)}: ${r.reason === 'expired' ? 'lease expired' : `process ${r.lease.pid} is gone`})`);
  const remote = before?.reaped ?? [];
  if (reaped.length === 0 && remote.length === 0) lines.push('nothing to reap');
  const report = after ?? before;
  return {
    text: lines.join('\n'),
    json: {
      dryRun: !!options.dryRun,
      reaped: reaped.map(({ task, owner, reason }) => ({ task, owner, reason })),
      ...(before ? { remote: remote.map((r) => ({ task: r.id, owner: r.owner, machine: r.machine, seenSince: r.seenSince })), sync: report } : {}),
    },
    warnings: report ? skippedWarnings(report) : [],
  };
}
