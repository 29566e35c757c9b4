/**
 * The open work of a board whose history is large, as `tasks list`, `tasks
 * ready`, `tasks search` and `tasks show` read it (docs/decisions.md,
 * "History the open work does not pay for"): the open tasks in full, and the
 * completed and deleted ones as counts, without looking at their files.
 *
 * It reads the index's header and open part (index-file.ts), checks every
 * open and unsure file (a stat, and a read when one changed) and the ids
 * above the high-water mark the index saw, and takes the closed tasks from
 * the header: final states no command reopens. What could still change one
 * is seen as follows, and each means an exact pass (board-index.ts) first:
 *
 * - a git operation (pull, checkout, merge, reset) moves the repository's
 *   git index (IndexHeader.git);
 * - an edit by hand of a closed task's file is found by the sweep: each read
 *   looks at SWEEP_FILES closed files, in turn, and one whose ctime is not
 *   older than the last exact pass (IndexHeader.stamp), nor the entry the
 *   index has for it, changed; so every closed file is looked at within
 *   closed / SWEEP_FILES reads (`tasks list --all`, doctor and the watcher see
 *   such an edit at once).
 *
 * What it learned (open tasks that changed, closed or came) goes into the
 * index without rewriting the history file: the rest part keeps the tasks
 * closed since, up to MAX_RECENT_CLOSED.
 */
import { CorruptTaskError, isErrnoException } from '../errors.js';
import { createRecord, isClosed, parseTask, taskFileName, type Task, type TaskStatus } from '../format/format.js';
import { readTaskFile } from '../format/task-file.js';
import { shareHierarchy } from '../graph/hierarchy.js';
import { MAX_RECENT_CLOSED, loadBoardSnapshot, readBoardNames, readHighWaterMarkQuiet, statBoardDir, taskIdOf } from './board-index.js';
import {
  RUNTIME,
  boardIndexPath,
  type IndexHeader,
  encodeIndex,
  inRanges,
  openKeyOf,
  parseOpenLine,
  rangesWithout,
  readIndex,
  readIndexHead,
  splitLines,
  taskFromRaw,
  taskLine,
  unsureLine,
  IndexWriter,
  type EntryItem,
  type HeldHistory,
  type IndexFile,
  type IndexHead,
  type IndexLine,
} from './index-file.js';
import { gitIndexId, sameDir, sameFile, sameFileId } from './index-trust.js';
import type { Stats } from 'node:fs';
import type { BoardSnapshot, TaskProblem } from './store-types.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { closeSync, readFileSync, statSync, utimesSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

// The views list the folder instead of looking at each id above the index's high-water mark when there are more.
const MAX_PROBED_IDS = 100_000;

/** Closed files the sweep looks at in one read. */
export const SWEEP_FILES = 1000;

/** Where the sweep goes on: the next closed id to look at. */
export const SWEEP_FILE = 'history-sweep';

/** Up to this many closed tasks, the views read the board whole and show them; beyond, they fold them (config `foldHistory`). */
export const FOLD_HISTORY_AT = 200;

/** The completed and deleted tasks a folded view counts without reading them. */
export type FoldedHistory = NonNullable<BoardSnapshot['history']>;

/**
 * A board read for its open work. With `history`, `tasks` holds the open
 * tasks only and the closed ones are counted there; `byId` still answers
 * for a closed task as far as its status goes (a stub: no subject), which
 * is all readiness needs. `children` lists the closed children of open
 * tasks, as stubs, for their progress. Without `history` it is the whole
 * board (loadBoardSnapshot), folded by nobody.
 */
export interface OpenSnapshot extends BoardSnapshot {
  children?: Task[];
  /** With `history`: the closed tasks that blocked open ones, as `[closed, open]` (their results go downstream). */
  closedBlockers?: [number, number][];
}

/**
 * The tasks to look for a task's blockers among (results.ts, upstreamOf):
 * the view's tasks, and for a folded history a stub for each closed task
 * that blocked an open one (a completed blocker leaves blockedBy).
 */
export function blockersAmong(open: OpenSnapshot): Task[] {
  if (!open.closedBlockers?.length) return open.tasks;
  const stubs = new Map<number, Task>();
  for (const [closed, dependent] of open.closedBlockers) {
    let s = stubs.get(closed);
    if (!s) stubs.set(closed, (s = stub(closed, 'completed')));
    s.blocks.push(dependent);
  }
  return [...open.tasks, ...stubs.values()];
}

