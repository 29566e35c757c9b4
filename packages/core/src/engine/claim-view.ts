/**
 * The board as claimNext sees it (docs/decisions.md, "The board index"): it
 * only chooses candidates, which the claim re-checks under the task's lock.
 * It looks at the open tasks, at files it could not trust and at ids above
 * the high-water mark the index saw, and takes the rest (completed and
 * deleted tasks, final states no command reopens; which files exist below
 * the mark) from the index, for FINAL_TRUST_MS after an exact pass found the
 * index right (index-trust.ts).
 */
import { CorruptTaskError } from '../errors.js';
import { createRecord, isClosed, parseTask, taskFileName, type Task } from '../format/format.js';
import { readTaskFile } from '../format/task-file.js';
import { loadOpenSnapshot, unknownIds } from './open-view.js';
import { loadBoardSnapshot } from './board-index.js';
import { inRanges } from './id-ranges.js';
import { RUNTIME, boardIndexPath, parseOpenLine, taskFromRaw } from './index-file.js';
import { readIndexHead, readIndexVerifiedAt, type IndexHead } from './index-read.js';
import { FINAL_TRUST_MS, REFRESH_TURN, REFRESH_TURN_MS, closedSeen, rmdirQuiet, sameFile, takeRefreshTurn, turnHeld, type ClosedSeen } from './index-trust.js';
import type { BoardSnapshot } from './store-types.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { statSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

/** What claimNext scans: candidate ids and a way to look tasks up (see openClaimView). */
export interface ClaimView {
  /** Ids that may be ready, ascending: open tasks, unsure files and ids the index does not know. */
  candidates: number[];
  /** The task with this id, for readiness; completed and deleted ones may come from the index. */
  lookup(id: number): Task | undefined;
  /**
   * The task as the index has it, without looking at its file: for ranking
   * the candidates (priority, edges), which would otherwise cost a stat of
   * every open task on every claim. Each candidate is looked up (checked
   * against its file) before it is tried. Where the view looked at a file
   * already, or has no index entry, this is lookup.
   */
  peek(id: number): Task | undefined;
  /**
   * The task as its file has it now, for the candidate about to be tried: on
   * an index, lookup (which checks the file); on an exact view, the file read
   * again, since the view may be seconds old by the time a candidate comes up.
   */
  current(id: number): Task | undefined;
  /** Forgets what is known about `id`: its file is read at the next lookup. */
  forget(id: number): void;
  /** True when every task file was looked at for this view. */
  exact: boolean;
}

/**
 * The board as claimNext needs it: candidate ids and a lookup. From a fresh
 * index it reads only the open part of the index, lists the folder if names
 * came or went, and looks at open and unsure files (stat, and a read when one
 * changed); completed and deleted tasks come from the index. Without a usable
 * index, with one whose exact pass is older than FINAL_TRUST_MS, or with
 * `exact`, it takes an exact snapshot first (which rewrites the index).
 */
export function openClaimView(dir: string, options: { exact?: boolean } = {}): ClaimView {
  return claimView(dir, options.exact === true, false)!;
}

/**
 * openClaimView for claimNext's first look: undefined, instead of an exact
 * pass of its own, when there is no index it may use and another claimant
 * has the turn to make the pass; claimNext then waits for that pass
 * (awaitExactPass) and looks again. Claimants that start together on a board
 * without an index all find no turn taken in awaitExactPass, and then each
 * made the pass (eight passes of 2,000 files at once, the claims' slowest).
 */
export function shareClaimView(dir: string): ClaimView | undefined {
  return claimView(dir, false, true);
}

function claimView(dir: string, exact: boolean, share: boolean): ClaimView | undefined {
  let turn: string | undefined;
  if (!exact) {
    const head = readIndexHead(boardIndexPath(dir));
    const age = head ? Date.now() - head.verifiedAt : Infinity;
    const fromIndex = () => viewFromIndex(dir, head!, `${dir}\0${head!.header.openBytes}\0${head!.seal}`);
    if (head && age >= 0 && age < FINAL_TRUST_MS) return fromIndex();
    // Run out: one claimant makes the exact pass, the others go on with the index meanwhile.
    turn = takeRefreshTurn(dir);
    if (head && age >= 0 && age < FINAL_TRUST_MS + REFRESH_TURN_MS && turn === undefined) return fromIndex();
    if (share && turn === undefined) return undefined;
  }
  let snapshot: BoardSnapshot;
  try {
    // On a large history, the open work and the checks that see a change of a closed task (open-view.ts), not every file.
    snapshot = exact ? loadBoardSnapshot(dir) : loadOpenSnapshot(dir, { verify: true });
  } finally {
    if (turn !== undefined) rmdirQuiet(turn);
  }
  const stale = new Set<number>();
  const lookup = (id: number) => (stale.has(id) ? peekTaskFile(dir, id) : snapshot.byId.get(id));
  return {
    candidates: snapshot.tasks.filter((t) => !isClosed(t.status)).map((t) => t.id),
    lookup,
    peek: lookup,
    // While this claimant made the pass, the others went on claiming: a candidate tried from the snapshot
    // alone cost a round of locks each time it was gone, and a claimant could chase them for seconds.
    current: (id) => {
      stale.add(id);
      return peekTaskFile(dir, id);
    },
    forget: (id) => stale.add(id),
    exact: snapshot.history === undefined,
  };
}

