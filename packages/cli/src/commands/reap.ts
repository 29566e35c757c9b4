import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';

export interface ReapOptions extends GlobalOptions {
  dryRun?: boolean;
}

/** Releases tasks whose lease expired or whose process is gone. */
export async function reap(options: ReapOptions): Promise<CommandOutput> {
  const store = openStore(options);
  const reaped = await store.reap({ actor: actingOwner(options), dryRun: options.dryRun });
  const verb = options.dryRun ? 'would release' : 'released';
  const text = reaped.length
    ? reaped.map((r) => `${verb} #${r.task} (owner ${r.owner}: ${r.reason === 'expired' ? 'lease expired' : `process ${r.lease.pid} is gone`})`).join('\n')
    : 'nothing to reap';
  return { text, json: { dryRun: !!options.dryRun, reaped: reaped.map(({ task, owner, reason }) => ({ task, owner, reason })) } };
}
