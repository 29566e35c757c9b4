/**
 * The board index's file format (`.tasks/.runtime/board-index.v3`): its
 * names, its header, its entry lines and the seals that close its parts.
 * The file is a header line, the open tasks' entries, a seal, the entries of
 * unsure ids and of tasks closed since the history was written, a seal;
 * beside it the history (`board-history.v3`, index-history.ts) holds the
 * closed tasks' entries, which a change of the open work does not rewrite
 * (docs/decisions.md, "History the open work does not pay for"). How the
 * bytes are made is index-encode.ts's, how they are read index-read.ts's,
 * how they are put in place index-writer.ts's; whether an entry may be
 * believed is index-trust.ts's.
 */
import type { Stats } from 'node:fs';
import { TASK_KEYS, cloneJson, createRecord, isClosed, setOwn, type Task, type TaskStatus } from '../format/format.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { join } = process.getBuiltinModule('node:path');

// store.ts's RUNTIME_DIR; not imported, because store.js loads the whole write path.
export const RUNTIME = '.runtime';

/** The index file, in the board's runtime folder. The version is in the name so two versions of dotasks do not take turns rewriting it. */
export const BOARD_INDEX_FILE = 'board-index.v3';

/** The closed tasks' entries as an exact pass last wrote them: one file, named in the index's header with its seal. */
export const BOARD_HISTORY_FILE = 'board-history.v3';

/** What every index header's `format` says. */
export const FORMAT = 'dotasks-board-index';

// 2: the header lists the parents of open tasks (IndexHeader.parents).
// 3: the closed tasks' entries in a file of their own (IndexHeader.history), with their counts and stamp.
export const VERSION = 3;

// The fields this dotasks knows: an index written by one that knew others (a key it kept among the unknown ones) is not used.
export const KNOWN_KEYS = TASK_KEYS.join(',');

// The seal line ending each part: '#', 8 hex digits (CRC-32), '\n'.
export const SEAL_BYTES = 10;

/** The name of a temp file beside `file` in the runtime folder: `.tmp-….tmp`, what isTempFileName (fsio.ts) matches, so doctor clears one left by a killed process. */
export function tempName(runtimeDir: string, file: string): string {
  return join(runtimeDir, `.tmp-${file}.${process.pid}.${++tempCount}${Math.random().toString(36).slice(2, 8)}.tmp`);
}

let tempCount = 0;

/** inode, size, mtimeMs, ctimeMs of a task file. */
export type FileId = [number, number, number, number];
/** dev, inode, mtimeMs, ctimeMs of the board folder. */
export type DirId = [number, number, number, number];

/**
 * The file: this header as one line; the open part, a JSON array of the
 * open tasks' entries, one a line; a seal; the rest, an array of the
 * closed tasks' and unsure ids' entries; a seal. Each seal is a CRC of every
 * byte before it, so claimNext reads and checks the open part only. The
 * header alone says which ids the index holds.
 */
