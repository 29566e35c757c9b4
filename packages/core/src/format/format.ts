import { CorruptTaskError, TasksError } from '../errors.js';
import { findJsonSyntaxError, findTopLevelKey, positionAt } from './json-locate.js';
import { MAX_NESTING_DEPTH, describeNesting, findDeepNesting } from './json-nesting.js';
import { copyLinkFields, readLinkFields, writeLinkFields } from './task-links.js';
import { copyReview, readReviewField, reviewOut, type TaskReview } from './task-review.js';

export { inReview, reviewRequired, REVIEW_STATES, type ReviewState, type TaskReview } from './task-review.js';

export const TASK_STATUSES = ['pending', 'in_progress', 'completed', 'deleted'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** One task, as held in `.tasks/task_N.json` (docs/protocol.md, "One task, one file"). */
export interface Task {
  id: number;
  subject: string;
  description: string;
  status: TaskStatus;
  owner: string;
  activeForm?: string;
  /** The task this one is part of (docs/protocol.md, "Parents"); absent for none. Kept in the child only: children are derived. */
  parent?: number;
  blockedBy: number[];
  blocks: number[];
  /** 0 (highest) to 4; absent means DEFAULT_PRIORITY and stays absent on rewrite. */
  priority?: number;
  /** Sorted, unique, non-empty strings; absent when there are none. */
  labels?: string[];
  /** Globs of the files the task expects to change, relative to the top of the repository (docs/protocol.md, "File scopes"). */
  paths?: string[];
  /** Soft links (docs/protocol.md, "Links"), on both sides like edges and never part of readiness; each absent when empty. */
  related?: number[];
  discoveredFrom?: number[];
  discovered?: number[];
  /** What people and agents noted on the task, oldest first; absent when there are none. */
  notes?: TaskNote[];
  /** The shell command that must pass before the task completes (docs/protocol.md, "Checks before done"); absent: the board's, if any. */
  verify?: string;
  /** What the work came to, for the tasks that wait for this one (docs/protocol.md, "Results"); absent when none was given. */
  result?: string;
  /** Whether finishing it waits for review, and where that stands (docs/protocol.md, "Review"); absent: the board's rule, never finished. */
  review?: TaskReview;
  metadata?: Record<string, unknown>;
  /** Keys the format does not know, in their original order; preserved on every rewrite. */
  extra: Record<string, unknown>;
}

/** One entry of a task's `notes`: when (ISO 8601), who, and what. */
export interface TaskNote {
  at: string;
  owner: string;
  text: string;
}

/** Known keys in canonical order (the parent before the edges; the planning fields and the file scope after `blocks`). */
export const TASK_KEYS = [
  'id',
  'subject',
  'description',
  'status',
  'owner',
  'activeForm',
  'parent',
  'blockedBy',
  'blocks',
  'priority',
  'labels',
  'paths',
  'related',
  'discoveredFrom',
  'discovered',
  'notes',
  'verify',
  'result',
  'review',
  'metadata',
] as const;

/** The priority of a task without one: the middle of 0 (highest) … 4. */
export const DEFAULT_PRIORITY = 2;
/** The lowest priority (the highest number). */
export const MAX_PRIORITY = 4;

/** A task's priority, the default when it has none. */
export function priorityOf(task: Pick<Task, 'priority'>): number {
  return task.priority ?? DEFAULT_PRIORITY;
}

/** Sorted, without duplicates (labels, in code-point order so every platform writes the same bytes). */
export function normalizeLabels(labels: Iterable<string>): string[] {
  return [...new Set(labels)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Notes as written: sorted by `at` (stable, so notes of one moment keep their order), without exact repeats of at+owner+text. */
export function normalizeNotes(notes: Iterable<TaskNote>): TaskNote[] {
  const seen = new Set<string>();
  const out: TaskNote[] = [];
  for (const note of notes) {
    const key = JSON.stringify([note.at, note.owner, note.text]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(note);
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}
const KNOWN = new Set<string>(TASK_KEYS);

/** A task file larger than this is refused: task files are small by nature. */
export const MAX_TASK_FILE_BYTES = 1024 * 1024;

const TASK_FILE_RE = /^task_([1-9][0-9]*)\.json$/;

/** `task_N.json` for id N. */
export function taskFileName(id: number): string {
  return `task_${id}.json`;
}

/** The id in a task file name, or undefined when the name is not a task file. */
export function idFromFileName(name: string): number | undefined {
  const m = TASK_FILE_RE.exec(name);
  if (!m) return undefined;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}

/** True for statuses that no longer block anyone. */
export function isClosed(status: TaskStatus): boolean {
  return status === 'completed' || status === 'deleted';
}

/**
 * Parses a task id as people and agents write it: `3`, `#3`, `task_3`,
 * `task_3.json` (also a number). Anything else is a usage error.
 */
export function parseTaskId(input: unknown): number {
  if (typeof input === 'number') {
    if (Number.isSafeInteger(input) && input > 0) return input;
  } else if (typeof input === 'string') {
    const m = /^\s*(?:#|task_)?([1-9][0-9]{0,15})(?:\.json)?\s*$/.exec(input);
    if (m && (!input.includes('.json') || input.trim().startsWith('task_'))) {
      const id = Number(m[1]);
      if (Number.isSafeInteger(id)) return id;
    }
  }
  const shown = typeof input === 'string' ? `'${input.length > 60 ? input.slice(0, 60) + '…' : input}'` : String(input);
  const hint = typeof input === 'string' && /\s/.test(input.trim()) ? ' (that looks like a subject; to make a task run: tasks create "…")' : '';
  throw new TasksError('E_USAGE', `not a task id: ${shown}; ids look like 3, #3, task_3 or task_3.json${hint}`, {
    input,
  });
}

/** The text without a leading UTF-8 byte order mark. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Sorted ascending, without duplicates. */
export function normalizeIds(ids: Iterable<number>): number[] {
  if (Array.isArray(ids) && isAscending(ids)) return ids.slice();
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** True when every id is greater than the one before (no repeats): the normal form already, the common case. */
function isAscending(ids: readonly number[]): boolean {
  for (let i = 1; i < ids.length; i++) if (!(ids[i] > ids[i - 1])) return false;
  return true;
}

/** An object with no prototype, so keys like `__proto__` stay plain data. */
export function createRecord(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

/** Sets an own data property even for keys like `__proto__`. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A deep copy of JSON data into prototype-free records (no prototype pollution). */
export function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson);
  if (value !== null && typeof value === 'object') {
    const out = createRecord();
    for (const key of Object.keys(value)) setOwn(out, key, cloneJson((value as Record<string, unknown>)[key]));
    return out;
  }
  return value;
}

/**
 * Parses and validates task file text. `fileName` is used for messages and,
 * when it is a `task_N.json` name, to check that the id matches.
 * Throws CorruptTaskError with line and column on any problem.
 */
export function parseTask(text: string, fileName: string): Task {
  // Editors such as Notepad save a byte order mark; JSON has no room for one. The next rewrite drops it.
  text = stripBom(text);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    const problem = findJsonSyntaxError(text);
    const at = positionAt(text, problem?.offset ?? 0);
    throw new CorruptTaskError(fileName, at.line, at.column, `invalid JSON: ${problem?.message ?? String(cause)}`, {
      cause,
    });
  }
  return validateTask(raw, fileName, text);
}

/** Validates already-parsed task data (see parseTask). */
export function validateTask(raw: unknown, fileName: string, text = ''): Task {
  const reader = new FieldReader(fileName, text);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) reader.fail(undefined, 'a task file must hold a JSON object');
  const obj = raw as Record<string, unknown>;
  // Before anything recursive (cloneJson, JSON.stringify) sees the data: 20,000 levels overflow the stack.
  for (const key of Object.keys(obj)) {
    const deep = findDeepNesting(obj[key]);
    if (deep) reader.fail(key, `${show(key)} nests deeper than ${MAX_NESTING_DEPTH} levels (at ${describeNesting(key, deep)})`);
  }
  const { id, subject, description, status, owner } = coreFields(reader, obj);
  const blockedBy = edgeField(reader, obj, 'blockedBy');
  const blocks = edgeField(reader, obj, 'blocks');
  // One literal of one shape for every task, not a spread: the validator runs once per file of a whole-board read.
  const task: Task = { id, subject, description, status, owner, blockedBy, blocks, extra: createRecord() };
  const planning = readPlanningFields(reader, obj);
  const outcome = readOutcomeFields(reader, obj);
  const metadata = obj.metadata;
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)))
    reader.fail('metadata', `"metadata" must be an object, got ${show(metadata)}`);
  for (const key of Object.keys(obj)) if (!KNOWN.has(key)) setOwn(task.extra, key, obj[key]);
  if (obj.activeForm !== undefined) task.activeForm = obj.activeForm as string;
  const parent = parentField(reader, obj);
  if (parent !== undefined) task.parent = parent;
  const links = readLinkFields(obj, (key, problem) => reader.fail(key, problem), show);
  Object.assign(task, planning, outcome, links);
  const review = readReviewField(obj, (key, problem) => reader.fail(key, problem), show);
  if (review !== undefined) task.review = review;
  if (metadata !== undefined) task.metadata = cloneJson(metadata) as Record<string, unknown>;
  return task;
}

/** Where validation refuses a task file: at a key's place in its text. */
class FieldReader {
  constructor(
    readonly fileName: string,
    private readonly text: string,
  ) {}

  /** Refuses the file at `key` (the file's start when undefined). */
  fail(key: string | undefined, problem: string): never {
    const pos = positionAt(this.text, key === undefined ? 0 : findTopLevelKey(this.text, key));
    throw new CorruptTaskError(this.fileName, pos.line, pos.column, problem);
  }
}

/** id (matching the file's name), subject, description, status and owner; and that activeForm, when present, is a string. */
function coreFields(reader: FieldReader, obj: Record<string, unknown>): Pick<Task, 'id' | 'subject' | 'description' | 'status' | 'owner'> {
  const id = obj.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) reader.fail('id', `"id" must be a positive integer, got ${show(id)}`);
  const fileId = idFromFileName(reader.fileName.slice(Math.max(reader.fileName.lastIndexOf('/'), reader.fileName.lastIndexOf('\\')) + 1));
  if (fileId !== undefined && fileId !== id) reader.fail('id', `"id" is ${show(id)} but the file name says ${fileId}`);

  const subject = obj.subject;
  if (typeof subject !== 'string') reader.fail('subject', `"subject" must be a string, got ${show(subject)}`);
  if ((subject as string).trim() === '') reader.fail('subject', '"subject" must not be empty');

  const description = obj.description ?? '';
  if (typeof description !== 'string') reader.fail('description', `"description" must be a string, got ${show(description)}`);

  const status = obj.status;
  if (typeof status !== 'string' || !(TASK_STATUSES as readonly string[]).includes(status))
    reader.fail('status', `"status" must be one of ${TASK_STATUSES.join(', ')}, got ${show(status)}`);

  // Python task stores write owner None for nobody; read it as unclaimed.
  const owner = obj.owner ?? '';
  if (typeof owner !== 'string') reader.fail('owner', `"owner" must be a string, got ${show(owner)}`);

  const activeForm = obj.activeForm;
  if (activeForm !== undefined && typeof activeForm !== 'string') reader.fail('activeForm', `"activeForm" must be a string, got ${show(activeForm)}`);
  return { id: id as number, subject: subject as string, description: description as string, status: status as TaskStatus, owner: owner as string };
}

