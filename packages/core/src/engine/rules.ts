import { TasksError } from '../errors.js';
import { scopeProblem, shortGlob } from '../scopes/glob-limits.js';
import {
  DEFAULT_PRIORITY,
  MAX_PRIORITY,
  MAX_TASK_FILE_BYTES,
  TASK_STATUSES,
  cloneJson,
  createRecord,
  normalizeLabels,
  serializeTask,
  setOwn,
  type Task,
  type TaskNote,
  type TaskStatus,
} from '../format/format.js';
import { MAX_NESTING_DEPTH, describeNesting, findDeepNesting } from '../format/json-nesting.js';

/**
 * The rules of a task's life (docs/protocol.md, "Status, edges and
 * readiness"), shared by every mutation: allowed status transitions, what a
 * subject may be, who may change a held task.
 */

/** The longest subject accepted, in characters: a one-line title, not a document. */
export const MAX_SUBJECT_CHARS = 500;

/** pending → in_progress → completed; pending → completed; in_progress → pending; anything → deleted. */
export function transitionAllowed(from: TaskStatus, to: TaskStatus): boolean {
  if (from === to || to === 'deleted') return true;
  if (from === 'pending') return to === 'in_progress' || to === 'completed';
  if (from === 'in_progress') return to === 'completed' || to === 'pending';
  return false;
}

/** Throws E_TRANSITION when `task` cannot go to `to`. */
export function checkTransition(task: Task, to: TaskStatus): void {
  if (transitionAllowed(task.status, to)) return;
  const hint =
    task.status === 'completed'
      ? '; a completed task stays completed, create a new task for more work'
      : task.status === 'deleted'
        ? '; a deleted task is a tombstone, create a new task instead'
        : '';
  throw new TasksError('E_TRANSITION', `task #${task.id} cannot go from ${task.status} to ${to}${hint}`, {
    id: task.id,
    from: task.status,
    to,
  });
}

/** A subject: a non-empty one-line title of at most MAX_SUBJECT_CHARS characters. */
export function checkSubject(subject: unknown): string {
  if (typeof subject !== 'string' || subject.trim() === '') throw new TasksError('E_INVALID', 'a task needs a subject: a non-empty one-line title');
  if (/[\r\n]/.test(subject)) throw new TasksError('E_INVALID', 'a subject is one line; put details in the description');
  if (subject.length > MAX_SUBJECT_CHARS)
    throw new TasksError(
      'E_INVALID',
      `a subject is a one-line title of at most ${MAX_SUBJECT_CHARS} characters (this one has ${subject.length}); put the rest in the description`,
      { length: subject.length },
    );
  return subject;
}

/** One of the four statuses, else E_INVALID. */
export function checkStatus(status: unknown): TaskStatus {
  if (typeof status !== 'string' || !(TASK_STATUSES as readonly string[]).includes(status))
    throw new TasksError('E_INVALID', `unknown status ${JSON.stringify(status)}; use one of ${TASK_STATUSES.join(', ')}`);
  return status as TaskStatus;
}

/**
 * A file scope as given: non-empty one-line globs, trimmed, each once, in
 * the order given, within the limits of glob-limits.ts (count, length,
 * brace expansion, wildcards; inside the repository). A glob past one is
 * refused with the reason.
 */
export function checkPaths(paths: unknown, options: { limits?: boolean } = {}): string[] {
  if (!Array.isArray(paths)) throw new TasksError('E_INVALID', 'paths must be a list of globs, e.g. ["packages/parser/**", "docs/parser.md"]');
  const out: string[] = [];
  for (const item of paths as unknown[]) {
    if (typeof item !== 'string' || item.trim() === '' || /[\r\n]/.test(item))
      throw new TasksError('E_INVALID', `not a path glob: ${JSON.stringify(item)}; give globs relative to the top of the repository, e.g. "src/parser/**"`);
    const glob = item.trim();
    if (!out.includes(glob)) out.push(glob);
  }
  // A glob to remove is not held to the limits: it is how a bad one leaves.
  const problem = options.limits === false ? undefined : scopeProblem(out);
  if (problem) throw new TasksError('E_INVALID', `the path glob ${JSON.stringify(shortGlob(problem.glob))} ${problem.reason}`, { glob: problem.glob });
  return out;
}

/**
 * Applies a path patch in place (replace, then remove, then add); an empty
 * scope removes the field. What is left must keep to the limits, so a bad
 * glob the file holds goes with the same update that adds a good one.
 */
export function applyPaths(task: Task, patch: { paths?: string[] | null; addPaths?: string[]; removePaths?: string[] }): void {
  if (patch.paths === undefined && !patch.addPaths?.length && !patch.removePaths?.length) return;
  let paths = patch.paths === undefined ? [...(task.paths ?? [])] : patch.paths === null ? [] : checkPaths(patch.paths);
  if (patch.removePaths?.length) {
    const removed = new Set(checkPaths(patch.removePaths, { limits: false }));
    paths = paths.filter((p) => !removed.has(p.trim()));
  }
  if (patch.addPaths?.length) paths = checkPaths([...paths, ...patch.addPaths]);
  if (paths.length) task.paths = paths;
  else delete task.paths;
}