export interface IndexHeader {
  format: string;
  version: number;
  /** TASK_KEYS of the dotasks that wrote it (KNOWN_KEYS): a parsed task's shape depends on them. */
  keys: string;
  /** The board folder's identity when its names were listed; null when it changed too recently to trust. */
  dir: DirId | null;
  /** `.highwatermark` read before the names were listed; null when missing or not a number. */
  hwm: number | null;
  /** Ranges [from, to] of ids whose files hold completed or deleted tasks. */
  closed: [number, number][];
  /** Ids whose files are read every time: bad files and files changed too recently to trust. */
  unsure: number[];
  /** Names that look like task files but are not (`task_01.json`), reported as problems. */
  bad: string[];
  /** The ids the open part's tasks name as their parent, ascending: who may have open children, from this line alone (parents.ts). */
  parents: number[];
  /**
   * The history file this index goes with, by its inode, size and seal, and
   * how many entries it holds; null when there is none (a board without
   * closed tasks, or one whose closed entries are all in the rest part).
   */
  history: HistoryRef | null;
  /** Completed and deleted tasks among `closed`: what a listing that folds the history counts. */
  completed: number;
  deleted: number;
  /** The closed children of open tasks: `[parent, child, deleted ? 1 : 0]`, for their progress ("3/5 done") without the history. */
  closedKids: [number, number, 0 | 1][];
  /** The closed tasks that blocked open ones, `[closed, open]`: a completed blocker leaves the dependent's blockedBy, and its result goes downstream (results.ts). */
  closedBlockers: [number, number][];
  /**
   * The file system's clock (a new file's ctime) just before the last exact
   * pass looked at every file: a closed task's file whose ctime is older was
   * looked at since it last changed (open-view.ts, the sweep).
   */
  stamp: number | null;
  /** What the tasks of this index are, without its clocks and inodes: a CRC of both parts, the history's seal, the bad names (indexKeyOf). */
  content: string;
  /** The git index of the repository the board is in, as that pass found it (inode, size, mtime, ctime): a pull or a checkout moves it. */
  git: FileId | null;
  /** Bytes from the start of the file to the seal of the open part. */
  openBytes: number;
  /** Entries in the open part and in the rest. */
  open: number;
  rest: number;
}

/** The history file an index goes with (IndexHeader.history). */
export interface HistoryRef {
  ino: number;
  size: number;
  seal: string;
  entries: number;
}

/** An entry: `[id, ino, size, mtimeMs, ctimeMs, task]` for a trusted file, `[id]` for one read every time. */
export type EntryItem = [number, number, number, number, number, Task] | [number];

/** An entry of the index being written: its line, and its task's status unless it is unsure (and its parent, when it is open and has one). */
export interface IndexLine {
  id: number;
  line: string;
  status?: TaskStatus;
  parent?: number;
  /** A closed task's blocks (for IndexHeader.closedBlockers). */
  blocks?: number[];
}

/** The index file of the board at `dir`. */
export function boardIndexPath(dir: string): string {
  return join(dir, RUNTIME, BOARD_INDEX_FILE);
}

/** The history file of the board at `dir`. */
export function boardHistoryPath(dir: string): string {
  return join(dir, RUNTIME, BOARD_HISTORY_FILE);
}

/** The entry of a task read from its file, with the identity the file had. */
export function taskLine(task: Task, stat: Stats): IndexLine {
  return {
    id: task.id,
    status: task.status,
    parent: task.parent,
    ...(isClosed(task.status) && task.blocks.length ? { blocks: task.blocks } : {}),
    line: JSON.stringify([task.id, stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs, task]),
  };
}

/** The entry of an id whose file is read every time. */
export function unsureLine(id: number): IndexLine {
  return { id, line: `[${id}]` };
}

/**
 * A task as parseTask gives it (prototype-free extra and metadata), made in
 * place from its JSON in the index: the keys come in the order parseTask
 * builds them, since that is the order they were written in.
 */
export function taskFromRaw(raw: Task): Task {
  const extra = createRecord();
  for (const key of Object.keys(raw.extra)) setOwn(extra, key, raw.extra[key]);
  raw.extra = extra;
  if (raw.metadata !== undefined) raw.metadata = cloneJson(raw.metadata) as Record<string, unknown>;
  if (raw.notes !== undefined) raw.notes = cloneJson(raw.notes) as Task['notes'];
  return raw;
}

/** The id at the start of an entry line `[id,…` (digits read by hand: thousands of open lines on a big board). */
export function leadingId(line: string): number {
  let id = 0;
  for (let i = 1; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) break;
    id = id * 10 + (c - 48);
  }
  return id;
}

/**
 * An entry of the index's open part, `[id, ino, size, mtimeMs, ctimeMs, task]`;
 * undefined for anything else, which is then read from its file: the index
 * is only ever a shortcut, and a line it cannot give never stops a claim.
 */