/** `blockedBy` or `blocks`: positive integer ids. */
function edgeField(reader: FieldReader, obj: Record<string, unknown>, key: 'blockedBy' | 'blocks'): number[] {
  const value = obj[key] ?? [];
  if (!Array.isArray(value)) return reader.fail(key, `"${key}" must be an array of task ids, got ${show(value)}`);
  for (const item of value) {
    if (typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1)
      reader.fail(key, `"${key}" must hold positive integer ids, got ${show(item)} (run 'tasks doctor --fix' to normalise)`);
  }
  return value as number[];
}

/** `parent`: a positive integer id; absent or null (written by hand for none) is none. */
function parentField(reader: FieldReader, obj: Record<string, unknown>): number | undefined {
  const value = obj.parent;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
    reader.fail('parent', `"parent" must be a task id (a positive integer), got ${show(value)}; leave it out for none`);
  return value;
}

/** The planning fields that are present: priority, labels, paths, notes. */
function readPlanningFields(reader: FieldReader, obj: Record<string, unknown>): Pick<Task, 'priority' | 'labels' | 'paths' | 'notes'> {
  const priority = obj.priority;
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isInteger(priority) || priority < 0 || priority > MAX_PRIORITY))
    reader.fail('priority', `"priority" must be an integer from 0 (highest) to ${MAX_PRIORITY}, got ${show(priority)}`);
  const labels = stringList(reader, obj, 'labels', 'an array of strings', 'non-empty strings');
  const paths = stringList(reader, obj, 'paths', 'an array of globs', 'non-empty glob strings');
  const notes = obj.notes;
  if (notes !== undefined) {
    if (!Array.isArray(notes)) reader.fail('notes', `"notes" must be an array of {at, owner, text}, got ${show(notes)}`);
    for (const note of notes as unknown[]) {
      const n = note as Record<string, unknown>;
      if (n === null || typeof n !== 'object' || Array.isArray(n) || typeof n.at !== 'string' || typeof n.owner !== 'string' || typeof n.text !== 'string')
        reader.fail('notes', `"notes" must hold objects {at, owner, text} of strings, got ${show(note)}`);
    }
  }
  const planning: Pick<Task, 'priority' | 'labels' | 'paths' | 'notes'> = {};
  if (priority !== undefined) planning.priority = priority as number;
  if (labels !== undefined) planning.labels = labels;
  if (paths !== undefined) planning.paths = paths;
  if (notes !== undefined) planning.notes = (notes as Record<string, unknown>[]).map(noteFrom);
  return planning;
}