/** The board's open work, the history folded when it holds more than `foldAt` closed tasks (else the whole board). */
export function loadOpenSnapshot(dir: string, options: { foldAt?: number; verify?: boolean } = {}): OpenSnapshot {
  const foldAt = options.foldAt ?? FOLD_HISTORY_AT;
  // A board that never had more tasks than that has no history to fold: the exact pass alone, which opens the index once.
  const mark = readHighWaterMarkQuiet(dir);
  if (mark !== null && mark <= foldAt) return loadBoardSnapshot(dir);
  // The open part only when there is a history to fold: the header line says.
  const head = readIndexHead(boardIndexPath(dir), (header) => header.completed + header.deleted > foldAt);
  if (!head || !sameFileId(head.header.git, gitIndexId(dir)) || swept(dir, head)) return fold(loadBoardSnapshot(dir), foldAt);
  // verify (claims whose trust in the index ran out): this look counts as the pass claimNext trusts the index after.
  return fromIndex(dir, head, options.verify ? Date.now() : undefined) ?? fold(loadBoardSnapshot(dir), foldAt);
}

/**
 * The open view's key (OpenSnapshot.indexKey) of a board with a history to
 * fold, as loadOpenSnapshot would give it, for a sync that only asks whether
 * anything changed (sync/quiet-sync.ts): when the index still holds every
 * open file as it is (a stat each, no text parsed, no task built), the key
 * comes from the header and seal; otherwise the open view is taken (and
 * writes what it learned). Undefined: no history to fold, or no key.
 */
export function openViewKey(dir: string, foldAt = FOLD_HISTORY_AT): string | undefined {
  const mark = readHighWaterMarkQuiet(dir);
  if (mark === null || mark <= foldAt) return undefined;
  const head = readIndexHead(boardIndexPath(dir), (header) => header.completed + header.deleted > foldAt);
  // The same checks as loadOpenSnapshot, each once (the sweep moves on with every look).
  const trusted = head !== undefined && sameFileId(head.header.git, gitIndexId(dir)) && !swept(dir, head);
  const view = !trusted
    ? fold(loadBoardSnapshot(dir), foldAt)
    : (unchangedKey(dir, head, mark) ?? fromIndex(dir, head, undefined) ?? fold(loadBoardSnapshot(dir), foldAt));
  if (typeof view === 'string') return view;
  return view.history ? view.indexKey : undefined;
}

/** openKeyOf the index's head when nothing it holds changed: no unsure or unknown id, the same mark, every open file as its entry says. */
function unchangedKey(dir: string, head: IndexHead, hwm: number): string | undefined {
  const { header } = head;
  if (header.unsure.length || header.hwm !== hwm) return undefined;
  const { unknown, present } = unknownIds(dir, header, (id) => head.open.has(id) || inRanges(header.closed, id));
  if (present || unknown.size) return undefined;
  // `task_N.json` in the board folder, as taskFileName names it (a template: path.join costs as much as the stat's own work).
  const prefix = join(dir, 'task_');
  for (const [id, line] of head.open) {
    const stat = statSync(`${prefix}${id}.json`, { throwIfNoEntry: false });
    if (!stat || !stat.isFile() || !sameIdentity(line, stat)) return undefined;
  }
  return openKeyOf(header.openBytes, head.seal);
}

/**
 * Whether an entry line `[id,ino,size,mtimeMs,ctimeMs,{…}]` names the file
 * identity `stat` has (as sameFile), read without parsing the task: the
 * integers digit by digit, the times as JSON wrote them.
 */
function sameIdentity(line: string, stat: Stats): boolean {
  let at = line.indexOf(',') + 1;
  const integer = (): number => {
    let n = 0;
    let c = line.charCodeAt(at);
    if (c < 48 || c > 57) return -1;
    for (; c >= 48 && c <= 57; c = line.charCodeAt(++at)) n = n * 10 + (c - 48);
    return line.charCodeAt(at++) === 44 ? n : -1;
  };
  const time = (): number => {
    const comma = line.indexOf(',', at);
    const n = comma < 0 ? NaN : Number(line.slice(at, comma));
    at = comma + 1;
    return n;
  };
  return at > 0 && integer() === stat.ino && integer() === stat.size && time() === stat.mtimeMs && time() === stat.ctimeMs;
}

