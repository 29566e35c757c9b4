// The checks `tasks merge` runs on the merged result before the target
// moves (docs/protocol.md, "The way back to main"): the task's check before
// done (docs/protocol.md, "Checks before done": its own verify, else the
// board's), run by the same runner (its process group, its timeout), only
// in the scratch checkout of the merged commit instead of the task's
// worktree. No board lock is held: the merge slot is.
import { TasksError } from '../errors.js';
import type { Task } from '../format/format.js';
import type { BoardFiles } from '../engine/board-files.js';
import { checkEnv, checkOf, runTaskCheck } from '../engine/verify.js';
import type { CheckRun } from '../runtime/verify-run.js';

/** The check of `task` a merge runs, if it has one. */
export function mergeCheckCommand(board: BoardFiles, task: Task): string | undefined {
  return checkOf(board, task)?.command;
}

/** Runs the check of `task` in `cwd` (the merged result's checkout); undefined when it has none. Never throws for the check's own failure. */
export async function runChecks(board: BoardFiles, task: Task, cwd: string, owner: string | undefined): Promise<CheckRun | undefined> {
  const spec = checkOf(board, task);
  if (!spec) return undefined;
  return runTaskCheck(board, { ...spec, cwd }, { env: { ...checkEnv(board, task, process.env, owner), TASK_SUBJECT: task.subject } });
}

/** The refusal of a merge whose check failed: the target as it was. */
export function checkFailed(check: CheckRun, id: number, branch: string, target: string): TasksError {
  const last = check.tail.trim().split('\n').filter(Boolean).at(-1);
  const how = check.timedOut ? 'timed out' : check.exitCode !== null ? `exit ${check.exitCode}` : `by ${check.signal ?? 'a signal'}`;
  return new TasksError(
    'E_VERIFY',
    `the check ${JSON.stringify(check.command)} failed on #${id} merged into ${target} (${how})${last ? `: ${last}` : ''}; ${target} was left as it was: fix it on ${branch}, then 'tasks merge ${id}' again`,
    { id, command: check.command, exitCode: check.exitCode, tail: check.tail },
  );
}