/** `verify` (a non-empty string) and `result` (a string), when present. */
function readOutcomeFields(reader: FieldReader, obj: Record<string, unknown>): Pick<Task, 'verify' | 'result'> {
  const out: Pick<Task, 'verify' | 'result'> = {};
  if (obj.verify !== undefined) {
    if (typeof obj.verify !== 'string' || obj.verify.trim() === '')
      reader.fail('verify', `"verify" must be a shell command (a non-empty string), got ${show(obj.verify)}`);
    out.verify = obj.verify as string;
  }
  if (obj.result !== undefined) {
    if (typeof obj.result !== 'string') reader.fail('result', `"result" must be a string, got ${show(obj.result)}`);
    out.result = obj.result as string;
  }
  return out;
}

/** `labels` or `paths`: a copy of the list of non-empty strings, when present. */
function stringList(reader: FieldReader, obj: Record<string, unknown>, key: 'labels' | 'paths', list: string, items: string): string[] | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) reader.fail(key, `"${key}" must be ${list}, got ${show(value)}`);
  for (const item of value as unknown[]) if (typeof item !== 'string' || item.trim() === '') reader.fail(key, `"${key}" must hold ${items}, got ${show(item)}`);
  return [...(value as string[])];
}

/**
 * The canonical bytes of a task (docs/protocol.md, "One task, one file"):
 * known keys in order, then unknown keys in their original order, sorted
 * unique id arrays, 2-space indent, trailing newline. Same task, same bytes.
 */
