import { TasksError, formatCycle } from '@dotasks/core/internal';
import type { TodoAction } from './schema.js';
import { InputError } from './todo-input.js';
import type { TodoResult } from './todo-result.js';

const MUTATING = new Set<TodoAction>(['create', 'update', 'clear', 'write', 'claim', 'release', 'approve', 'reject']);

/** Hints for the refusals the core reports, by code. */
export function hintFor(error: TasksError, owner: string): string {
  const d = error.details;
  const ids = (list: unknown) => (Array.isArray(list) ? list.map((n) => `#${n}`).join(', ') : '');
  switch (error.code) {
    case 'E_NOT_FOUND':
      return 'task_id must name a task on the board (see the board below, or action "list"); create it first if it does not exist.';
    case 'E_CYCLE':
      if (d.kind === 'parent')
        return `That parent would make a task its own ancestor (${formatCycle(d.cycle as number[])}), and none of them could ever complete. Choose another parent, or leave it out.`;
      return `Adding that dependency would close the loop ${formatCycle(d.cycle as number[])}, and a loop can never finish. Leave this edge out, or remove an edge of the loop first (update with remove_blocked_by).`;
    case 'E_BLOCKED':
      if (Array.isArray(d.children))
        return `A parent completes after its children: finish ${ids(d.children)} first (or claim one of them), or move a child elsewhere with update and parent "none".`;
      return `Finish ${ids(d.blockedBy) || 'its blockers'} first: completing them unblocks this task. If a dependency no longer applies, remove it with remove_blocked_by.`;
    case 'E_CLAIMED':
      return `Another owner holds it${d.owner ? ` (${String(d.owner)})` : ''}. Leave it to them and take another task: action "claim" without task_id takes the next ready one.`;
    case 'E_OWNER_BUSY':
      return `You (${owner}) already have #${String(d.task)} in progress. Complete it (update, status "completed") or release it (action "release") before starting another.`;
    case 'E_NOT_OWNER':
      return `That task belongs to ${String(d.owner ?? 'another owner')}; only they change its status. Pick a task that is yours or ready.`;
    case 'E_NOT_PENDING':
      return 'Only pending tasks can be claimed; pick a ready task from the board.';
    case 'E_NOTHING_READY':
      return 'Every open task is blocked or claimed. Complete what you hold to unblock more, or wait for others.';
    case 'E_TRANSITION':
      if (d.review === true)
        return 'approve and reject act on a task waiting for review ([?] on the board); a task in review is approved or rejected before anything else changes it.';
      return 'Completed and deleted tasks are final; create a new task for more work.';
    case 'E_NO_BOARD':
      return "There is no task board here: run 'tasks init' in the repository first.";
    case 'E_CORRUPT':
      return "A task file is damaged; a person must fix it by hand or run 'tasks doctor'. Other tasks still work.";
    case 'E_LOCKED':
    case 'E_COMPROMISED':
      return 'Another process was writing the same tasks; call again.';
    case 'E_VERIFY':
      return d.interrupted
        ? 'The check was stopped before it ended; nothing was written. Set status "completed" again to run it again.'
        : `The task's check before done (${String(d.command)}) did not pass, so the task was not completed; the end of its output is in "tail" and in the task's notes. Fix the work, then set status "completed" again.`;
    case 'E_OWN_REVIEW':
      return 'Review is for someone other than the owner: leave your own task to another agent or person, and take your next task meanwhile.';
    case 'E_CONFIRM':
      return 'clear removes every task.';
    default:
      return 'Check the input against the tool schema and call again.';
  }
}

/**
 * A refused call as a result: the error's code, message, hint and details,
 * and (when it helps the model fix a wrong id or see who holds what) the
 * board, if there is one.
 */
export function failureResult(action: string | undefined, error: unknown, owner: string, board: () => string): TodoResult {
  let result: TodoResult;
  if (error instanceof TasksError) {
    const code = error.code === 'E_USAGE' ? 'E_INVALID' : error.code;
    const hint = error instanceof InputError ? error.hint : hintFor(error, owner);
    const { reason: _reason, ...details } = error.details;
    result = { ok: false, action, error: { code, message: error.message, hint, ...details } };
  } else {
    const message = error instanceof Error ? error.message : String(error);
    result = {
      ok: false,
      action,
      error: {
        code: 'E_INTERNAL',
        message: `unexpected error: ${message}`,
        hint: 'This is a bug in the tool; report it. The board was not changed by this call unless it says so.',
      },
    };
  }
  if (action === undefined || MUTATING.has(action as TodoAction) || action === 'get') {
    try {
      result.board = board();
    } catch {
      // no board to show
    }
  }
  return result;
}
