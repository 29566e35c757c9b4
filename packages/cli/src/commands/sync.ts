import { TasksError } from '../core-read.js';
import type { CommandOutput, GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { openStoreToSync, skippedWarnings, syncLines } from '../sync-output.js';

/** What `tasks sync` takes, as declared in the command table. */
export interface SyncCommandOptions extends CommandArgs<'sync'>, GlobalOptions {}

/**
 * Brings the remote's board in and this board out (docs/protocol.md,
 * "Several machines"); with `--adopt` / `--retire` moves the board between
 * the code branch and its board branch, with `--republish` /
 * `--accept-rewrite` goes on over a board branch a sync refused.
 */
export async function sync(options: SyncCommandOptions): Promise<CommandOutput> {
  const modes = (['adopt', 'retire', 'republish', 'acceptRewrite'] as const).filter((m) => options[m]);
  if (modes.length > 1) throw new TasksError('E_USAGE', `--${modes.map(flag).join(' and --')} do not go together`);
  const { syncBoard, adoptBoard, retireBoard } = await import('@dotasks/core/internal');
  const { store, notes } = await openStoreToSync(options);
  const where = { remote: options.remote, branch: options.branch };
  let moved: { commit?: string; files: string[] } | undefined;
  let report;
  if (options.adopt) ({ report, ...moved } = await adoptBoard(store, where));
  else if (options.retire) ({ report, ...moved } = await retireBoard(store, where));
  else report = await syncBoard(store, { ...where, republish: options.republish, acceptRewrite: options.acceptRewrite });
  const lines = [...notes, ...syncLines(report)];
  const at = `${report.remote}/${report.branch}`;
  if (options.adopt)
    lines.push(
      moved?.commit
        ? `adopted: ${moved.files.length} board file(s) left the code branch in commit ${moved.commit.slice(0, 10)} (review it, then push it); the board lives on ${at}`
        : `nothing to adopt: no task file is committed on the code branch; the board lives on ${at}`,
    );
  if (options.retire)
    lines.push(`retired ${at}: the board is committed on the code branch again in commit ${moved!.commit!.slice(0, 10)} (review it, then push it)`);
  lines.push(
    report.incoming.length + report.outgoing.length === 0 && !report.resolved
      ? `up to date with ${at}`
      : `synced with ${at}${report.head ? ` at ${report.head.slice(0, 10)}` : ''} (${report.incoming.length} in, ${report.outgoing.length} out)`,
  );
  const warnings = [...report.warnings.map((w) => `tasks: ${w}`), ...skippedWarnings(report)];
  return {
    text: lines.join('\n'),
    json: { ...report, ...(moved ? { commit: moved.commit ?? null, files: moved.files } : {}) },
    warnings,
    ...(report.skipped.length ? { exitCode: 1 } : {}),
  };
}

function flag(mode: string): string {
  return mode === 'acceptRewrite' ? 'accept-rewrite' : mode;
}
