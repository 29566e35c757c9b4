/**
 * The board index's file format (`.tasks/.runtime/board-index.v2`): a header
 * line, the open tasks' entries, a seal, the closed tasks' and unsure ids'
 * entries, a seal; how it is written (a temp file renamed into place) and
 * read back, whole or only its header and open part. Whether an entry may
 * be believed is index-trust.ts's; what reads it, board-index.ts (exact
 * passes) and claim-view.ts (claim candidates).
 */
import type { Stats } from 'node:fs';
import { isErrnoException } from '../errors.js';
import { TASK_KEYS, cloneJson, createRecord, isClosed, setOwn, type Task, type TaskStatus } from '../format/format.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { closeSync, fstatSync, futimesSync, mkdirSync, openSync, readSync, renameSync, statSync, unlinkSync, writeSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

// store.ts's RUNTIME_DIR; not imported, because store.js loads the whole write path.
export const RUNTIME = '.runtime';

/** The index file, in the board's runtime folder. The version is in the name so two versions of dotasks do not take turns rewriting it. */
export const BOARD_INDEX_FILE = 'board-index.v2';

const FORMAT = 'dotasks-board-index';

// 2: the header lists the parents of open tasks (IndexHeader.parents).
const VERSION = 2;

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
  /** Bytes from the start of the file to the seal of the open part. */
  openBytes: number;
  /** Entries in the open part and in the rest. */
  open: number;
  rest: number;
}

/** An entry: `[id, ino, size, mtimeMs, ctimeMs, task]` for a trusted file, `[id]` for one read every time. */
export type EntryItem = [number, number, number, number, number, Task] | [number];

/** An entry of the index being written: its line, and its task's status unless it is unsure (and its parent, when it is open and has one). */
export interface IndexLine {
  id: number;
  line: string;
  status?: TaskStatus;
  parent?: number;
}

/** The index file of the board at `dir`. */
export function boardIndexPath(dir: string): string {
  return join(dir, RUNTIME, BOARD_INDEX_FILE);
}

