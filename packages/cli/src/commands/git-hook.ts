import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import type { CommandOutput, GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks git-hook` takes, as declared in the command table. */
export interface GitHookOptions extends CommandArgs<'git-hook'>, GlobalOptions {}

/**
 * The hooks `tasks init --git` installs (docs/protocol.md, "Ids across
 * branches"): when the merge driver had to set a task aside because both
 * sides created one under its id, brings it back under a free id once git is
 * done, and amends the commit git just made. A hook never fails git: it
 * says what it could not do, and `tasks doctor --fix` does it later.
 */
export async function gitHook(options: GitHookOptions): Promise<CommandOutput> {
  if (options.hook === 'pre-commit') return scopeCheck(options);
  // The amend below runs git's hooks again: that one has nothing left to do.
  if (process.env.DOTASKS_HOOK) return {};
  const { findBoard, locateGit, readClashes, reconcileBranches, TaskStore } = await import('@dotasks/core/internal');
  const cwd = options.cwd ?? process.cwd();
  const gitDir = locateGit(cwd)?.gitDir;
  if (!gitDir || !readClashes(gitDir)) return {};
  let store;
  try {
    store = new TaskStore(findBoard({ dir: options.dir, cwd }));
  } catch {
    return {};
  }
  const args = options.args ?? [];
  const mode = hookMode(options.hook, args, gitDir);
  if (!mode) return {};
  try {
    const report = await reconcileBranches(store, cwd, { ...mode, amend: true });
    const lines = report.renumbered.map(
      (r) =>
        `tasks: both sides had a #${r.from}: ${JSON.stringify(r.subject)} is #${r.to} now, with the edges and mentions of its side${r.branch ? ` (branch ${r.branch.to})` : ''}`,
    );
    for (const c of report.conflicts)
      lines.push(`tasks: #${c.id}: both sides changed ${c.fields.join(', ')} differently; settle it in the file (tasks doctor)`);
    return { warnings: lines.map(printable) };
  } catch (error) {
    return { warnings: [printable(`tasks: could not settle the ids both sides handed out (${(error as Error).message}); run 'tasks doctor --fix'`)] };
  }
}

/** What a hook's call says about the operation git just finished. */
function hookMode(hook: string, args: string[], gitDir: string): { mode: 'merged' | 'cherry-pick' | 'rebase'; committed?: boolean; onto?: string } | undefined {
  if (hook === 'post-merge') return args[0] === '1' ? undefined : { mode: 'merged' }; // a squash merge made no commit
  if (hook === 'post-commit') {
    let picking = false;
    try {
      picking = readFileSync(`${gitDir}/CHERRY_PICK_HEAD`, 'utf8').trim() !== '';
    } catch {
      picking = false;
    }
    if (picking) return { mode: 'cherry-pick', committed: true };
    // A commit that concludes a merge git stopped (a conflict elsewhere): HEAD has two parents. Any other commit: nothing to do.
    return spawnSync('git', ['rev-parse', '--verify', '--quiet', 'HEAD^2'], { stdio: 'ignore' }).status === 0 ? { mode: 'merged' } : undefined;
  }
  if (hook === 'post-rewrite' && args[0] === 'rebase') {
    // stdin: `<old> <new>` per rewritten commit; the first new one's parent is what the branch was rebased onto.
    const first = readFileSync(0, 'utf8').split('\n')[0]?.split(' ')[1];
    return first ? { mode: 'rebase', onto: `${first}^` } : undefined;
  }
  return undefined;
}

/** The variable that lets one commit past the scope check (as `git commit --no-verify` does for every hook). */
export const ALLOW_OUT_OF_SCOPE = 'DOTASKS_ALLOW_OUT_OF_SCOPE';

/**
 * pre-commit in a task's worktree: refuses a commit that touches files
 * outside the task's file scope, naming them and the override. A worktree
 * that is no open task's, a task without paths, and anything it cannot read
 * let the commit through: the hook guards a scope, it never stands between a
 * person and git.
 */
async function scopeCheck(options: GitHookOptions): Promise<CommandOutput> {
  if (process.env[ALLOW_OUT_OF_SCOPE] === '1') return {};
  const { findBoard, inScope, isClosed, locateGit, TaskStore } = await import('@dotasks/core/internal');
  const cwd = options.cwd ?? process.cwd();
  const top = locateGit(cwd)?.worktreeRoot;
  if (!top) return {};
  let store;
  try {
    store = new TaskStore(findBoard({ dir: options.dir, cwd }));
  } catch {
    return {};
  }
  const here = realpathOr(top);
  const task = store.loadBoard().tasks.find((t) => !isClosed(t.status) && typeof t.metadata?.worktree === 'string' && realpathOr(t.metadata.worktree) === here);
  if (!task?.paths?.length) return {};
  const staged = spawnSync('git', ['diff', '--cached', '--name-only', '--no-renames', '-z'], { cwd: top, encoding: 'utf8' });
  if (staged.status !== 0) return {};
  const outside = staged.stdout.split('\0').filter((file) => file !== '' && !file.startsWith('.tasks/') && !inScope(file, task.paths!));
  if (outside.length === 0) return {};
  const shown = outside.slice(0, 10).join(', ') + (outside.length > 10 ? ` and ${outside.length - 10} more` : '');
  return {
    warnings: [
      printable(
        `tasks: this commit touches ${outside.length === 1 ? 'a file' : `${outside.length} files`} outside the scope of task #${task.id} (${task.subject}: ${task.paths.join(', ')}): ${shown}. ` +
          `Commit only the task's files (git restore --staged FILE), widen its scope first (tasks update ${task.id} --path GLOB), ` +
          `or commit anyway: ${ALLOW_OUT_OF_SCOPE}=1 git commit … (git commit --no-verify skips every hook).`,
      ),
    ],
    exitCode: 1,
  };
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