/** A whole board as a folded view, when it has more than `foldAt` closed tasks. */
function fold(snapshot: BoardSnapshot, foldAt: number): OpenSnapshot {
  let completed = 0;
  let deleted = 0;
  for (const t of snapshot.tasks) {
    if (t.status === 'completed') completed++;
    else if (t.status === 'deleted') deleted++;
  }
  if (completed + deleted <= foldAt) return snapshot;
  const open = snapshot.tasks.filter((t) => !isClosed(t.status));
  const openIds = new Set(open.map((t) => t.id));
  const children = snapshot.tasks.filter((t) => isClosed(t.status) && t.parent !== undefined && openIds.has(t.parent));
  shareHierarchy(open, { tasks: [...open, ...children] });
  const closedBlockers: [number, number][] = [];
  for (const t of snapshot.tasks) if (isClosed(t.status)) for (const d of t.blocks) if (openIds.has(d)) closedBlockers.push([t.id, d]);
  return { tasks: open, byId: snapshot.byId, problems: snapshot.problems, history: { completed, deleted }, children, closedBlockers };
}

/**
 * The sweep (see the top of this file): whether one of the next SWEEP_FILES
 * closed files changed since the index last had it. Moves the sweep on.
 */
function swept(dir: string, head: IndexHead): boolean {
  const { closed, stamp } = head.header;
  if (stamp === null) return true;
  const cursorPath = join(dir, RUNTIME, SWEEP_FILE);
  let next = 0;
  try {
    next = Number(readFileSync(cursorPath, 'utf8')) || 0;
  } catch {
    // first sweep
  }
  const ids = sweepIds(closed, next, SWEEP_FILES);
  let suspects: number[] = [];
  for (const id of ids) {
    const stat = statSync(join(dir, taskFileName(id)), { throwIfNoEntry: false });
    if (!stat || !stat.isFile()) return true;
    if (stat.ctimeMs >= stamp) suspects.push(id);
  }
  // Changed since the exact pass: unchanged if it is a task closed since, whose entry is in the rest part.
  if (suspects.length) {
    const recent = recentEntries(dir);
    suspects = suspects.filter((id) => {
      const entry = recent?.get(id);
      const stat = statSync(join(dir, taskFileName(id)), { throwIfNoEntry: false });
      return !(entry && stat && sameFile([entry[1], entry[2], entry[3], entry[4]], stat));
    });
    if (suspects.length) return true;
  }
  try {
    writeFileSync(cursorPath, String(ids.length ? ids[ids.length - 1] + 1 : 0));
  } catch {
    // a read-only board: the sweep starts over next time
  }
  return false;
}

/** Up to `count` ids of `ranges` from `from` on, going round to the start. */
export function sweepIds(ranges: [number, number][], from: number, count: number): number[] {
  const ids: number[] = [];
  for (let round = 0; round < 2 && ids.length < count; round++) {
    for (const [a, b] of ranges) {
      for (let id = Math.max(a, round === 0 ? from : a); id <= b && ids.length < count; id++) {
        if (round === 1 && id >= from) return ids;
        ids.push(id);
      }
    }
    if (round === 0 && from === 0) break;
  }
  return ids;
}

/** The entries of the index's rest part (tasks closed since the history was written), by id. */
function recentEntries(dir: string): Map<number, [number, number, number, number, number, Task]> | undefined {
  const index = readIndex(boardIndexPath(dir));
  if (!index) return undefined;
  try {
    const items = JSON.parse(index.restText) as EntryItem[];
    return new Map(items.filter((i) => i.length === 6).map((i) => [i[0], i as [number, number, number, number, number, Task]]));
  } catch {
    return undefined;
  } finally {
    closeQuiet(index.fd);
  }
}

