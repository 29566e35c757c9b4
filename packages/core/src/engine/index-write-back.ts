/**
 * What the open view learned, written back into the board index without
 * rewriting its history file: the open part anew, the rest part with the
 * tasks closed since the history was written (up to MAX_RECENT_CLOSED), and
 * the header's counts of what the history holds beside them (HeldHistory).
 * After a change that wrote closed tasks, noteClosedWritten marks them
 * unsure there, so the next open view reads them instead of waiting for the
 * sweep (history-sweep.ts).
 */
import { isErrnoException } from '../errors.js';
import { isClosed, type Task } from '../format/format.js';
import { MAX_RECENT_CLOSED, loadBoardSnapshot, readHighWaterMarkQuiet } from './board-index.js';
import { SWEEP_FILES } from './history-sweep.js';
import { inRanges, rangesWithout } from './id-ranges.js';
import { encodeIndex, type HeldHistory } from './index-encode.js';
import { RUNTIME, boardIndexPath, openKeyOf, splitLines, unsureLine, type EntryItem, type IndexHeader, type IndexLine } from './index-file.js';
import { closeIndex, readIndex, readIndexHeader, type IndexFile, type IndexHead } from './index-read.js';
import { IndexWriter } from './index-writer.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { join } = process.getBuiltinModule('node:path');

/**
 * Writes what the view learned into the index, the history file as it is:
 * the open part from `lines`, the rest part with the tasks closed since.
 * Returns false when it could not (the index moved on meanwhile, or too many
 * tasks closed since the history: the next exact pass writes it anew).
 */
export function writeBack(
  dir: string,
  writer: IndexWriter,
  head: IndexHead,
  lines: IndexLine[],
  hwm: number | null,
  verifiedAt: number | undefined,
): string | undefined {
  // The history file is kept as it is (its seal is checked against the view's), so it is not read: on a board of
  // 100,000 closed tasks it is megabytes, and a worker's look at the open work after its own claim wrote back.
  const old = readIndex(boardIndexPath(dir), { history: false });
  if (!old) return undefined;
  try {
    if (old.header.openBytes !== head.header.openBytes || old.header.history?.seal !== head.header.history?.seal) return undefined;
    const mine = new Set(lines.map((l) => l.id));
    // Unsure entries of the rest part: `lines` has them again.
    const rest = restPart(old, mine);
    const recent = [...lines, ...rest.lines].filter((l) => l.status !== undefined && isClosed(l.status)).length;
    if (recent > MAX_RECENT_CLOSED) return undefined;
    const h = old.header;
    const held = heldBeyond(h, rest, mine);
    // The folder's identity stays the old one: this view did not list it, so the next exact pass does.
    const fields = { dir: h.dir, hwm, bad: h.bad, stamp: h.stamp, git: h.git };
    const bytes = encodeIndex(fields, [...lines, ...rest.lines], { ref: h.history, holds: () => false }, held);
    // Not a pass over every file: the mtime (when an exact pass last found the index right) stays, unless asked.
    if (!writer.write(boardIndexPath(dir), bytes, verifiedAt ?? old.verifiedAt)) return undefined;
    // Unsure entries are read every time: the bytes do not say what they hold.
    if (lines.some((l) => l.status === undefined)) return undefined;
    const eol = bytes.indexOf(10);
    const openBytes = (JSON.parse(bytes.toString('utf8', 0, eol)) as { openBytes: number }).openBytes;
    return openKeyOf(openBytes, bytes.toString('latin1', openBytes, openBytes + 10));
  } catch (error) {
    if (isErrnoException(error)) return undefined;
    throw error;
  } finally {
    closeIndex(old);
  }
}

/**
 * After a change wrote tasks: those the index has as closed (a note on a
 * completed task, a sync's merge of a closed task's fields) become unsure
 * there, so the next open view reads them, and sees what changed, instead of
 * waiting for the sweep. On a board whose closed tasks the sweep covers in
 * one read, nothing to do. A task the change moved from closed to open is
 * left to an exact pass, made here.
 */
