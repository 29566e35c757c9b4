/**
 * The board index: a cache of the parsed task files in
 * `.tasks/.runtime/board-index.v3`, so that reading the board costs what
 * changed, not its whole history (docs/decisions.md, "The board index").
 *
 * It is only a cache. Every entry carries the identity its file had when it
 * was read (inode, size, mtime, ctime) and is used only while the file still
 * has it; anything else (a missing, torn, foreign or concurrently replaced
 * index) means reading the files, with the same results. Readers write it
 * (a complete temp file renamed into place, never fsync'ed, last writer
 * wins); the transaction knows only to ask for an exact pass after a change
 * that makes a task more claimable (Transaction.refreshIndexOnCommit).
 *
 * - loadBoardSnapshot (`tasks list`, `tasks ready`, TaskStore.loadBoard) is
 *   exact: it stats every task file and reads the ones whose identity
 *   changed; the folder's own identity tells whether names came or went.
 * - openClaimView (claimNext, claim-view.ts) only chooses candidates,
 *   which the claim re-checks under the task's lock.
 *
 * An identity is trusted only if its ctime is older than a clock reading of
 * the same file system taken before the file was looked at (the ctime of a
 * temp file made for that), as git does with racily clean entries: any later
 * change, even in place with the same size and mtime, then gives a newer
 * ctime. Whatever changed too recently is marked unsure and read again
 * (index-trust.ts). The file's format is index-file.ts's.
 *
 * This file: the exact pass, and the board folder as the index reads it.
 */
import type { Stats } from 'node:fs';
import { CorruptTaskError, TasksError, isErrnoException } from '../errors.js';
import { isClosed, parseTask, type Task } from '../format/format.js';
import { readTaskFile } from '../format/task-file.js';
import { encodeIndex } from './index-encode.js';
import {
  RUNTIME,
  boardHistoryPath,
  boardIndexPath,
  indexKeyOf,
  splitLines,
  leadingId,
  taskFromRaw,
  taskLine,
  unsureLine,
  type DirId,
  type EntryItem,
  type HistoryRef,
  type IndexLine,
} from './index-file.js';
import { encodeHistory, writeHistoryFile } from './index-history.js';
import { parseEntries, readIndex, type IndexFile } from './index-read.js';
import { IndexWriter, touch } from './index-writer.js';
import { REFRESH_MS, dirIdOf, gitIndexId, sameDir, sameDirId, sameFileId } from './index-trust.js';
import type { BoardSnapshot, TaskProblem } from './store-types.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { closeSync, constants, readFileSync, readdirSync, statSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

// store.ts's HIGHWATERMARK_FILE; not imported, because store.js loads the whole write path.

const HIGHWATERMARK = '.highwatermark';

const NOT_A_TASK_NAME = 'not a task file name (expected task_N.json, N without leading zeros)';

const NO_THROW = { throwIfNoEntry: false } as const;

const { S_IFMT, S_IFREG } = constants;

/**
 * Every task on the board and each file that is not a valid task, exactly as
 * reading every file would give them, reading only files whose identity
 * changed since the index saw them. Updates the index when it learned
 * something.
 */
export function loadBoardSnapshot(dir: string, options: { claimTrust?: boolean } = {}): BoardSnapshot {
  // claimTrust false (a look for a parent's children, parents.ts): the index it writes is not one claimNext ranks on unchecked.
  const verifiedAt = options.claimTrust === false ? 0 : Date.now();
  // Before listing: a task made meanwhile is then either listed or above this mark (see viewFromIndex).
  const hwm = readHighWaterMarkQuiet(dir);
  // Before any file is looked at: a git operation after this moves it again (open-view.ts).
  const git = gitIndexId(dir);
  const old = readIndex(boardIndexPath(dir));
  const writer = new IndexWriter(join(dir, RUNTIME));
  try {
    const names = listTaskNames(dir, old, writer);
    const paths = taskPaths(dir, names.ids);
    // The file system's clock before the files are looked at: every closed file found unchanged below is older (IndexHeader.stamp).
    const stamp = writer.stamp() ?? null;
    // Every file is looked at before the index's tasks are parsed: the garbage of thousands of
    // stats is then collected while little else is alive, instead of copying those tasks each time.
    const files = statTaskFiles(paths);
    const entries = old ? parseEntries(old) : undefined;
    const read = readTasks(names.ids, paths, files, entries, writer);
    const history = historyKept(read.lines, entries);
    const changed =
      old === undefined ||
      names.changed ||
      old.header.hwm !== hwm ||
      read.changed ||
      read.lines.length !== entries!.positions.size ||
      !sameFileId(old.header.git, git) ||
      history.rewrite ||
      (old.header.history !== null && entries!.historyItems === 0);

    const tasks = read.tasks.sort((a, b) => a.id - b.id);
    const problems: TaskProblem[] = [...names.bad.map((name) => ({ file: join(dir, name), message: NOT_A_TASK_NAME })), ...read.problems];
    problems.sort((a, b) => (a.id ?? 0) - (b.id ?? 0) || a.file.localeCompare(b.file));

    // The index file's mtime says when an exact pass last found it right (claimNext trusts it for a while after).
    let indexKey: string | undefined;
    if (changed) {
      const lines = read.lines.map((l) => (typeof l === 'number' ? entries!.lineAt(l) : l));
      const fields = { dir: names.dirId, hwm, bad: names.bad, stamp, git };
      const bytes = encodeIndex(fields, lines, history.rewrite || !old?.header.history ? writeHistory(dir, lines) : history.kept(old.header.history));
      writer.write(boardIndexPath(dir), bytes, verifiedAt);
      // A file read every time (unsure: no status in its line) is not in the index's bytes: then they do not name this board.
      if (lines.every((l) => l.status !== undefined)) indexKey = indexKeyOf(bytes);
    } else {
      if (verifiedAt && !(verifiedAt - old.verifiedAt >= 0 && verifiedAt - old.verifiedAt < REFRESH_MS)) touch(old.fd, verifiedAt);
      if (old.header.unsure.length === 0) indexKey = old.key;
    }
    return { tasks, byId: new Map(tasks.map((t) => [t.id, t])), problems, ...(indexKey !== undefined ? { indexKey } : {}) };
  } finally {
    writer.close();
    if (old) closeSync(old.fd);
  }
}