/** The open view from the index's head; undefined when it needs an exact pass instead (the folder had to be listed). */
function fromIndex(dir: string, head: IndexHead, verifiedAt: number | undefined): OpenSnapshot | undefined {
  const header = head.header;
  const hwm = readHighWaterMarkQuiet(dir);
  const unsure = new Set(header.unsure);
  const { unknown, present } = unknownIds(dir, header, (id) => head.open.has(id) || unsure.has(id) || inRanges(header.closed, id));
  if (present) return undefined;
  const writer = new IndexWriter(join(dir, RUNTIME));
  try {
    const tasks: Task[] = [];
    const closedNow: Task[] = [];
    const problems: TaskProblem[] = [];
    // The index's lines: kept ones as they are, the ones read again new (unsure when too recent to trust).
    const lines: IndexLine[] = [];
    let changed = false;
    const take = (task: Task) => (isClosed(task.status) ? closedNow : tasks).push(task);
    const readAgain = (id: number, wasUnsure: boolean) => {
      const path = join(dir, taskFileName(id));
      const stamp = writer.stamp();
      try {
        const read = readTaskFile(path);
        if (read === undefined) {
          changed = true; // gone
          return;
        }
        const task = parseTask(read.text, path);
        take(task);
        const line = stamp !== undefined && read.stat.ctimeMs < stamp ? taskLine(task, read.stat) : unsureLine(id);
        if (!wasUnsure || line.status !== undefined) changed = true;
        lines.push(line);
      } catch (error) {
        if (!(error instanceof CorruptTaskError)) throw error;
        problems.push({ file: error.file, id, line: error.line, column: error.column, message: String(error.details.problem) });
        if (!wasUnsure) changed = true;
        lines.push(unsureLine(id));
      }
    };
    // The open part parsed whole (thousands of open tasks: line by line cost twice as much).
    const entries = parseOpenPart(head);
    for (const [id, line] of head.open) {
      const entry = entries.get(id) ?? parseOpenLine(line);
      const stat = entry && statSync(join(dir, taskFileName(id)), { throwIfNoEntry: false });
      if (entry && stat && stat.isFile() && sameFile([entry[1], entry[2], entry[3], entry[4]], stat)) {
        tasks.push(taskFromRaw(entry[5]));
        lines.push({ id, line, status: entry[5].status, parent: entry[5].parent });
      } else readAgain(id, false);
    }
    for (const id of unsure) readAgain(id, true);
    for (const id of unknown) readAgain(id, false);
    const moved = changed || header.hwm !== hwm;
    const written = moved ? writeBack(dir, writer, head, lines, hwm, verifiedAt) : undefined;
    if (written === undefined && verifiedAt !== undefined) touchIndex(dir, verifiedAt);
    const folded = view(tasks, closedNow, problems, header);
    // The index now says what this view holds (it found nothing new, or wrote what it found): a key for what is derived from it.
    const key = moved ? written : unsure.size === 0 ? openKeyOf(header.openBytes, head.seal) : undefined;
    return key !== undefined ? { ...folded, indexKey: key } : folded;
  } finally {
    writer.close();
  }
}

/** Moves the index's mtime on: when a look that claims trust found it right. */
function touchIndex(dir: string, at: number): void {
  try {
    utimesSync(boardIndexPath(dir), at / 1000, at / 1000);
  } catch {
    // gone meanwhile: the next claim makes the pass
  }
}

/** The open part's entries by id, in one JSON.parse; empty when it does not parse (each line is then tried alone). */
function parseOpenPart(head: IndexHead): Map<number, [number, number, number, number, number, Task]> {
  const byId = new Map<number, [number, number, number, number, number, Task]>();
  try {
    for (const item of JSON.parse(head.openText) as EntryItem[])
      if (item.length === 6 && item[5] !== null && typeof item[5] === 'object') byId.set(item[0], item as [number, number, number, number, number, Task]);
  } catch {
    byId.clear();
  }
  return byId;
}

/** The folded view: the open tasks, the closed ones counted, a stub for each closed id. */
function view(tasks: Task[], closedNow: Task[], problems: TaskProblem[], header: IndexHead['header']): OpenSnapshot {
  tasks.sort((a, b) => a.id - b.id);
  problems.sort((a, b) => (a.id ?? 0) - (b.id ?? 0) || a.file.localeCompare(b.file));
  const known = new Map<number, Task>(tasks.map((t) => [t.id, t]));
  const nowClosed = new Set(closedNow.map((t) => t.id));
  for (const t of closedNow) known.set(t.id, t);
  let completed = header.completed;
  let deleted = header.deleted;
  for (const t of closedNow) {
    if (inRanges(header.closed, t.id)) continue; // counted already
    if (t.status === 'completed') completed++;
    else deleted++;
  }
  const openIds = new Set(tasks.map((t) => t.id));
  const children: Task[] = closedNow.filter((t) => t.parent !== undefined && openIds.has(t.parent));
  for (const [parent, child, gone] of header.closedKids) {
    if (openIds.has(parent) && !nowClosed.has(child)) children.push(stub(child, gone ? 'deleted' : 'completed', parent));
  }
  // Progress ("3/5 done") counts the closed children too.
  shareHierarchy(tasks, { tasks: [...tasks, ...children] });
  const closedBlockers = header.closedBlockers.filter(([closed, dependent]) => openIds.has(dependent) && !nowClosed.has(closed));
  for (const t of closedNow) for (const d of t.blocks) if (openIds.has(d)) closedBlockers.push([t.id, d]);
  return { tasks, byId: new ClosedStubs(known, header.closed), problems, history: { completed, deleted }, children, closedBlockers };
}