export function noteClosedWritten(dir: string, written: readonly Task[]): void {
  const mark = readHighWaterMarkQuiet(dir);
  if (written.length === 0 || mark === null || mark <= SWEEP_FILES) return;
  // The header line says which tasks are closed: a change of open tasks only (a create, most completions) reads no more.
  const closedNow = readIndexHeader(boardIndexPath(dir))?.closed;
  if (!closedNow || !written.some((t) => inRanges(closedNow, t.id))) return;
  const old = readIndex(boardIndexPath(dir));
  if (!old) return;
  const writer = new IndexWriter(join(dir, RUNTIME));
  try {
    const h = old.header;
    const ids = new Set(written.filter((t) => inRanges(h.closed, t.id)).map((t) => t.id));
    if (ids.size === 0) return;
    if (written.some((t) => ids.has(t.id) && !isClosed(t.status))) {
      loadBoardSnapshot(dir);
      return;
    }
    const lines: IndexLine[] = [];
    const openItems = JSON.parse(old.openText) as EntryItem[];
    const openLines = splitLines(old.openText);
    openItems.forEach((item, i) => {
      if (item.length === 6) lines.push({ id: item[0], line: openLines[i], status: item[5].status, parent: item[5].parent });
    });
    const rest = restPart(old, ids);
    lines.push(...rest.lines, ...rest.unsure.map(unsureLine));
    for (const id of ids) lines.push(unsureLine(id));
    // The marked tasks were closed and still are: counted by what they are now, out of the history's counts.
    const fromHistory = written.filter((t) => ids.has(t.id) && !rest.ids.has(t.id));
    const held = heldBeyond(h, rest, ids, {
      completed: fromHistory.filter((t) => t.status === 'completed').length,
      deleted: fromHistory.filter((t) => t.status === 'deleted').length,
    });
    const fields = { dir: h.dir, hwm: h.hwm, bad: h.bad, stamp: h.stamp, git: h.git };
    writer.write(boardIndexPath(dir), encodeIndex(fields, lines, { ref: h.history, holds: () => false }, held), old.verifiedAt);
  } catch (error) {
    if (!isErrnoException(error) && !(error instanceof SyntaxError)) throw error;
  } finally {
    writer.close();
    closeIndex(old);
  }
}

/**
 * The index's rest part (tasks closed since the history was written, and
 * unsure ids) without the ids of `skip`: the closed entries as lines, the
 * unsure ids, every id it held, and how many completed and deleted it counted.
 */
function restPart(old: IndexFile, skip: ReadonlySet<number>): { lines: IndexLine[]; unsure: number[]; ids: Set<number>; completed: number; deleted: number } {
  const out = { lines: [] as IndexLine[], unsure: [] as number[], ids: new Set<number>(), completed: 0, deleted: 0 };
  const items = JSON.parse(old.restText) as EntryItem[];
  const lines = splitLines(old.restText);
  items.forEach((item, i) => {
    const id = item[0];
    out.ids.add(id);
    if (item.length !== 6) {
      if (!skip.has(id)) out.unsure.push(id);
      return;
    }
    const task = item[5];
    if (task.status === 'completed') out.completed++;
    else if (task.status === 'deleted') out.deleted++;
    if (!skip.has(id)) out.lines.push({ id, line: lines[i], status: task.status, parent: task.parent, ...(task.blocks.length ? { blocks: task.blocks } : {}) });
  });
  return out;
}

/**
 * What the history file holds beyond the lines an index is rewritten from:
 * the header's closed tasks without the rest part's and `taken` ones, and
 * `less` more out of the counts (tasks of the history that `taken` holds).
 */
function heldBeyond(
  h: IndexHeader,
  rest: { ids: ReadonlySet<number>; completed: number; deleted: number },
  taken: ReadonlySet<number>,
  less = { completed: 0, deleted: 0 },
): HeldHistory {
  const out = (id: number) => rest.ids.has(id) || taken.has(id);
  return {
    closed: rangesWithout(h.closed, new Set([...rest.ids, ...taken])),
    completed: h.completed - rest.completed - less.completed,
    deleted: h.deleted - rest.deleted - less.deleted,
    kids: h.closedKids.filter((k) => !out(k[1])),
    blockers: h.closedBlockers.filter((b) => !out(b[0])),
  };
}
