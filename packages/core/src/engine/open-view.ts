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
 * index without rewriting the history file (index-write-back.ts). The view
 * itself, folded, is folded-view.ts's; the sweep, history-sweep.ts's.
 */
import { CorruptTaskError } from '../errors.js';
import { isClosed, parseTask, taskFileName, type Task } from '../format/format.js';
import { readTaskFile } from '../format/task-file.js';
import { loadBoardSnapshot, readBoardNames, readHighWaterMarkQuiet, statBoardDir, taskIdOf } from './board-index.js';
import { foldHistory, foldedView, type OpenSnapshot } from './folded-view.js';
import { swept } from './history-sweep.js';
import { inRanges } from './id-ranges.js';
import {
  RUNTIME,
  boardIndexPath,
  openKeyOf,
  parseOpenLine,
  taskFromRaw,
  taskLine,
  unsureLine,
  type EntryItem,
  type IndexHeader,
  type IndexLine,
} from './index-file.js';
import { readIndexHead, type IndexHead } from './index-read.js';
import { gitIndexId, sameDir, sameFile, sameFileId } from './index-trust.js';
import { writeBack } from './index-write-back.js';
import { IndexWriter } from './index-writer.js';
import type { Stats } from 'node:fs';
import type { TaskProblem } from './store-types.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { statSync, utimesSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

// The views list the folder instead of looking at each id above the index's high-water mark when there are more.
const MAX_PROBED_IDS = 100_000;

/** Up to this many closed tasks, the views read the board whole and show them; beyond, they fold them (config `foldHistory`). */
export const FOLD_HISTORY_AT = 200;

/** The board's open work, the history folded when it holds more than `foldAt` closed tasks (else the whole board). */
export function loadOpenSnapshot(dir: string, options: { foldAt?: number; verify?: boolean } = {}): OpenSnapshot {
  const foldAt = options.foldAt ?? FOLD_HISTORY_AT;
  // A board that never had more tasks than that has no history to fold: the exact pass alone, which opens the index once.
  const mark = readHighWaterMarkQuiet(dir);
  if (mark !== null && mark <= foldAt) return loadBoardSnapshot(dir);
  // The open part only when there is a history to fold: the header line says.
  const head = readIndexHead(boardIndexPath(dir), (header) => header.completed + header.deleted > foldAt);
  if (!head || !sameFileId(head.header.git, gitIndexId(dir)) || swept(dir, head)) return foldHistory(loadBoardSnapshot(dir), foldAt);
  // verify (claims whose trust in the index ran out): this look counts as the pass claimNext trusts the index after.
  return fromIndex(dir, head, options.verify ? Date.now() : undefined) ?? foldHistory(loadBoardSnapshot(dir), foldAt);
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
    ? foldHistory(loadBoardSnapshot(dir), foldAt)
    : (unchangedKey(dir, head, mark) ?? fromIndex(dir, head, undefined) ?? foldHistory(loadBoardSnapshot(dir), foldAt));
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
    const folded = foldedView(tasks, closedNow, problems, header);
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