/** Applies a metadata patch in place: a null (or undefined) value removes its key. */
export function applyMetadata(task: Task, patch: Record<string, unknown>): void {
  checkNesting(patch, 'metadata');
  const metadata = (task.metadata ? cloneJson(task.metadata) : createRecord()) as Record<string, unknown>;
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null || value === undefined) delete metadata[key];
    else setOwn(metadata, key, cloneJson(value));
  }
  task.metadata = metadata;
}

/** For workers: the task must still be in progress for `owner` (not reaped or taken meanwhile). */
export function assertHeldBy(task: Task, owner: string): void {
  if (task.status !== 'in_progress' || task.owner !== owner)
    throw new TasksError(
      'E_NOT_OWNER',
      `task #${task.id} is no longer in progress for ${owner} (now ${task.status}${task.owner ? `, owner ${task.owner}` : ''}); it was reaped or taken meanwhile`,
      { id: task.id, owner: task.owner, status: task.status },
    );
}

/** Removes `id` from `list` in place; true when it was there. */
export function removeId(list: number[], id: number): boolean {
  const i = list.indexOf(id);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

/** A priority: an integer from 0 (highest) to MAX_PRIORITY; null (the default) stands for none. */
export function checkPriority(priority: unknown): number | undefined {
  if (priority === null || priority === undefined) return undefined;
  if (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 0 || priority > MAX_PRIORITY)
    throw new TasksError(
      'E_INVALID',
      `a priority is an integer from 0 (highest) to ${MAX_PRIORITY} (default ${DEFAULT_PRIORITY}), got ${JSON.stringify(priority)}`,
      {
        priority,
      },
    );
  return priority === DEFAULT_PRIORITY ? undefined : priority;
}

/** Labels as given by people and agents: trimmed, non-empty, one line each; sorted unique. */
export function checkLabels(labels: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const label of labels) {
    const text = typeof label === 'string' ? label.trim() : '';
    if (text === '' || /[\r\n]/.test(text) || text.length > MAX_LABEL_CHARS)
      throw new TasksError(
        'E_INVALID',
        `a label is a non-empty word or short phrase on one line (at most ${MAX_LABEL_CHARS} characters), got ${JSON.stringify(label)}`,
        {
          label,
        },
      );
    out.push(text);
  }
  return normalizeLabels(out);
}

/** The longest label accepted, in characters. */
export const MAX_LABEL_CHARS = 100;

/** A note's text: not empty after trimming (the file's size limit bounds the rest). */
export function checkNoteText(text: unknown): string {
  if (typeof text !== 'string' || text.trim() === '') throw new TasksError('E_INVALID', 'a note needs text');
  return text.trim();
}

/** The note that stands for notes folded away to keep a task under the size limit (appendNote). */
const FOLDED = /^(\d+) earlier notes? (?:was|were) folded to keep this task under 1 MiB/;

/**
 * Appends a note, so that it always fits (docs/protocol.md, "One task, one
 * file"): when the file would grow over the 1 MiB limit, the oldest notes are
 * folded into one that counts them (the file's git history keeps their
 * text). A worker's failure note must never keep a failed run from releasing
 * its task.
 */
export function appendNote(task: Task, note: TaskNote): void {
  task.notes = [...(task.notes ?? []), note];
  const size = () => Buffer.byteLength(serializeTask(task));
  let over = size() - MAX_TASK_FILE_BYTES;
  if (over <= 0) return;
  const kept = [...task.notes].sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  const countOf = (n: TaskNote) => Number(FOLDED.exec(n.text)?.[1] ?? 0) || 1; // a note that counts folded ones counts them
  const folding = (count: number, at: string): TaskNote => ({
    at,
    owner: 'tasks',
    text: `${count} earlier note${count === 1 ? ' was' : 's were'} folded to keep this task under 1 MiB (git log -p of its file has them)`,
  });
  // The oldest go first: as many as their bytes say at once, then one by one until the file fits.
  let folded = 0;
  over += 300; // the note that counts them
  while (kept.length > 1 && over > 0) {
    const oldest = kept.shift()!;
    folded += countOf(oldest);
    over -= Buffer.byteLength(JSON.stringify(oldest, null, 4));
  }
  for (;;) {
    task.notes = [folding(folded, kept[0].at), ...kept];
    if (kept.length <= 1 || size() <= MAX_TASK_FILE_BYTES) return;
    folded += countOf(kept.shift()!);
  }
}

/** Applies a label change in place: adds, then removes; an empty list leaves the field out. */
export function applyLabels(task: Task, add: readonly string[], remove: readonly string[]): void {
  const drop = new Set(remove);
  const labels = normalizeLabels([...(task.labels ?? []), ...add]).filter((l) => !drop.has(l));
  if (labels.length) task.labels = labels;
  else delete task.labels;
}

/** A field's value nests at most MAX_NESTING_DEPTH arrays and objects (a reader refuses deeper ones); checked before anything copies it. */
export function checkNesting(value: unknown, field: string): void {
  const deep = findDeepNesting(value);
  if (deep)
    throw new TasksError(
      'E_INVALID',
      `${field} nests deeper than ${MAX_NESTING_DEPTH} levels (at ${describeNesting(field, deep)}); keep task data flat, and put documents in files`,
      { field },
    );
}