export function serializeTask(task: Task): string {
  let text = '';
  writeTopLevel(canonicalRecord(task), (piece) => {
    text += piece;
    return true;
  });
  return text;
}

/** What serializeTask writes: the task's keys in canonical order, with their normal forms. */
function canonicalRecord(task: Task): Record<string, unknown> {
  // A plain object for the known keys, built in one shape: it is made and stringified several times faster than a
  // record of defined properties (doctor serializes every task of the board). Unknown keys, which may be named
  // `__proto__`, are still defined as own properties, and key order is the same for both kinds of object.
  const out: Record<string, unknown> = { id: task.id, subject: task.subject, description: task.description, status: task.status, owner: task.owner };
  if (task.activeForm !== undefined) out.activeForm = task.activeForm;
  if (task.parent !== undefined) out.parent = task.parent;
  out.blockedBy = normalizeIds(task.blockedBy);
  out.blocks = normalizeIds(task.blocks);
  // The default priority and empty lists are written as nothing: one logical task, one byte form.
  if (task.priority !== undefined && task.priority !== DEFAULT_PRIORITY) out.priority = task.priority;
  if (task.labels?.length) out.labels = normalizeLabels(task.labels);
  if (task.paths !== undefined) out.paths = task.paths;
  writeLinkFields(task, (key, ids) => {
    out[key] = ids;
  });
  if (task.notes?.length) out.notes = normalizeNotes(task.notes).map(noteOut);
  if (task.verify !== undefined) out.verify = task.verify;
  if (task.result !== undefined) out.result = task.result;
  const review = reviewOut(task.review);
  if (review !== undefined) out.review = review;
  if (task.metadata !== undefined) out.metadata = task.metadata;
  for (const key of Object.keys(task.extra)) if (!KNOWN.has(key)) setOwn(out, key, task.extra[key]);
  return out;
}