// Closed tasks kept in the index's rest part, beyond the history file, before an exact pass writes the history anew.
export const MAX_RECENT_CLOSED = 1000;

/**
 * Whether the history file can stay as it is: every entry of it that is an
 * id's latest was found unchanged (and closed), and the closed tasks beyond
 * it are few. `kept` names it for encodeIndex, holding the ids it has as they are.
 */
function historyKept(
  lines: (IndexLine | number)[],
  entries: ReturnType<typeof parseEntries> | undefined,
): { rewrite: boolean; kept(ref: HistoryRef): { ref: HistoryRef; holds(id: number): boolean } } {
  const none = { rewrite: true, kept: (ref: HistoryRef) => ({ ref, holds: () => false }) };
  if (!entries || entries.historyItems === 0) return { ...none, rewrite: false };
  const { historyItems, items, positions } = entries;
  let latest = 0;
  for (const at of positions.values()) if (at < historyItems) latest++;
  const held = new Set<number>();
  let recent = 0;
  for (const l of lines) {
    if (typeof l === 'number') {
      if (l < historyItems) held.add(items[l][0]);
      else {
        const item = items[l];
        if (item.length === 6 && isClosed(item[5].status)) recent++;
      }
    } else if (l.status !== undefined && isClosed(l.status)) recent++;
  }
  // A history entry that changed, went away or reopened: written anew, and so are many closed tasks beyond it.
  if (held.size !== latest || recent > MAX_RECENT_CLOSED) return none;
  return { rewrite: false, kept: (ref) => ({ ref, holds: (id) => held.has(id) }) };
}

/** Writes every closed task's entry as the history file: the reference to put in the index, and what it holds. */
function writeHistory(dir: string, lines: IndexLine[]): { ref: HistoryRef | null; holds(id: number): boolean } {
  const closed = lines.filter((l) => l.status !== undefined && isClosed(l.status));
  if (closed.length === 0) return { ref: null, holds: () => false };
  const ref = writeHistoryFile(join(dir, RUNTIME), boardHistoryPath(dir), encodeHistory(closed.map((l) => l.line)), closed.length);
  // encodeIndex asks only of closed tasks, and the new history holds every one.
  return ref ? { ref, holds: () => true } : { ref: null, holds: () => false };
}

/** The task file names of the board: the index's own list while the folder kept its identity, else the folder's. */
function listTaskNames(dir: string, old: IndexFile | undefined, writer: IndexWriter): { dirId: DirId | null; ids: number[]; bad: string[]; changed: boolean } {
  const dirStat = statBoardDir(dir);
  // No name came or went since the index listed them.
  if (old?.header.dir && sameDir(old.header.dir, dirStat)) return { dirId: old.header.dir, ids: idsOf(old), bad: old.header.bad, changed: false };
  const stamp = writer.stamp();
  const fresh = statBoardDir(dir);
  const { ids, bad } = sortNames(readBoardNames(dir));
  const dirId = stamp !== undefined && fresh.ctimeMs < stamp ? dirIdOf(fresh) : null;
  const changed = !old || !sameDirId(old.header.dir, dirId) || bad.join('/') !== old.header.bad.join('/');
  return { dirId, ids, bad, changed };
}

function taskPaths(dir: string, ids: number[]): string[] {
  const prefix = join(dir, 'task_');
  return ids.map((id) => `${prefix}${id}.json`);
}

/** What a stat of each task file gave: `seen` holds ino, size, mtimeMs, ctimeMs, four a file; `isFile` is 1 for a regular file. */
interface TaskFileStats {
  seen: Float64Array;
  isFile: Uint8Array;
}

