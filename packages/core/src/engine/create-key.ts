// The key of a retry-safe create (CreateTaskInput.key): kept in the task's
// metadata, and looked for on the board before a create with one makes a task.
import { TasksError } from '../errors.js';
import type { Task } from '../format/format.js';
import type { BoardFiles } from './board-files.js';
import { loadBoardSnapshot } from './board-index.js';

/** The metadata key a create's `key` is kept under. */
export const CREATE_KEY = 'createKey';
const MAX_CREATE_KEY = 200;

/** A create's key as given, else E_INVALID. */
export function checkCreateKey(key: unknown): string {
  if (typeof key !== 'string' || key.trim() === '' || key.length > MAX_CREATE_KEY || /[\u0000-\u001f\u007f]/.test(key))
    throw new TasksError('E_INVALID', `a create key is one line of 1 to ${MAX_CREATE_KEY} characters, e.g. a UUID the client made for this create`);
  return key;
}

/** The task a create with `key` made before, if any (deleted ones too: the create was applied). */
export function taskWithCreateKey(board: BoardFiles, key: string): Task | undefined {
  return loadBoardSnapshot(board.dir).tasks.find((task) => task.metadata?.[CREATE_KEY] === key);
}
