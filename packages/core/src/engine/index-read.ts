/**
 * Reading the board index (index-file.ts) back: the whole file with the
 * history it names (readIndex, parseEntries: an exact pass), or only the
 * header and the open part (readIndexHead: claimNext and the open view), or
 * the header line alone (readIndexHeader: who has open children). Every part
 * is checked against its seal; anything torn, damaged or of another version
 * reads as no index, and the files are read instead.
 */
import { isClosed } from '../format/format.js';
import { BOARD_HISTORY_FILE, SEAL_BYTES, leadingId, parseHeader, sealed, splitLines, type EntryItem, type IndexHeader, type IndexLine } from './index-file.js';
import { readHistory } from './index-history.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { closeSync, fstatSync, openSync, readSync, statSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

/** An index read whole (readIndex), its parts as text. */
export interface IndexFile {
  header: IndexHeader;
  /** The open part and the rest, as written (JSON arrays). */
  openText: string;
  restText: string;
  /** The history's part, when the history file the header names is there, whole (readHistory), and was asked for; else '[]'. */
  historyText: string;
  /** The file's mtime: when an exact pass last found it right. */
  verifiedAt: number;
  /** Open on the file that was read, to move its mtime on; the caller closes it. */
  fd: number;
  /** What the whole file holds, in a few characters (indexKeyOf). */
  key: string;
}

/**
 * The whole index, checked; undefined when missing, torn, damaged or not this
 * version. Its parts are parsed by parseEntries. `history: false` leaves the
 * history file unread (a write-back keeps it as it is, by its seal).
 */
export function readIndex(file: string, options: { history?: boolean } = {}): IndexFile | undefined {
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
    const historyText = options.history === false ? '[]\n' : ((header.history && readHistory(join(file, '..', BOARD_HISTORY_FILE), header.history)) ?? '[]\n');
    kept = true;
    return { header, openText, restText, historyText, verifiedAt: stat.mtimeMs, fd, key: `${header.content}-${header.open + header.rest}` };
  } catch {
    return undefined;
  } finally {
    if (!kept) closeSync(fd);
  }
}

/** Closes the descriptor readIndex left open; closed already is fine. */
export function closeIndex(index: IndexFile): void {
  try {
    closeSync(index.fd);
  } catch {
    // closed
  }
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

/** Remembers the header of the index this process just put in place as `file`, with the identity the file has (readIndexHeader). */
export function rememberWritten(file: string, ino: number, size: number, mtimeMs: number, data: Buffer): void {
  const header = parseHeader(data.toString('utf8', 0, data.indexOf(10)));
  lastWritten = header && { file, ino, size, mtimeMs, header };
}

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