/**
 * Waits, at most REFRESH_TURN_MS, while another claimant makes an exact pass
 * that this one would otherwise have to make too (no index yet, or one whose
 * trust ran out long ago): claimants that start together then make one pass,
 * not one each. Returns at once when the index can be used, or when nobody
 * has the turn.
 */
export async function awaitExactPass(dir: string): Promise<void> {
  const turn = join(dir, RUNTIME, REFRESH_TURN);
  for (const until = Date.now() + REFRESH_TURN_MS; Date.now() < until; await new Promise((done) => setTimeout(done, 5))) {
    const verifiedAt = readIndexVerifiedAt(boardIndexPath(dir));
    const age = verifiedAt !== undefined ? Date.now() - verifiedAt : Infinity;
    if ((age >= 0 && age < FINAL_TRUST_MS + REFRESH_TURN_MS) || !turnHeld(turn)) return;
  }
}

/**
 * The open part of the last index this process ranked claims on, parsed: a
 * worker or the agent tool claims again and again from one index (until the
 * next exact pass rewrites it), so each claim does not parse every open task
 * again. Keyed by the board and the open part's length and seal. The tasks are
 * only read (ranking), never handed out.
 */
let peekCache: { key: string; tasks: Map<number, Task> } | undefined;

function viewFromIndex(dir: string, head: IndexHead, cacheKey: string): ClaimView {
  if (peekCache?.key !== cacheKey) peekCache = { key: cacheKey, tasks: new Map() };
  const parsedOpen = peekCache.tasks;
  const header = head.header;
  const open = head.open;
  const unsure = new Set(header.unsure);
  const closed = header.closed;
  const { unknown, present } = unknownIds(dir, header, (id) => open.has(id) || unsure.has(id) || inRanges(closed, id));
  const candidates = [...open.keys(), ...unsure, ...unknown].filter((id) => !present || present.has(id)).sort((a, b) => a - b);
  const memo = new Map<number, Task | undefined>();
  const stale = new Set<number>();
  const seen = closedSeen(dir);
  const find = (id: number): Task | undefined => {
    if (present && !present.has(id)) return undefined;
    if (stale.has(id)) return peekTaskFile(dir, id);
    if (seen.trusts(id)) return finalStub(id);
    if (unsure.has(id) || unknown.has(id)) return peekTaskFile(dir, id, seen);
    const line = open.get(id);
    if (line !== undefined) {
      const entry = parseOpenLine(line);
      const stat = entry && statSync(join(dir, taskFileName(id)), { throwIfNoEntry: false });
      if (entry && stat && stat.isFile() && sameFile([entry[1], entry[2], entry[3], entry[4]], stat)) return taskFromRaw(entry[5]);
      return peekTaskFile(dir, id, seen);
    }
    // Completed or deleted when the index was written: only whether it is closed matters here.
    if (inRanges(closed, id)) return finalStub(id);
    return undefined;
  };
  const lookup = (id: number): Task | undefined => {
    if (!memo.has(id)) memo.set(id, find(id));
    return memo.get(id);
  };
  return {
    candidates,
    lookup,
    peek(id) {
      if (memo.has(id) || stale.has(id)) return lookup(id);
      const line = open.get(id);
      if (line === undefined) return lookup(id);
      let task = parsedOpen.get(id);
      if (task === undefined) {
        const entry = parseOpenLine(line);
        if (!entry) return lookup(id);
        parsedOpen.set(id, (task = taskFromRaw(entry[5])));
      }
      return task;
    },
    current: lookup,
    forget(id) {
      memo.delete(id);
      stale.add(id);
      seen.forget(id);
    },
    exact: false,
  };
}

/** peekTask without a store: the task, or undefined when missing or not a valid task. Closed ones are remembered in `seen`. */
function peekTaskFile(dir: string, id: number, seen?: ClosedSeen): Task | undefined {
  const path = join(dir, taskFileName(id));
  try {
    const read = readTaskFile(path);
    if (read === undefined) return undefined;
    const task = parseTask(read.text, path);
    if (seen && isClosed(task.status)) seen.remember(id, read.stat);
    return task;
  } catch (error) {
    if (error instanceof CorruptTaskError) return undefined;
    throw error;
  }
}

/** A closed task as far as readiness goes; never handed out of claimNext. */
function finalStub(id: number): Task {
  return { id, subject: '', description: '', status: 'completed', owner: '', blockedBy: [], blocks: [], extra: createRecord() };
}
