/**
 * The edit guard: a Claude Code PreToolUse hook that holds an agent's edits
 * to the file scope of the task it is working on. A scope kept only in the
 * prompt is forgotten; `claim --next` keeps tasks on the same files apart,
 * and this keeps the agent holding one of them inside its files while it
 * edits, with a reason it can act on (stay inside, widen the scope on
 * purpose, or leave the change to a task of its own). It also keeps hand
 * edits out of the board's own files, which only the tool may write.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { inScope, locateGit, type Task, type TaskStore } from '@dotasks/core/internal';
import { shellQuote, tasksInProgress, type NudgeCommand } from './guard.js';

/** The file each editing tool of Claude Code writes, by tool name (its documented `tool_input`). */
export const EDIT_TOOL_FILE_FIELDS: Readonly<Record<string, string>> = {
  Edit: 'file_path',
  MultiEdit: 'file_path',
  Write: 'file_path',
  NotebookEdit: 'notebook_path',
};

/** A Claude Code PreToolUse payload (the fields the guard reads). */
export interface EditHookPayload {
  cwd?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
}

/** The PreToolUse answer that refuses the call, its reason shown to the model. */
export interface EditHookDecision {
  hookSpecificOutput: { hookEventName: 'PreToolUse'; permissionDecision: 'deny'; permissionDecisionReason: string };
}

const deny = (reason: string): EditHookDecision => ({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason },
});

/** The path with its links resolved, where it exists (a payload may name /tmp where the board is under /private/tmp). */
const realpathOr = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

const inside = (file: string, dir: string): boolean => {
  const rel = relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * Decides a PreToolUse hook for an editing tool: refused when the file is one
 * of the board's own, or when `owner` has tasks in progress that all declare
 * a scope and the file (relative to the top of its worktree) is in none of
 * them; undefined lets the call through. A task without paths restricts
 * nothing, an owner with no task in progress is not held, and a file outside
 * the board's repository (in no repository, or in another one) is not the
 * board's business; one in a linked worktree of it is, relative to that
 * worktree.
 */
export function decideEditHook(store: TaskStore, owner: string, payload: EditHookPayload, how: NudgeCommand = { owner }): EditHookDecision | undefined {
  const field = payload.tool_name === undefined ? undefined : EDIT_TOOL_FILE_FIELDS[payload.tool_name];
  const target = field === undefined ? undefined : payload.tool_input?.[field];
  if (typeof target !== 'string' || target === '') return undefined;
  const file = resolve(payload.cwd ?? process.cwd(), target);
  if (inside(file, store.dir))
    return deny(
      `${target} is a file of the task board: change tasks through the todo tool (or the tasks CLI), which writes both sides of each edge under the board's locks. Hand edits of .tasks/ are for people, with tasks doctor to check them.`,
    );
  const held = tasksInProgress(store, owner);
  if (held.length === 0 || held.some((task) => !task.paths?.length)) return undefined;
  const at = locateGit(file);
  const top = at?.worktreeRoot;
  if (at === undefined || top === undefined || !inside(file, top)) return undefined;
  // A file of another repository (a dependency's checkout, a second project) is outside every scope's reach, as one outside any is.
  const home = locateGit(store.dir);
  if (home !== undefined && realpathOr(home.mainRoot) !== realpathOr(at.mainRoot)) return undefined;
  const path = relative(top, file).split(sep).join('/');
  if (held.some((task) => inScope(path, task.paths!))) return undefined;
  return deny(outOfScopeReason(path, held, how));
}

function outOfScopeReason(path: string, held: Task[], how: NudgeCommand): string {
  const tasks = (how.tasks ?? ['tasks']).map(shellQuote).join(' ');
  const owner = how.owner ? ` --owner ${shellQuote(how.owner)}` : '';
  const first = held[0];
  const scopes = held.map((task) => `#${task.id} (${task.subject}) is scoped to ${task.paths!.join(', ')}`).join('; ');
  return (
    `${path} is outside the file scope of the task you are working on: ${scopes}. ` +
    `Edit only files in that scope. If the task really needs this file, widen its scope first: \`${tasks} update ${first.id} --path ${shellQuote(path)}${owner}\` ` +
    `(or call todo with action "update", task_id ${first.id}, paths [the old globs and "${path}"]); ` +
    `if it is other work, create a task for it (todo create) and leave it for later.`
  );
}
