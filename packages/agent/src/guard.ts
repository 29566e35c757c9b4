import { inReview, markNudged, type Task, type TaskStore } from '@dotasks/core/internal';

/**
 * The stop guard, a hook at the end of an agent's turn that keeps it from
 * quitting early: when an agent is about to stop with a task still in
 * progress, remind it once to complete or release it.
 */

/** The owner's tasks that are still in progress, ascending id; not those waiting for review (their work is finished). */
export function tasksInProgress(store: TaskStore, owner: string): Task[] {
  return store.loadOpenWork().tasks.filter((t) => t.status === 'in_progress' && t.owner === owner && !inReview(t));
}

/** How the agent's own shell runs dotasks, for the commands a nudge gives. */
export interface NudgeCommand {
  /** The words that run `tasks` in the agent's shell (default `tasks`; e.g. `npx --no-install tasks`), quoted as needed. */
  tasks?: string[];
  /** The owner the task is held by, passed with `--owner` (the agent's shell acts as the user). */
  owner?: string;
}

/** Quotes `text` for a POSIX shell when it needs it. */
export function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The reminder for one task: what is still open and the exact commands that settle it, as the agent's shell runs them. */
export function nudgeFor(task: Task, how: NudgeCommand = {}): string {
  const tasks = (how.tasks ?? ['tasks']).map(shellQuote).join(' ');
  const owner = how.owner ? ` --owner ${shellQuote(how.owner)}` : '';
  return (
    `Task #${task.id} (${task.subject}) is still marked in_progress. ` +
    `If you have completed it, mark it done before concluding: run \`${tasks} done ${task.id}${owner}\` ` +
    `(or call todo with action "update", task_id ${task.id}, status "completed"). ` +
    `If you are not going to finish it now, give it back: \`${tasks} release ${task.id}${owner}\`.`
  );
}

/** A Claude Code Stop-hook payload (the fields the guard reads). */
export interface StopHookPayload {
  session_id?: string;
  stop_hook_active?: boolean;
  cwd?: string;
  hook_event_name?: string;
}

/** The Stop hook's answer that keeps the agent working. */
export interface StopHookDecision {
  decision: 'block';
  reason: string;
}

/**
 * Decides a Claude Code Stop hook: blocks (with the nudge as the reason) for
 * the first in-progress task of `owner` not yet nudged in this session;
 * undefined lets the agent stop. Never blocks when `stop_hook_active` is set
 * (the agent is already continuing because of a stop hook), so it can never
 * trap an agent in a loop.
 */
export async function decideStopHook(
  store: TaskStore,
  owner: string,
  payload: StopHookPayload,
  how: NudgeCommand = { owner },
): Promise<StopHookDecision | undefined> {
  if (payload.stop_hook_active === true) return undefined;
  const session = typeof payload.session_id === 'string' && payload.session_id !== '' ? payload.session_id : 'no-session';
  for (const task of tasksInProgress(store, owner)) {
    if (await markNudged(store, session, task.id)) return { decision: 'block', reason: nudgeFor(task, how) };
  }
  return undefined;
}
