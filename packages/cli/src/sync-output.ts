import type { SyncReport, TaskStore } from '@dotasks/core';
import type { GlobalOptions } from './context.js';
import { printable } from './core-read.js';

/**
 * The board a command that syncs works on: the one found as usual or, in a
 * fresh clone whose remote holds a board branch, one set up from it
 * (docs/protocol.md, "Several machines"); `notes` says so.
 */
export async function openStoreToSync(options: GlobalOptions & { remote?: string; branch?: string }): Promise<{ store: TaskStore; notes: string[] }> {
  const { openBoardToSync } = await import('@dotasks/core/internal');
  const { store, note } = openBoardToSync({ dir: options.dir, cwd: options.cwd, remote: options.remote, branch: options.branch });
  return { store, notes: note ? [note] : [] };
}

/** What a sync did, a line each, for people (`tasks sync` and the commands that sync). */
export function syncLines(report: SyncReport): string[] {
  const lines: string[] = [];
  for (const c of report.incoming) lines.push(`in   #${c.id} ${c.what}`);
  for (const c of report.outgoing) lines.push(`out  #${c.id} ${c.what}`);
  for (const r of report.renumbered)
    lines.push(
      `moved #${r.from} → #${r.to}: the remote had given #${r.from} to another task${r.owner ? ` (its claim by ${r.owner} moved with it)` : ''}${r.branch ? `; branch ${r.branch.from} is ${r.branch.to} now` : ''}`,
    );
  for (const w of report.withdrawn)
    lines.push(
      `withdrawn: #${w.id} of ${w.owner}: ${w.winner ? `claimed on the remote by ${w.winner} first` : 'released on the remote (its lease ran out there)'}`,
    );
  for (const r of report.reaped)
    lines.push(`reaped #${r.id} of ${r.owner}: its claim on ${r.machine} was not renewed for a whole lease (seen unchanged since ${r.seenSince})`);
  const kept = report.resolved === 'republished' ? "this board's" : "the remote's";
  for (const c of report.conflicts)
    lines.push(
      `both changed #${c.id} ${c.field}: kept ${kept} ${JSON.stringify(report.resolved === 'republished' ? c.ours : c.theirs)} over ${JSON.stringify(report.resolved === 'republished' ? c.theirs : c.ours)}`,
    );
  for (const n of report.notes) lines.push(n);
  return lines.map(printable);
}

/** The entries a sync skipped, as warnings (each makes `tasks sync` exit 1; everything else was synced). */
export function skippedWarnings(report: SyncReport): string[] {
  return report.skipped.map((s) => `tasks: skipped ${printable(s.entry)}: ${printable(s.problem)}`);
}
