import { CorruptTaskError, TasksError } from '../errors.js';
import { findJsonSyntaxError, findTopLevelKey, positionAt } from './json-locate.js';

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
  blockedBy: number[];
  blocks: number[];
  /** Globs of the files the task expects to change, relative to the top of the repository (docs/protocol.md, "File scopes"). */
  paths?: string[];
  metadata?: Record<string, unknown>;
  /** Keys the format does not know, in their original order; preserved on every rewrite. */
  extra: Record<string, unknown>;
}

/** Known keys in canonical order. */
export const TASK_KEYS = [
  'id',
  'subject',
  'description',
  'status',
  'owner',
  'activeForm',
  'blockedBy',
  'blocks',
  // priority and labels go here, before paths; notes after it.
  'paths',
  'metadata',
] as const;
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
  const hint =
    typeof input === 'string' && /\s/.test(input.trim())
      ? ' (that looks like a subject; to make a task run: tasks create "…")'
      : '';
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
  return [...new Set(ids)].sort((a, b) => a - b);
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
  const at = (key: string | undefined, problem: string): never => {
    const pos = positionAt(text, key === undefined ? 0 : findTopLevelKey(text, key));
    throw new CorruptTaskError(fileName, pos.line, pos.column, problem);
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) at(undefined, 'a task file must hold a JSON object');
  const obj = raw as Record<string, unknown>;

  const id = obj.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) at('id', `"id" must be a positive integer, got ${show(id)}`);
  const fileId = idFromFileName(fileName.split(/[\\/]/).pop() ?? fileName);
  if (fileId !== undefined && fileId !== id) at('id', `"id" is ${show(id)} but the file name says ${fileId}`);

  const subject = obj.subject;
  if (typeof subject !== 'string') at('subject', `"subject" must be a string, got ${show(subject)}`);
  if ((subject as string).trim() === '') at('subject', '"subject" must not be empty');

  const description = obj.description ?? '';
  if (typeof description !== 'string') at('description', `"description" must be a string, got ${show(description)}`);

  const status = obj.status;
  if (typeof status !== 'string' || !(TASK_STATUSES as readonly string[]).includes(status))
    at('status', `"status" must be one of ${TASK_STATUSES.join(', ')}, got ${show(status)}`);

  // Python task stores write owner None for nobody; read it as unclaimed.
  const owner = obj.owner ?? '';
  if (typeof owner !== 'string') at('owner', `"owner" must be a string, got ${show(owner)}`);

  const activeForm = obj.activeForm;
  if (activeForm !== undefined && typeof activeForm !== 'string')
    at('activeForm', `"activeForm" must be a string, got ${show(activeForm)}`);

  const edges = (key: 'blockedBy' | 'blocks'): number[] => {
    const value = obj[key] ?? [];
    if (!Array.isArray(value)) return at(key, `"${key}" must be an array of task ids, got ${show(value)}`);
    for (const item of value) {
      if (typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1)
        at(key, `"${key}" must hold positive integer ids, got ${show(item)} (run 'tasks doctor --fix' to normalise)`);
    }
    return value as number[];
  };
  const blockedBy = edges('blockedBy');
  const blocks = edges('blocks');

  const paths = obj.paths;
  if (paths !== undefined) {
    if (!Array.isArray(paths)) at('paths', `"paths" must be an array of globs, got ${show(paths)}`);
    for (const item of paths as unknown[])
      if (typeof item !== 'string' || item.trim() === '') at('paths', `"paths" must hold non-empty glob strings, got ${show(item)}`);
  }

  const metadata = obj.metadata;
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)))
    at('metadata', `"metadata" must be an object, got ${show(metadata)}`);

  const extra = createRecord();
  for (const key of Object.keys(obj)) if (!KNOWN.has(key)) setOwn(extra, key, obj[key]);

  const task: Task = {
    id: id as number,
    subject: subject as string,
    description: description as string,
    status: status as TaskStatus,
    owner: owner as string,
    blockedBy,
    blocks,
    extra,
  };
  if (activeForm !== undefined) task.activeForm = activeForm as string;
  if (paths !== undefined) task.paths = [...(paths as string[])];
  if (metadata !== undefined) task.metadata = cloneJson(metadata) as Record<string, unknown>;
  return task;
}

/**
 * The canonical bytes of a task (docs/protocol.md, "One task, one file"):
 * known keys in order, then unknown keys in their original order, sorted
 * unique id arrays, 2-space indent, trailing newline. Same task, same bytes.
 */
export function serializeTask(task: Task): string {
  const out = createRecord();
  setOwn(out, 'id', task.id);
  setOwn(out, 'subject', task.subject);
  setOwn(out, 'description', task.description);
  setOwn(out, 'status', task.status);
  setOwn(out, 'owner', task.owner);
  if (task.activeForm !== undefined) setOwn(out, 'activeForm', task.activeForm);
  setOwn(out, 'blockedBy', normalizeIds(task.blockedBy));
  setOwn(out, 'blocks', normalizeIds(task.blocks));
  if (task.paths !== undefined) setOwn(out, 'paths', task.paths);
  if (task.metadata !== undefined) setOwn(out, 'metadata', task.metadata);
  for (const key of Object.keys(task.extra)) if (!KNOWN.has(key)) setOwn(out, key, task.extra[key]);
  return JSON.stringify(out, null, 2) + '\n';
}

/** A fresh copy of a task that can be changed without touching the original. */
export function copyTask(task: Task): Task {
  const copy: Task = {
    ...task,
    blockedBy: [...task.blockedBy],
    blocks: [...task.blocks],
    ...(task.paths !== undefined ? { paths: [...task.paths] } : {}),
    extra: cloneJson(task.extra) as Record<string, unknown>,
  };
  if (task.metadata !== undefined) copy.metadata = cloneJson(task.metadata) as Record<string, unknown>;
  return copy;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const s = JSON.stringify(value);
  return s.length > 40 ? s.slice(0, 40) + '…' : s;
}