/**
 * Writes `JSON.stringify(record, null, 2) + '\n'`, byte for byte, in pieces
 * to `emit`, one key at a time, until `emit` says stop (false, returned):
 * strings, numbers and lists of ids (nearly all of a task) without the
 * general indenting writer, which took most of a serialization; any other
 * value by it, one level in (JSON text holds a newline only between its
 * tokens, so indenting its lines by two spaces nests it).
 */
function writeTopLevel(record: Record<string, unknown>, emit: (piece: string) => boolean): boolean {
  let first = true;
  for (const key of Object.keys(record)) {
    const value = record[key];
    let json: string | undefined;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') json = JSON.stringify(value);
    else if (Array.isArray(value) && isFiniteNumberList(value)) json = value.length === 0 ? '[]' : '[\n    ' + value.join(',\n    ') + '\n  ]';
    else json = JSON.stringify(value, null, 2)?.replaceAll('\n', '\n  ');
    // What JSON leaves out of an object (undefined), this leaves out too.
    if (json === undefined) continue;
    if (!emit(first ? '{\n  ' : ',\n  ') || !emit(JSON.stringify(key)) || !emit(': ') || !emit(json)) return false;
    first = false;
  }
  return emit(first ? '{}\n' : '\n}\n');
}

/** A list of finite numbers and nothing else (no holes), which JSON writes as `String` does. */
function isFiniteNumberList(list: unknown[]): boolean {
  for (let i = 0; i < list.length; i++) if (typeof list[i] !== 'number' || !Number.isFinite(list[i])) return false;
  return true;
}

/** A fresh copy of a task that can be changed without touching the original. */
export function copyTask(task: Task): Task {
  const copy: Task = {
    ...task,
    blockedBy: [...task.blockedBy],
    blocks: [...task.blocks],
    ...(task.paths !== undefined ? { paths: [...task.paths] } : {}),
    ...copyLinkFields(task),
    extra: cloneJson(task.extra) as Record<string, unknown>,
  };
  if (task.labels !== undefined) copy.labels = [...task.labels];
  if (task.review !== undefined) copy.review = copyReview(task.review);
  if (task.notes !== undefined) copy.notes = task.notes.map((n) => cloneJson(n) as TaskNote);
  if (task.metadata !== undefined) copy.metadata = cloneJson(task.metadata) as Record<string, unknown>;
  return copy;
}

/** A note as read: at, owner, text, then any other keys it has, kept as data. */
function noteFrom(raw: Record<string, unknown>): TaskNote {
  return cloneJson(raw) as TaskNote;
}

/** A note in canonical key order: at, owner, text, then the others as they came. */
function noteOut(note: TaskNote): Record<string, unknown> {
  const out = createRecord();
  setOwn(out, 'at', note.at);
  setOwn(out, 'owner', note.owner);
  setOwn(out, 'text', note.text);
  for (const key of Object.keys(note))
    if (key !== 'at' && key !== 'owner' && key !== 'text') setOwn(out, key, (note as unknown as Record<string, unknown>)[key]);
  return out;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const s = JSON.stringify(value);
  return s.length > 40 ? s.slice(0, 40) + '…' : s;
}
