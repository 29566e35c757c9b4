import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../printable.js';

/** What `tasks reap` takes, as declared in the command table. */
export interface ReapOptions extends CommandArgs<'reap'>, GlobalOptions {}

/** Releases tasks whose lease expired or whose process is gone. */
export async function reap(options: ReapOptions): Promise<CommandOutput> {
  const store = openStore(options);
  const reaped = await store.reap({ actor: actingOwner(options), dryRun: options.dryRun });
  const verb = options.dryRun ? 'would release' : 'released';
  const text = reaped.length
    ? reaped
        .map((r) => `${verb} #${r.task} (owner ${printable(r.owner)}: ${r.reason === 'expired' ? 'lease expired' : `process ${r.lease.pid} is gone`})`)
        .join('\n')
    : 'nothing to reap';
  return { text, json: { dryRun: !!options.dryRun, reaped: reaped.map(({ task, owner, reason }) => ({ task, owner, reason })) } };
}