function statTaskFiles(paths: string[]): TaskFileStats {
  const seen = new Float64Array(paths.length * 4);
  const isFile = new Uint8Array(paths.length);
  for (let i = 0; i < paths.length; i++) {
    const stat = statSync(paths[i], NO_THROW);
    if (!stat || (stat.mode & S_IFMT) !== S_IFREG) continue;
    isFile[i] = 1;
    seen[i * 4] = stat.ino;
    seen[i * 4 + 1] = stat.size;
    seen[i * 4 + 2] = stat.mtimeMs;
    seen[i * 4 + 3] = stat.ctimeMs;
  }
  return { seen, isFile };
}

/** Whether the index's entry for the file at `i` still has the identity its stat shows. */
function keptIdentity(item: EntryItem | undefined, files: TaskFileStats, i: number): boolean {
  const { seen, isFile } = files;
  return (
    item !== undefined &&
    item.length === 6 &&
    isFile[i] === 1 &&
    item[1] === seen[i * 4] &&
    item[2] === seen[i * 4 + 1] &&
    item[3] === seen[i * 4 + 2] &&
    item[4] === seen[i * 4 + 3]
  );
}

/**
 * The tasks: from the index where a file kept its identity, else read and
 * parsed; and the index's new lines, in the same order (a number: the old
 * entry at that position, kept).
 */
function readTasks(
  ids: number[],
  paths: string[],
  files: TaskFileStats,
  entries: ReturnType<typeof parseEntries> | undefined,
  writer: IndexWriter,
): { tasks: Task[]; problems: TaskProblem[]; lines: (IndexLine | number)[]; changed: boolean } {
  const tasks: Task[] = [];
  const problems: TaskProblem[] = [];
  const lines: (IndexLine | number)[] = [];
  let changed = false;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const path = paths[i];
    const at = entries?.positions.get(id);
    const item = at === undefined ? undefined : entries!.items[at];
    if (keptIdentity(item, files, i)) {
      tasks.push(taskFromRaw((item as [number, number, number, number, number, Task])[5]));
      lines.push(at!);
      continue;
    }
    const stamp = writer.stamp();
    let entry: IndexLine;
    try {
      const read = readTaskFile(path);
      if (read === undefined) {
        changed = true; // removed between listing and reading
        continue;
      }
      const task = parseTask(read.text, path);
      tasks.push(task);
      entry = stamp !== undefined && read.stat.ctimeMs < stamp ? taskLine(task, read.stat) : unsureLine(id);
    } catch (error) {
      if (!(error instanceof CorruptTaskError)) throw error;
      problems.push({ file: error.file, id, line: error.line, column: error.column, message: String(error.details.problem) });
      entry = unsureLine(id);
    }
    // An unsure entry that stays unsure changes nothing; anything else does.
    if (!item || item.length === 6 || entry.status !== undefined) changed = true;
    lines.push(entry);
  }
  return { tasks, problems, lines, changed };
}

/** The ids of task file names, and the other names that look like task files. */
function sortNames(names: string[]): { ids: number[]; bad: string[] } {
  const ids: number[] = [];
  const bad: string[] = [];
  for (const name of names) {
    const id = taskIdOf(name);
    if (id !== undefined) ids.push(id);
    else if (/^task_.*\.json$/i.test(name)) bad.push(name);
  }
  return { ids, bad: bad.sort() };
}

/** The ids an index holds, from its header and the ids that start its open lines. */
function idsOf(index: IndexFile): number[] {
  const ids = splitLines(index.openText).map(leadingId);
  for (const [from, to] of index.header.closed) for (let id = from; id <= to; id++) ids.push(id);
  for (const id of index.header.unsure) ids.push(id);
  return ids;
}

export function statBoardDir(dir: string): Stats {
  try {
    return statSync(dir);
  } catch (error) {
    throw boardGone(dir, error);
  }
}

export function readBoardNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (error) {
    throw boardGone(dir, error);
  }
}

function boardGone(dir: string, error: unknown): unknown {
  if (isErrnoException(error, 'ENOENT')) return new TasksError('E_NO_BOARD', `the board ${dir} is gone; run 'tasks init' to create one`, {}, { cause: error });
  return error;
}

/** `.highwatermark` as a number, or null when missing or not one plain integer (transaction.ts's parseHighWaterMark throws instead). */
export function readHighWaterMarkQuiet(dir: string): number | null {
  let text: string;
  try {
    text = readFileSync(join(dir, HIGHWATERMARK), 'utf8');
  } catch {
    return null;
  }
  const m = /^\s*([0-9]+)\s*$/.exec(text);
  const n = m ? Number(m[1]) : NaN;
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * idFromFileName without a regular expression: the claim view runs it on
 * every name of a 10,000-task folder, where the regex cost milliseconds.
 */
export function taskIdOf(name: string): number | undefined {
  const end = name.length - 5;
  if (end <= 5 || name.charCodeAt(5) === 48 || !name.startsWith('task_') || !name.endsWith('.json')) return undefined;
  for (let i = 5; i < end; i++) {
    const c = name.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  const id = Number(name.slice(5, end));
  return Number.isSafeInteger(id) ? id : undefined;
}