/** The tasks read, and for any other id the index has as closed, a stub: closed, nothing else known. */
class ClosedStubs extends Map<number, Task> {
  constructor(
    known: Map<number, Task>,
    private readonly closed: [number, number][],
  ) {
    super(known);
  }

  override get(id: number): Task | undefined {
    return super.get(id) ?? (inRanges(this.closed, id) ? stub(id, 'completed') : undefined);
  }

  override has(id: number): boolean {
    return super.has(id) || inRanges(this.closed, id);
  }

  /** Whether `id` is only a stub here (closed, its file not read). */
  isStub(id: number): boolean {
    return !super.has(id) && inRanges(this.closed, id);
  }

  /** The same, with these tasks read in full. */
  with(tasks: Task[]): ClosedStubs {
    const known = new Map<number, Task>(this);
    for (const t of tasks) known.set(t.id, t);
    return new ClosedStubs(known, this.closed);
  }
}

/**
 * A folded view with some closed tasks read in full (`tasks show`: the
 * task's closed children and ancestors, whose subjects it prints).
 * `read` gives a task's file, or undefined.
 */
export function withClosedRead(open: OpenSnapshot, ids: Iterable<number>, read: (id: number) => Task | undefined): OpenSnapshot {
  const byId = open.byId;
  if (!(byId instanceof ClosedStubs)) return open;
  const full: Task[] = [];
  for (const id of ids) {
    const stubbed = byId.isStub(id) || open.children?.some((c) => c.id === id);
    const task = stubbed ? read(id) : undefined;
    if (task) full.push(task);
  }
  if (!full.length) return open;
  const replaced = new Map(full.map((t) => [t.id, t]));
  const children = (open.children ?? []).map((c) => replaced.get(c.id) ?? c);
  const tasks = [...open.tasks];
  shareHierarchy(tasks, { tasks: [...tasks, ...children] });
  return { ...open, tasks, byId: byId.with(full), children };
}

/** The ids of a task's closed children in a folded view, and of the closed ones above it. */
export function closedAround(open: OpenSnapshot, task: Task): number[] {
  const ids = (open.children ?? []).filter((c) => c.parent === task.id).map((c) => c.id);
  const seen = new Set<number>([task.id]);
  for (let at = task.parent; at !== undefined && !seen.has(at);) {
    seen.add(at);
    ids.push(at);
    at = open.byId.get(at)?.parent;
  }
  return ids;
}

function stub(id: number, status: TaskStatus, parent?: number): Task {
  return {
    id,
    subject: '',
    description: '',
    status,
    owner: '',
    blockedBy: [],
    blocks: [],
    extra: createRecord(),
    ...(parent !== undefined ? { parent } : {}),
  };
}

/**
 * Writes what the view learned into the index, the history file as it is:
 * the open part from `lines`, the rest part with the tasks closed since.
 * Returns false when it could not (the index moved on meanwhile, or too many
 * tasks closed since the history: the next exact pass writes it anew).
 */
function writeBack(
  dir: string,
  writer: IndexWriter,
  head: IndexHead,
  lines: IndexLine[],
  hwm: number | null,
  verifiedAt: number | undefined,
): string | undefined {
  const old = readIndex(boardIndexPath(dir));
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
    closeQuiet(old.fd);
  }
}

/**
 * The task files the index at `head` does not know, when the folder changed
 * since it listed them. dotasks hands out ids up to `.highwatermark` (a git
 * pull that brings tasks raises it too), so the ids above the index's mark
 * are looked at one by one; a file made some other way below the mark waits
 * for the next exact pass, like a reopened task. Without both marks the
 * folder is listed, and `present` holds every task id in it (an id the index
 * has that is not there is gone).
 */
export function unknownIds(dir: string, header: IndexHeader, known: (id: number) => boolean): { unknown: Set<number>; present?: Set<number> } {
  const unknown = new Set<number>();
  if (header.dir && sameDir(header.dir, statBoardDir(dir))) return { unknown };
  const hwm = readHighWaterMarkQuiet(dir);
  if (hwm !== null && header.hwm !== null && hwm >= header.hwm && hwm - header.hwm <= MAX_PROBED_IDS) {
    for (let id = header.hwm + 1; id <= hwm; id++) if (!known(id)) unknown.add(id);
    return { unknown };
  }
  const present = new Set<number>();
  for (const name of readBoardNames(dir)) {
    const id = taskIdOf(name);
    if (id === undefined) continue;
    present.add(id);
    if (!known(id)) unknown.add(id);
  }
  return { unknown, present };
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
    closeQuiet(old.fd);
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

function closeQuiet(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // closed
  }
}
