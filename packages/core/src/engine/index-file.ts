/**
 * The board index's file format (`.tasks/.runtime/board-index.v3`): a header
 * line, the open tasks' entries, a seal, the entries of unsure ids and of
 * tasks closed since the history was written, a seal; and beside it the
 * history (`board-history.v3`): the closed tasks' entries, which a change of
 * the open work does not rewrite (docs/decisions.md, "History the open work
 * does not pay for"). How both are written (a temp file renamed into place)
 * and read back, whole or only the header and open part. Whether an entry may
 * be believed is index-trust.ts's; what reads it, board-index.ts (exact
 * passes) and claim-view.ts (claim candidates).
 */
import type { Stats } from 'node:fs';
import { isErrnoException } from '../errors.js';
import { TASK_KEYS, cloneJson, createRecord, isClosed, setOwn, type Task, type TaskStatus } from '../format/format.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { closeSync, fstatSync, futimesSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeSync } =
  process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

// store.ts's RUNTIME_DIR; not imported, because store.js loads the whole write path.
export const RUNTIME = '.runtime';

/** The index file, in the board's runtime folder. The version is in the name so two versions of dotasks do not take turns rewriting it. */
export const BOARD_INDEX_FILE = 'board-index.v3';

/** The closed tasks' entries as an exact pass last wrote them: one file, named in the index's header with its seal. */
export const BOARD_HISTORY_FILE = 'board-history.v3';

const FORMAT = 'dotasks-board-index';

// 2: the header lists the parents of open tasks (IndexHeader.parents).
// 3: the closed tasks' entries in a file of their own (IndexHeader.history), with their counts and stamp.
const VERSION = 3;

// The fields this dotasks knows: an index written by one that knew others (a key it kept among the unknown ones) is not used.
const KNOWN_KEYS = TASK_KEYS.join(',');

// The seal line ending each part: '#', 8 hex digits (CRC-32), '\n'.
const SEAL_BYTES = 10;

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
  /** The git index of the repository the board is in, as that pass found it (inode, size, mtime, ctime): a pull or a checkout moves it. */
  /** What the tasks of this index are, without its clocks and inodes: a CRC of both parts, the history's seal, the bad names (indexKeyOf). */
  content: string;
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

export function taskLine(task: Task, stat: Stats): IndexLine {
  return {
    id: task.id,
    status: task.status,
    parent: task.parent,
    ...(isClosed(task.status) && task.blocks.length ? { blocks: task.blocks } : {}),
    line: JSON.stringify([task.id, stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs, task]),
  };
}

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

