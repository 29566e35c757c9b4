import { readFileSync } from 'node:fs';
// The read path and the store only, not the whole core (see read.ts in the core): the fast path's commands start sooner.
import { findBoard, parseTaskId, resolveOwner, toTaskView, TasksError, type Task, type TaskLookup, printable } from './core-read.js';
import { TaskStore } from '@dotasks/core/store';
import { reportLockWait } from './lock-wait.js';

/** Options every command takes. */
export interface GlobalOptions {
  dir?: string;
  json?: boolean;
  owner?: string;
  cwd?: string;
}

/** What a command returns; only the entry prints and exits. */
export interface CommandOutput {
  /** For people (stdout). */
  text?: string;
  /** For --json (stdout). */
  json?: unknown;
  /** Warnings for people (stderr). */
  warnings?: string[];
  exitCode?: number;
}

/** Opens the board the options point at (docs/protocol.md, "Where the board is"). */
export function openStore(options: GlobalOptions): TaskStore {
  // A wait for a lock another process holds is said on stderr after a second (lock-wait.ts), not endured in silence.
  return new TaskStore(findBoard({ dir: options.dir, cwd: options.cwd }), { lock: { onWait: reportLockWait } });
}

/** The acting owner (docs/protocol.md, "Who acts"). */
export function actingOwner(options: GlobalOptions): string {
  return resolveOwner({ owner: options.owner, cwd: options.cwd }).owner;
}

/** Parses ids given as `3`, `#3`, `task_3`, `task_3.json`, also comma-separated or repeated. */
export function parseIdList(values: unknown): number[] {
  if (values === undefined) return [];
  const list = Array.isArray(values) ? values : [values];
  const out: number[] = [];
  for (const value of list) {
    for (const part of String(value).split(',')) {
      if (part.trim() === '') continue;
      out.push(parseTaskId(part.trim()));
    }
  }
  return out;
}

/** `--parent ID`: the id, or (where `none` is allowed, for update) null for `none` or `""`; a word that is not an id is a usage error. */
export function parseParent(value: string | undefined, allowNone: boolean): number | null | undefined {
  if (value === undefined) return undefined;
  if (allowNone && (value.trim() === '' || value.trim().toLowerCase() === 'none')) return null;
  return parseTaskId(value);
}

/** Parses `--meta k=v` pairs: v is JSON when it parses, else a string; `k=` removes k. */
export function parseMeta(values: unknown): Record<string, unknown> | undefined {
  if (values === undefined) return undefined;
  const list = Array.isArray(values) ? values : [values];
  const out = Object.create(null) as Record<string, unknown>;
  for (const raw of list) {
    const text = String(raw);
    const eq = text.indexOf('=');
    if (eq <= 0) throw new TasksError('E_USAGE', `--meta takes key=value, got '${text}'`);
    const key = text.slice(0, eq);
    const valueText = text.slice(eq + 1);
    let value: unknown = valueText;
    if (valueText === '') value = null;
    else {
      try {
        value = JSON.parse(valueText);
      } catch {
        value = valueText;
      }
    }
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** `-d -` reads the description from stdin (for long text, and text an agent pipes in); anything else is the text itself. */
export function readDescription(value: string | undefined): string | undefined {
  if (value !== '-') return value;
  try {
    return readFileSync(0, 'utf8');
  } catch (error) {
    throw new TasksError('E_IO', `-d - reads the description from stdin, which could not be read (${(error as Error).message})`);
  }
}

/** `#3 Subject` for messages. */
export function label(task: Task): string {
  return `#${task.id}: ${printable(task.subject)}`;
}

/** The JSON view of a task, reading its neighbours (and its open children, for `ready`) from the board. */
export function viewTask(store: TaskStore, task: Task) {
  const lookup: TaskLookup = (id) => (id === task.id ? task : store.peekTask(id));
  lookup.openChildren = (id) => (id === task.id ? store.openChildrenOf(id) : []);
  return toTaskView(task, lookup);
}

/** `completed #2: Parser (its children are done)` lines for the parents a completion completed by themselves (completeParents). */
export function describeCompletedParents(store: TaskStore, ids: number[]): string[] {
  return ids.map((id) => {
    const task = store.peekTask(id);
    return `completed #${id}${task ? `: ${printable(task.subject)}` : ''} (its children are done)`;
  });
}

/** `unblocked: #2 Transform AST, #3 Emit output` lines for people. */
export function describeUnblocked(store: TaskStore, ids: number[]): string[] {
  return ids.map((id) => {
    const task = store.peekTask(id);
    return `unblocked #${id}${task ? `: ${printable(task.subject)}` : ''}`;
  });
}

export { parsePriorities, splitList } from './list-values.js';
