import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';

export interface SyncCommandOptions extends GlobalOptions {
  remote?: string;
  branch?: string;
}

/** Brings the remote's board in and this board out (docs/decisions.md, "Several machines: the board branch"). */
export async function sync(options: SyncCommandOptions): Promise<CommandOutput> {
  const { syncBoard } = await import('@dotasks/core');
  const store = openStore(options);
  const report = await syncBoard(store, { remote: options.remote, branch: options.branch });
  const lines: string[] = [];
  for (const c of report.incoming) lines.push(`in   #${c.id} ${c.what}`);
  for (const c of report.outgoing) lines.push(`out  #${c.id} ${c.what}`);
  for (const r of report.renumbered) lines.push(`moved #${r.from} → #${r.to}: the remote had given #${r.from} to another task`);
  for (const w of report.withdrawn) lines.push(`withdrawn: #${w.id} of ${w.owner}, claimed on the remote by ${w.winner || 'someone else'} first`);
  for (const r of report.reaped) lines.push(`reaped #${r.id} of ${r.owner}: its lease on ${r.machine} ran out at ${r.expiredAt}`);
  for (const c of report.conflicts)
    lines.push(`both changed #${c.id} ${c.field}: kept the remote's ${JSON.stringify(c.theirs)} over ${JSON.stringify(c.ours)}`);
  const where = `${report.remote}/${report.branch}`;
  lines.push(
    report.incoming.length + report.outgoing.length === 0
      ? `up to date with ${where}`
      : `synced with ${where}${report.head ? ` at ${report.head.slice(0, 10)}` : ''} (${report.incoming.length} in, ${report.outgoing.length} out)`,
  );
  return { text: lines.join('\n'), json: report, warnings: report.warnings.map((w) => `tasks: ${w}`) };
}