export function inRanges(ranges: [number, number][], id: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (id < ranges[mid][0]) hi = mid - 1;
    else if (id > ranges[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
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

/** Sets a file's mtime (through a descriptor of the very file that was checked); failing only means a staler time. */
export function touch(fd: number, ms: number): void {
  try {
    futimesSync(fd, ms / 1000, ms / 1000);
  } catch {
    // someone else's file, or a file system without times
  }
}

/** Closed tasks an index counts without their entries among those it is written from: the ones its history file holds. */
export interface HeldHistory {
  closed: [number, number][];
  completed: number;
  deleted: number;
  kids: [number, number, 0 | 1][];
  blockers: [number, number][];
}

/** Two sorted lists of id ranges as one, sorted, touching ranges joined. */
export function mergeRanges(a: [number, number][], b: [number, number][]): [number, number][] {
  const all = [...a, ...b].sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [from, to] of all) {
    const last = out.at(-1);
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/** Ranges without the ids of `ids`. */
export function rangesWithout(ranges: [number, number][], ids: ReadonlySet<number>): [number, number][] {
  if (ids.size === 0) return ranges.map(([a, b]) => [a, b]);
  const cut = [...ids].sort((a, b) => a - b);
  const out: [number, number][] = [];
  let k = 0;
  for (const [from, to] of ranges) {
    let start = from;
    while (k < cut.length && cut[k] < from) k++;
    while (k < cut.length && cut[k] <= to) {
      if (cut[k] > start) out.push([start, cut[k] - 1]);
      start = cut[k] + 1;
      k++;
    }
    if (start <= to) out.push([start, to]);
  }
  return out;
}

/** What an index says besides its entries. */
export interface IndexFields {
  dir: DirId | null;
  hwm: number | null;
  bad: string[];
  stamp: number | null;
  git: FileId | null;
}

/**
 * The history file's bytes: the closed tasks' entry lines as a part
 * (`[line,\nline]\n`) and a seal over them.
 */
export function encodeHistory(lines: string[]): Buffer {
  const body = Buffer.from(`[${lines.join(',\n')}]\n`);
  return Buffer.concat([body, seal(body, body.length)]);
}

/**
 * The header's line with `openBytes` set to what it measures, header
 * included, until the number written is the one it measures: a length that
 * crosses a power of ten (998 bytes with "openBytes":0, 1,000 with 998 in
 * it, 1,001 with 1000) takes a third look, and three passes stopped one
 * short, leaving a header that named the open part one byte off (the next
 * reader found the index unusable).
 */
function settleHeader(header: IndexHeader, openLength: number): string {
  for (;;) {
    const text = JSON.stringify(header) + '\n';
    const openBytes = Buffer.byteLength(text) + openLength;
    if (openBytes === header.openBytes) return text;
    header.openBytes = openBytes;
  }
}

/** IndexHeader.content: the parts' CRC, the history's seal, the bad names. */
function contentKey(entries: IndexLine[], openText: string, restText: string, history: HistoryRef | null, bad: string[], held: boolean): string {
  crc32 ??= process.getBuiltinModule('node:zlib').crc32;
  // Written from every entry (an exact pass): their lines in id order, wherever each is kept (history or rest part).
  if (!held) {
    let crc = 0;
    for (const e of entries) crc = crc32(e.line, crc32('\n', crc));
    return `${crc.toString(16)}-${bad.join('/')}`;
  }
  // Written from the open work alone (open-view.ts): the parts and the history they go with.
  return `v${crc32(restText, crc32(openText)).toString(16)}-${history?.seal ?? ''}-${bad.join('/')}`;
}

/** The closed children and the closed blockers of open tasks: from the entries, and what `held` says of the history's. */
function closedAroundOpen(
  openIds: ReadonlySet<number>,
  withParent: IndexLine[],
  withBlocks: IndexLine[],
  held: HeldHistory | undefined,
): { closedKids: [number, number, 0 | 1][]; closedBlockers: [number, number][] } {
  const closedKids: [number, number, 0 | 1][] = withParent
    .filter((e) => openIds.has(e.parent!))
    .map((e) => [e.parent!, e.id, e.status === 'deleted' ? 1 : 0] as [number, number, 0 | 1]);
  const closedBlockers: [number, number][] = [];
  for (const e of withBlocks) for (const d of e.blocks!) if (openIds.has(d)) closedBlockers.push([e.id, d]);
  if (held) {
    for (const kid of held.kids) if (openIds.has(kid[0])) closedKids.push(kid);
    for (const edge of held.blockers) if (openIds.has(edge[1])) closedBlockers.push(edge);
  }
  closedKids.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  closedBlockers.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  return { closedKids, closedBlockers };
}

/**
 * The index's bytes. `history` is the history file it goes with and which
 * closed tasks' entries that file holds as they are: those are left out of
 * the rest part, which keeps the other closed tasks (closed since the history
 * was written) and the unsure ids. The closed ranges, counts and closed
 * children cover every closed task either way.
 */
export function encodeIndex(
  fields: IndexFields,
  entries: IndexLine[],
  history: { ref: HistoryRef | null; holds(id: number): boolean },
  held?: HeldHistory,
): Buffer {
  entries.sort((a, b) => a.id - b.id);
  const open: string[] = [];
  const rest: string[] = [];
  const unsure: number[] = [];
  const closed: [number, number][] = [];
  const parents = new Set<number>();
  const closedWithParent: IndexLine[] = [];
  const closedWithBlocks: IndexLine[] = [];
  let completed = 0;
  let deleted = 0;
  for (const entry of entries) {
    if (entry.status === undefined) {
      unsure.push(entry.id);
      rest.push(entry.line);
    } else if (isClosed(entry.status)) {
      const last = closed.at(-1);
      if (last && last[1] === entry.id - 1) last[1] = entry.id;
      else closed.push([entry.id, entry.id]);
      if (entry.status === 'completed') completed++;
      else deleted++;
      if (entry.parent !== undefined) closedWithParent.push(entry);
      if (entry.blocks?.length) closedWithBlocks.push(entry);
      if (!history.holds(entry.id)) rest.push(entry.line);
    } else {
      open.push(entry.line);
      if (entry.parent !== undefined) parents.add(entry.parent);
    }
  }
  const openIds = new Set(entries.filter((e) => e.status !== undefined && !isClosed(e.status)).map((e) => e.id));
  const { closedKids, closedBlockers } = closedAroundOpen(openIds, closedWithParent, closedWithBlocks, held);
  if (held) {
    // Closed tasks the history holds and `entries` does not (an open view's write, open-view.ts).
    closed.splice(0, closed.length, ...mergeRanges(held.closed, closed));
    completed += held.completed;
    deleted += held.deleted;
  }
  const openText = `[${open.join(',\n')}]\n`;
  const restText = `[${rest.join(',\n')}]\n`;
  const content = contentKey(entries, openText, restText, history.ref, fields.bad, held !== undefined);
  // openBytes depends on the header's own length: settleHeader.
  const header: IndexHeader = {
    format: FORMAT,
    version: VERSION,
    keys: KNOWN_KEYS,
    dir: fields.dir,
    hwm: fields.hwm,
    closed,
    unsure,
    bad: fields.bad,
    parents: [...parents].sort((a, b) => a - b),
    history: history.ref,
    completed,
    deleted,
    closedKids,
    closedBlockers,
    content,
    stamp: fields.stamp,
    git: fields.git,
    openBytes: 0,
    open: open.length,
    rest: rest.length,
  };
  const headerText = settleHeader(header, Buffer.byteLength(openText));
  const head = Buffer.from(headerText + openText);
  const sealedHead = Buffer.concat([head, seal(head, head.length)]);
  const all = Buffer.concat([sealedHead, Buffer.from(restText)]);
  return Buffer.concat([all, seal(all, all.length)]);
}

function seal(buf: Buffer, end: number): Buffer {
  return Buffer.from(`#${checksum(buf, end)}\n`);
}

/** Checks the seal that ends at `end` (exclusive) over every byte before it. */
function sealed(buf: Buffer, end: number): boolean {
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
  crc32 ??= process.getBuiltinModule('node:zlib').crc32;
  return crc32(buf.subarray(0, end)).toString(16).padStart(8, '0');
}

let crc32: ((data: Uint8Array | string, value?: number) => number) | undefined;

function parseHeader(text: string): IndexHeader | undefined {
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

export interface IndexFile {
  header: IndexHeader;
  /** The open part and the rest, as written (JSON arrays). */
  openText: string;
  restText: string;
  /** The history's part, when the history file the header names is there, whole (readHistory); else '[]'. */
  historyText: string;
  /** The file's mtime: when an exact pass last found it right. */
  verifiedAt: number;
  /** Open on the file that was read, to move its mtime on; the caller closes it. */
  fd: number;
  /** What the whole file holds, in a few characters (indexKeyOf). */
  key: string;
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

/** The whole index, checked; undefined when missing, torn, damaged or not this version. Its parts are parsed by parseEntries. */
export function readIndex(file: string): IndexFile | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined; // missing or unreadable: the files are read instead
  }
  let kept = false;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    const buf = Buffer.allocUnsafe(stat.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) return undefined;
      got += n;
    }
    if (!sealed(buf, buf.length)) return undefined;
    const eol = buf.indexOf(10);
    const header = parseHeader(buf.toString('utf8', 0, eol));
    if (!header || header.openBytes <= eol || header.openBytes + SEAL_BYTES > buf.length - SEAL_BYTES) return undefined;
    const openText = buf.toString('utf8', eol + 1, header.openBytes);
    const restText = buf.toString('utf8', header.openBytes + SEAL_BYTES, buf.length - SEAL_BYTES);
    const historyText = (header.history && readHistory(join(file, '..', BOARD_HISTORY_FILE), header.history)) ?? '[]\n';
    kept = true;
    return { header, openText, restText, historyText, verifiedAt: stat.mtimeMs, fd, key: `${header.content}-${header.open + header.rest}` };
  } catch {
    return undefined;
  } finally {
    if (!kept) closeSync(fd);
  }
}

/**
 * The history file's part (its entries as a JSON array), when the file is the
 * one `ref` names (inode, size) and its seal holds; undefined otherwise, and
 * then every closed task is read from its file by the next exact pass.
 */
export function readHistory(file: string, ref: HistoryRef): string | undefined {
  let buf: Buffer;
  try {
    const stat = statSync(file);
    if (stat.ino !== ref.ino || stat.size !== ref.size) return undefined;
    buf = readFileSync(file);
  } catch {
    return undefined;
  }
  if (buf.length !== ref.size || !sealed(buf, buf.length) || buf.toString('latin1', buf.length - SEAL_BYTES + 1, buf.length - 1) !== ref.seal) return undefined;
  return buf.toString('utf8', 0, buf.length - SEAL_BYTES);
}

/** The seal of a history file's bytes, as its HistoryRef names it. */
export function historySeal(bytes: Buffer): string {
  return bytes.toString('latin1', bytes.length - SEAL_BYTES + 1, bytes.length - 1);
}

/**
 * The entries of an index: by position (the history first, then the rest,
 * then the open part, so a later entry of an id wins over an older one),
 * each id's position, each position's line (split on demand), and how many
 * of the first positions are the history's.
 */
export function parseEntries(index: IndexFile): { items: EntryItem[]; positions: Map<number, number>; historyItems: number; lineAt(at: number): IndexLine } {
  let items: EntryItem[];
  let historyItems = 0;
  try {
    const history = JSON.parse(index.historyText) as EntryItem[];
    historyItems = history.length;
    items = history.concat(JSON.parse(index.restText) as EntryItem[], JSON.parse(index.openText) as EntryItem[]);
  } catch {
    items = []; // cannot happen with a sealed index; then nothing is trusted
    historyItems = 0;
  }
  const positions = new Map<number, number>();
  for (let at = 0; at < items.length; at++) positions.set(items[at][0], at);
  let lines: string[] | undefined;
  return {
    items,
    positions,
    historyItems,
    lineAt(at) {
      lines ??= splitLines(index.historyText).concat(splitLines(index.restText), splitLines(index.openText));
      const item = items[at];
      if (item.length !== 6) return { id: item[0], line: lines[at] };
      const task = item[5];
      return {
        id: item[0],
        line: lines[at],
        status: task.status,
        parent: task.parent,
        ...(isClosed(task.status) && task.blocks.length ? { blocks: task.blocks } : {}),
      };
    },
  };
}

/** The header and open part of an index, as readIndexHead gives them. */
export interface IndexHead {
  header: IndexHeader;
  /** The open part's lines by task id. */
  open: Map<number, string>;
  /** The open part as written (a JSON array, one entry a line): parsed whole, it costs less than line by line. */
  openText: string;
  verifiedAt: number;
  seal: string;
}

/**
 * The header and open part of the index, checked; reads only those bytes.
 * With `wanted`, the open part only when the header says it is wanted
 * (undefined otherwise): a board with thousands of open tasks and no history
 * to fold is then read by the exact pass alone, not by both.
 */
export function readIndexHead(file: string, wanted?: (header: IndexHeader) => boolean): IndexHead | undefined {
  return withIndexFile(file, (fd) => {
    const head = readHead(fd, wanted);
    if (head) head.verifiedAt = fstatSync(fd).mtimeMs;
    return head;
  });
}

/**
 * When an exact pass last found the index right (its mtime), from its header
 * line alone: what awaitExactPass polls for. Whether the rest is whole is for
 * openClaimView to find out, which reads it next.
 */
export function readIndexVerifiedAt(file: string): number | undefined {
  return withIndexFile(file, (fd) => (readHeaderLine(fd) ? fstatSync(fd).mtimeMs : undefined));
}

/**
 * The header line alone: which tasks have open children (IndexHeader.parents),
 * a question most tasks answer with no (parents.ts). The file is renamed into
 * place whole, so a header that parses is one an exact pass wrote. The header
 * this process wrote last is answered without opening the file while the file
 * keeps the identity it wrote (a command's own refresh, then its output).
 */
export function readIndexHeader(file: string): IndexHeader | undefined {
  const st = lastWritten?.file === file ? statSync(file, { throwIfNoEntry: false }) : undefined;
  if (st && st.ino === lastWritten!.ino && st.size === lastWritten!.size && st.mtimeMs === lastWritten!.mtimeMs) return lastWritten!.header;
  return withIndexFile(file, (fd) => readHeaderLine(fd)?.header);
}

let lastWritten: { file: string; ino: number; size: number; mtimeMs: number; header: IndexHeader } | undefined;

function withIndexFile<T>(file: string, read: (fd: number) => T | undefined): T | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    return read(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The header line (its length varies with the closed ranges), parsed, with the bytes read so far. */
function readHeaderLine(fd: number): { header: IndexHeader; buf: Buffer; got: number; eol: number } | undefined {
  let buf = Buffer.alloc(16384);
  let got = 0;
  let eol = -1;
  while (eol < 0) {
    if (got === buf.length) {
      const more = Buffer.alloc(buf.length * 4);
      buf.copy(more, 0, 0, got);
      buf = more;
    }
    const n = readSync(fd, buf, got, buf.length - got, got);
    if (n === 0) return undefined;
    eol = buf.indexOf(10, got);
    got += n;
    if (eol >= got) eol = -1;
  }
  const header = parseHeader(buf.toString('utf8', 0, eol));
  return header && { header, buf, got, eol };
}

function readHead(fd: number, wanted?: (header: IndexHeader) => boolean): IndexHead | undefined {
  // The header line first, then exactly the open part.
  const line = readHeaderLine(fd);
  if (!line) return undefined;
  const { header, eol } = line;
  if (wanted && !wanted(header)) return undefined;
  let { buf, got } = line;
  if (header.openBytes <= eol) return undefined;
  const want = header.openBytes + SEAL_BYTES;
  if (want > buf.length) {
    const more = Buffer.alloc(want);
    buf.copy(more, 0, 0, got);
    buf = more;
  }
  while (got < want) {
    const n = readSync(fd, buf, got, want - got, got);
    if (n === 0) return undefined;
    got += n;
  }
  if (!sealed(buf, want)) return undefined;
  // Checked against its seal above: the same header and seal as last time are the same bytes, already split.
  const key = buf.toString('latin1', 0, eol) + buf.toString('latin1', header.openBytes, want);
  if (lastOpen?.key !== key) {
    const text = buf.toString('utf8', eol + 1, header.openBytes);
    const lines = splitLines(text);
    if (lines.length !== header.open) return undefined;
    lastOpen = { key, text, byId: new Map(lines.map((line) => [leadingId(line), line])) };
  }
  return { header, open: lastOpen.byId, openText: lastOpen.text, verifiedAt: 0, seal: buf.toString('latin1', header.openBytes, want) };
}

/**
 * The open part of the last index head read, its lines by task id, by its header
 * and seal: a claimant that claims again and again (a worker, the agent tool)
 * reads the same index until an exact pass rewrites it. Keyed by content,
 * checked against the seal on every read, not by the file's times, which
 * some file systems keep too coarsely to tell two versions apart.
 */
let lastOpen: { key: string; text: string; byId: Map<number, string> } | undefined;

let tempCount = 0;

/**
 * Writes the index atomically. Its temp file is made lazily, by the first
 * call of stamp(), whose ctime is the file system's clock at that moment.
 * Any failure (a read-only board, no space) only means no index.
 */
export class IndexWriter {
  private temp?: { fd: number | undefined; path: string; stamp: number } | null;

  constructor(private readonly runtimeDir: string) {}

  /** The file system's clock now (a new file's ctime), or undefined when nothing can be written. */
  stamp(): number | undefined {
    if (this.temp === undefined) this.temp = this.create();
    return this.temp?.stamp;
  }

  private create(): { fd: number; path: string; stamp: number } | null {
    // .tmp-….tmp: what isTempFileName (fsio.ts) matches, so doctor clears one left by a killed reader.
    const path = join(this.runtimeDir, `.tmp-${BOARD_INDEX_FILE}.${process.pid}.${++tempCount}${Math.random().toString(36).slice(2, 8)}.tmp`);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o644);
        return { fd, path, stamp: fstatSync(fd).ctimeMs };
      } catch (error) {
        if (attempt > 0 || !isErrnoException(error, 'ENOENT')) return null;
        try {
          mkdirSync(this.runtimeDir, { recursive: true });
        } catch {
          return null;
        }
      }
    }
    return null;
  }

  /** Puts `data` in place as `target`, with `verifiedAt` as its mtime; false when it could not. */
  write(target: string, data: Buffer, verifiedAt: number): boolean {
    if (this.temp === undefined) this.temp = this.create();
    const temp = this.temp;
    if (!temp || temp.fd === undefined) return false;
    try {
      let off = 0;
      while (off < data.length) off += writeSync(temp.fd, data, off, data.length - off);
      touch(temp.fd, verifiedAt);
      const { ino, size, mtimeMs } = fstatSync(temp.fd);
      closeSync(temp.fd);
      temp.fd = undefined;
      renameSync(temp.path, target);
      this.temp = null;
      const header = parseHeader(data.toString('utf8', 0, data.indexOf(10)));
      lastWritten = header && { file: target, ino, size, mtimeMs, header };
      return true;
    } catch {
      // No index this time; the next reader tries again.
      return false;
    }
  }

  /**
   * Puts the history's `data` in place (a temp file of its own, renamed):
   * the reference the index then names it by, or undefined when it could not
   * be written (the index then keeps every closed entry in its rest part).
   */
  writeHistory(target: string, data: Buffer, entries: number): HistoryRef | undefined {
    const path = join(this.runtimeDir, `.tmp-${BOARD_HISTORY_FILE}.${process.pid}.${++tempCount}${Math.random().toString(36).slice(2, 8)}.tmp`);
    let fd: number | undefined;
    try {
      fd = openSync(path, 'wx', 0o644);
      let off = 0;
      while (off < data.length) off += writeSync(fd, data, off, data.length - off);
      const { ino, size } = fstatSync(fd);
      closeSync(fd);
      fd = undefined;
      renameSync(path, target);
      return { ino, size, seal: historySeal(data), entries };
    } catch {
      if (fd !== undefined) closeSync(fd);
      try {
        unlinkSync(path);
      } catch {
        // never made, or renamed
      }
      return undefined;
    }
  }

  /** Removes the temp file unless it became the index. */
  close(): void {
    const temp = this.temp;
    if (!temp) return;
    this.temp = null;
    try {
      if (temp.fd !== undefined) closeSync(temp.fd);
      unlinkSync(temp.path);
    } catch {
      // already gone
    }
  }
}