export function parseOpenLine(line: string): [number, number, number, number, number, Task] | undefined {
  try {
    const entry = JSON.parse(line) as unknown;
    return Array.isArray(entry) && entry.length === 6 && entry[5] !== null && typeof entry[5] === 'object'
      ? (entry as [number, number, number, number, number, Task])
      : undefined;
  } catch {
    return undefined;
  }
}

/** The seal line over the bytes before `end`: '#', their CRC-32 in hex, '\n'. */
export function seal(buf: Buffer, end: number): Buffer {
  return Buffer.from(`#${checksum(buf, end)}\n`);
}

/** Checks the seal that ends at `end` (exclusive) over every byte before it. */
export function sealed(buf: Buffer, end: number): boolean {
  const start = end - SEAL_BYTES;
  return start >= 0 && buf.toString('latin1', start, end) === `#${checksum(buf, start)}\n`;
}

/**
 * CRC-32 of the bytes before `end`: catches a torn, truncated or damaged
 * index (not someone forging one: it lives in the user's own runtime
 * folder). zlib is loaded on first use, through getBuiltinModule, which costs
 * about a millisecond where an ESM import of it costs several.
 */
function checksum(buf: Buffer, end: number): string {
  return crc32Of()(buf.subarray(0, end)).toString(16).padStart(8, '0');
}

let crc32: ((data: Uint8Array | string, value?: number) => number) | undefined;

/** zlib's CRC-32, loaded on first use (see checksum). */
export function crc32Of(): (data: Uint8Array | string, value?: number) => number {
  return (crc32 ??= process.getBuiltinModule('node:zlib').crc32);
}

/** A header line, checked to be of this version and these keys; undefined otherwise (text that is not JSON throws). */
export function parseHeader(text: string): IndexHeader | undefined {
  const header = JSON.parse(text) as IndexHeader;
  if (header === null || typeof header !== 'object' || header.format !== FORMAT || header.version !== VERSION || header.keys !== KNOWN_KEYS) return undefined;
  if (!Number.isSafeInteger(header.openBytes) || !Number.isSafeInteger(header.open) || !Number.isSafeInteger(header.rest)) return undefined;
  if (header.hwm !== null && !Number.isSafeInteger(header.hwm)) return undefined;
  if (!Array.isArray(header.closed) || !Array.isArray(header.unsure) || !Array.isArray(header.bad) || !Array.isArray(header.parents)) return undefined;
  if (
    !Array.isArray(header.closedKids) ||
    !Array.isArray(header.closedBlockers) ||
    !Number.isSafeInteger(header.completed) ||
    !Number.isSafeInteger(header.deleted)
  )
    return undefined;
  if (header.history !== null && (typeof header.history !== 'object' || typeof header.history.seal !== 'string')) return undefined;
  return header;
}

/** The lines of a part (`[line,\nline]\n`). */
export function splitLines(part: string): string[] {
  return part.length > 3 ? part.slice(1, -2).split(',\n') : [];
}

/**
 * A short name for the tasks an index holds: its header's `content` (a CRC of
 * its parts, the history's seal and the bad names, made when it was written). Two
 * indexes with one key hold the same tasks (up to a CRC collision), however
 * their headers' clocks and inodes differ, so what is derived from a board
 * read whole through its index can be kept under this key.
 */
export function indexKeyOf(buf: Buffer): string {
  const header = JSON.parse(buf.toString('utf8', 0, buf.indexOf(10))) as IndexHeader;
  return `${header.content}-${header.open + header.rest}`;
}

/**
 * A name for what an index's header and open part hold (the seal that ends
 * them covers both): the open work and which ids are closed. What the open
 * view derives from a board (open-view.ts) can be kept under it.
 */
export function openKeyOf(openBytes: number, seal: string): string {
  return `open-${openBytes}-${seal}`;
}
