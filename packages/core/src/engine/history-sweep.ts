/**
 * The sweep of a folded board's history (open-view.ts): an edit by hand of a
 * closed task's file is found by looking at SWEEP_FILES closed files at each
 * read, in turn, where the last one left off (SWEEP_FILE); one whose ctime is
 * not older than the last exact pass (IndexHeader.stamp), nor the entry the
 * index has for it, changed. So every closed file is looked at within
 * closed / SWEEP_FILES reads (docs/decisions.md, "History the open work does
 * not pay for").
 */
import { taskFileName, type Task } from '../format/format.js';
import { RUNTIME, boardIndexPath, type EntryItem } from './index-file.js';
import { closeIndex, readIndex, type IndexHead } from './index-read.js';
import { sameFile } from './index-trust.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { readFileSync, statSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

/** Closed files the sweep looks at in one read. */
export const SWEEP_FILES = 1000;

/** Where the sweep goes on: the next closed id to look at. */
export const SWEEP_FILE = 'history-sweep';

/**
 * Whether one of the next SWEEP_FILES closed files changed since the index
 * last had it. Moves the sweep on.
 */
export function swept(dir: string, head: IndexHead): boolean {
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
    closeIndex(index);
  }
}