export function taskLine(task: Task, stat: Stats): IndexLine {
  return { id: task.id, status: task.status, parent: task.parent, line: JSON.stringify([task.id, stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs, task]) };
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

export function encodeIndex(dir: DirId | null, hwm: number | null, bad: string[], entries: IndexLine[]): Buffer {
  entries.sort((a, b) => a.id - b.id);
  const open: string[] = [];
  const rest: string[] = [];
  const unsure: number[] = [];
  const closed: [number, number][] = [];
  const parents = new Set<number>();
  for (const entry of entries) {
    if (entry.status === undefined) {
      unsure.push(entry.id);
      rest.push(entry.line);
    } else if (isClosed(entry.status)) {
      const last = closed.at(-1);
      if (last && last[1] === entry.id - 1) last[1] = entry.id;
      else closed.push([entry.id, entry.id]);
      rest.push(entry.line);
    } else {
      open.push(entry.line);
      if (entry.parent !== undefined) parents.add(entry.parent);
    }
  }
  const openText = `[${open.join(',\n')}]\n`;
  const restText = `[${rest.join(',\n')}]\n`;
  // openBytes depends on the header's own length: settle it in a few passes.
  const header: IndexHeader = {
    format: FORMAT,
    version: VERSION,
    keys: KNOWN_KEYS,
    dir,
    hwm,
    closed,
    unsure,
    bad,
    parents: [...parents].sort((a, b) => a - b),
    openBytes: 0,
    open: open.length,
    rest: rest.length,
  };
  let headerText = '';
  for (let pass = 0; pass < 3; pass++) {
    headerText = JSON.stringify(header) + '\n';
    const openBytes = Buffer.byteLength(headerText) + Buffer.byteLength(openText);
    if (openBytes === header.openBytes) break;
    header.openBytes = openBytes;
  }
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

let crc32: ((data: Uint8Array) => number) | undefined;

function parseHeader(text: string): IndexHeader | undefined {
  const header = JSON.parse(text) as IndexHeader;
  if (header === null || typeof header !== 'object' || header.format !== FORMAT || header.version !== VERSION || header.keys !== KNOWN_KEYS) return undefined;
  if (!Number.isSafeInteger(header.openBytes) || !Number.isSafeInteger(header.open) || !Number.isSafeInteger(header.rest)) return undefined;
  if (header.hwm !== null && !Number.isSafeInteger(header.hwm)) return undefined;
  if (!Array.isArray(header.closed) || !Array.isArray(header.unsure) || !Array.isArray(header.bad) || !Array.isArray(header.parents)) return undefined;
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
  /** The file's mtime: when an exact pass last found it right. */
  verifiedAt: number;
  /** Open on the file that was read, to move its mtime on; the caller closes it. */
  fd: number;
  /** What the whole file holds, in a few characters (indexKeyOf). */
  key: string;
}

/**
 * A short name for an index's bytes: their length and the seal that ends
 * them, a CRC of every byte before it. Two indexes with one key hold the
 * same tasks (up to a CRC collision), so what is derived from a board read
 * whole through its index can be kept under this key.
 */
export function indexKeyOf(buf: Buffer): string {
  return `${buf.length}-${buf.toString('latin1', buf.length - SEAL_BYTES + 1, buf.length - 1)}`;
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
    kept = true;
    return { header, openText, restText, verifiedAt: stat.mtimeMs, fd, key: indexKeyOf(buf) };
  } catch {
    return undefined;
  } finally {
    if (!kept) closeSync(fd);
  }
}

/** The entries of an index: by position (the open part first), each id's position, and each position's line (split on demand). */
export function parseEntries(index: IndexFile): { items: EntryItem[]; positions: Map<number, number>; lineAt(at: number): IndexLine } {
  let items: EntryItem[];
  try {
    items = (JSON.parse(index.openText) as EntryItem[]).concat(JSON.parse(index.restText) as EntryItem[]);
  } catch {
    items = []; // cannot happen with a sealed index; then nothing is trusted
  }
  const positions = new Map<number, number>();
  for (let at = 0; at < items.length; at++) positions.set(items[at][0], at);
  let lines: string[] | undefined;
  return {
    items,
    positions,
    lineAt(at) {
      lines ??= splitLines(index.openText).concat(splitLines(index.restText));
      const item = items[at];
      return { id: item[0], line: lines[at], status: item.length === 6 ? item[5].status : undefined, parent: item.length === 6 ? item[5].parent : undefined };
    },
  };
}

/** The header and open part of an index, as readIndexHead gives them. */
export interface IndexHead {
  header: IndexHeader;
  /** The open part's lines by task id. */
  open: Map<number, string>;
  verifiedAt: number;
  seal: string;
}

/** The header and open part of the index, checked; reads only those bytes. */
export function readIndexHead(file: string): IndexHead | undefined {
  return withIndexFile(file, (fd) => {
    const head = readHead(fd);
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

function readHead(fd: number): IndexHead | undefined {
  // The header line first, then exactly the open part.
  const line = readHeaderLine(fd);
  if (!line) return undefined;
  const { header, eol } = line;
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
    const lines = splitLines(buf.toString('utf8', eol + 1, header.openBytes));
    if (lines.length !== header.open) return undefined;
    lastOpen = { key, byId: new Map(lines.map((line) => [leadingId(line), line])) };
  }
  return { header, open: lastOpen.byId, verifiedAt: 0, seal: buf.toString('latin1', header.openBytes, want) };
}

/**
 * The open part of the last index head read, its lines by task id, by its header
 * and seal: a claimant that claims again and again (a worker, the agent tool)
 * reads the same index until an exact pass rewrites it. Keyed by content,
 * checked against the seal on every read, not by the file's times, which
 * some file systems keep too coarsely to tell two versions apart.
 */
let lastOpen: { key: string; byId: Map<number, string> } | undefined;

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

  /** Puts `data` in place as `target`, with `verifiedAt` as its mtime. */
  write(target: string, data: Buffer, verifiedAt: number): void {
    if (this.temp === undefined) this.temp = this.create();
    const temp = this.temp;
    if (!temp || temp.fd === undefined) return;
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
    } catch {
      // No index this time; the next reader tries again.
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
