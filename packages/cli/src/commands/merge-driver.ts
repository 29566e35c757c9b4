import { clashBookOf, locateGit, runMergeDriver, type ClashBook, type MergeConflict } from '@dotasks/core/internal';
import type { CommandOutput, GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks merge-driver` takes, as declared in the command table. */
export interface MergeDriverOptions extends CommandArgs<'merge-driver'>, GlobalOptions {}

function value(v: unknown): string {
  return v === undefined ? '(absent)' : JSON.stringify(v);
}

function describe(path: string, c: MergeConflict): string {
  return `${path}: both sides changed "${c.field}" differently: ours ${value(c.ours)}, theirs ${value(c.theirs)} (was ${value(c.base)})`;
}

/**
 * git's merge driver for task files (`merge.dotasks.driver = tasks merge-driver
 * %O %A %B %P`): writes the merge into %A; exits 1 on a conflict so git marks
 * the file conflicted, and says on stderr what to resolve.
 */
export async function mergeDriver(options: MergeDriverOptions): Promise<CommandOutput> {
  const path = options.path ?? options.ours;
  const result = runMergeDriver(options.base, options.ours, options.theirs, path, clashBook());
  const warnings: string[] = [];
  if (result.fallback) warnings.push(`tasks merge-driver: ${path}: ${result.fallback}`);
  for (const note of result.notes) warnings.push(`tasks merge-driver: ${path}: ${note}`);
  if (result.conflicts.length && !result.fallback) {
    for (const c of result.conflicts) warnings.push(`tasks merge-driver: ${describe(path, c)}`);
    warnings.push(
      `tasks merge-driver: ${path}: kept both values between <<<<<<< ours and >>>>>>> theirs; keep one, delete the marker lines, then 'git add ${path}' (and run 'tasks doctor')`,
    );
  }
  return {
    // Values are quoted as JSON, paths come from git: still, nothing raw reaches the terminal.
    json: {
      path,
      kind: result.kind,
      clean: result.conflicts.length === 0,
      conflicts: result.conflicts,
      ...(result.fallback ? { fallback: result.fallback } : {}),
    },
    warnings: warnings.map(printable),
    exitCode: result.conflicts.length ? 1 : 0,
  };
}

/** The id clashes of the git operation this driver runs in, kept in its git dir (git runs drivers at the top of the worktree). */
function clashBook(): ClashBook | undefined {
  const gitDir = locateGit(process.cwd())?.gitDir;
  return gitDir ? clashBookOf(gitDir) : undefined;
}
