import { TasksError, listTaskWorktrees, parseTaskId, removeTaskWorktree } from '@dotasks/core';
import { describeBranchStatus } from '@dotasks/core/internal';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks worktree` takes, as declared in the command table. */
export interface WorktreeOptions extends CommandArgs<'worktree'>, GlobalOptions {}

/**
 * `tasks worktree list`: every task that records a worktree, with its branch,
 * status, whether it has uncommitted changes and where its branch stands
 * against the merge target (ahead, behind, clean or conflicts, merged). `tasks worktree remove ID`:
 * removes it (the branch stays), refusing uncommitted changes without --force.
 */
export async function worktree(options: WorktreeOptions): Promise<CommandOutput> {
  const store = openStore(options);
  if (options.action === 'list') {
    const list = listTaskWorktrees(store);
    const text = list.length
      ? list
          .map((w) => {
            const state = !w.exists ? 'missing' : w.dirty ? 'uncommitted changes' : 'clean';
            const against = w.branchStatus ? `  → ${w.branchStatus.target}: ${describeBranchStatus(w.branchStatus)}` : '';
            return printable(`#${w.task} ${w.status}${w.owner ? ` (${w.owner})` : ''}  ${w.branch}  ${w.path}  [${state}]${against}`);
          })
          .join('\n')
      : "no task worktrees (make one with 'tasks claim ID --worktree')";
    return { text, json: { worktrees: list } };
  }
  if (options.action === 'remove') {
    if (options.id === undefined) throw new TasksError('E_USAGE', 'worktree remove needs a task id');
    const id = parseTaskId(options.id);
    const result = await removeTaskWorktree(store, id, { force: options.force, actor: actingOwner(options) });
    return {
      text: result.removed
        ? `removed the worktree of #${id} (${result.path}); branch ${result.branch || '(unknown)'} keeps its commits`
        : `the worktree of #${id} (${result.path}) was already gone; forgot it`,
      json: { task: id, path: result.path, branch: result.branch, removed: result.removed },
    };
  }
  throw new TasksError('E_USAGE', `unknown worktree action '${options.action}'; use list or remove`);
}
