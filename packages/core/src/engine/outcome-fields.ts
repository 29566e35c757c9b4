/**
 * The rules of a task's two outcome fields (docs/protocol.md, "One task, one
 * file"): `verify`, the check that must pass before it completes, and
 * `result`, what the work came to, for the tasks that wait for it. Shared by
 * create, update, completion and import, so each refuses what the others do.
 */
import { TasksError } from '../errors.js';
import type { Task } from '../format/format.js';

/** The longest verify command accepted, in characters: one line to run, not a script (put that in a file). */
export const MAX_VERIFY_CHARS = 1000;
/** The longest result accepted, in characters: a short summary for the next agent, not a report. */
export const MAX_RESULT_CHARS = 2000;

/** A verify command: one non-empty line of at most MAX_VERIFY_CHARS characters, trimmed. */
export function checkVerifyCommand(command: unknown): string {
  if (typeof command !== 'string' || command.trim() === '')
    throw new TasksError('E_INVALID', 'a verify command is a shell command that exits 0 when the work is done, e.g. "npm test"');
  const text = command.trim();
  if (/[\r\n\u0000]/.test(text)) throw new TasksError('E_INVALID', 'a verify command is one line; put a longer check in a script and name the script');
  if (text.length > MAX_VERIFY_CHARS)
    throw new TasksError('E_INVALID', `a verify command is at most ${MAX_VERIFY_CHARS} characters (this one has ${text.length}); put it in a script`, {
      length: text.length,
    });
  return text;
}

/** Sets a task's verify command, or (null, "") removes it so the board's applies again. */
export function applyVerify(task: Task, command: string | null | undefined): void {
  if (command === undefined) return;
  if (command === null || command.trim() === '') delete task.verify;
  else task.verify = checkVerifyCommand(command);
}

/** A result as given on the command line or to the agents' tool: non-empty text of at most MAX_RESULT_CHARS characters, trimmed. */
export function checkResult(result: unknown): string {
  if (typeof result !== 'string' || result.trim() === '')
    throw new TasksError('E_INVALID', 'a result needs text: what the work came to, for the tasks that wait for it');
  const text = result.trim();
  if (text.length > MAX_RESULT_CHARS)
    throw new TasksError(
      'E_INVALID',
      `a result is a short summary of at most ${MAX_RESULT_CHARS} characters (this one has ${text.length}); put the rest in a note or a file`,
      { length: text.length },
    );
  return text;
}

/**
 * A result a command wrote into `$TASK_RESULT_FILE`: trimmed and cut to
 * MAX_RESULT_CHARS (the work is done; a long summary must not undo it);
 * undefined when there is nothing in it.
 */
export function clipResult(text: string): string | undefined {
  const trimmed = text.replace(/\u0000/g, '').trim();
  if (trimmed === '') return undefined;
  if (trimmed.length <= MAX_RESULT_CHARS) return trimmed;
  let end = MAX_RESULT_CHARS - 1;
  // Not between the two halves of a surrogate pair: a lone half is no text.
  if (/[\ud800-\udbff]/.test(trimmed[end - 1])) end--;
  return `${trimmed.slice(0, end).trimEnd()}…`;
}
