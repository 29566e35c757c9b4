/**
 * The board index: a cache of the parsed task files in
 * `.tasks/.runtime/board-index.v1`, so that reading the board costs what
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
 * - openClaimView (claimNext) only chooses candidates, which the claim
 *   re-checks under the task's lock. It looks at the open tasks, at files
 *   it could not trust and at ids above the high-water mark the index saw,
 *   and takes the rest (completed and deleted tasks, final states no
 *   command reopens; which files exist below the mark) from the index, for
 *   FINAL_TRUST_MS after an exact pass found the index right.
 *
 * An identity is trusted only if its ctime is older than a clock reading of
 * the same file system taken before the file was looked at (the ctime of a
 * temp file made for that), as git does with racily clean entries: any later
 * change, even in place with the same size and mtime, then gives a newer
 * ctime. Whatever changed too recently is marked unsure and read again.
 */
import type { Stats } from 'node:fs';
import { CorruptTaskError, TasksError, isErrnoException } from '../errors.js';
import { TASK_KEYS, cloneJson, createRecord, isClosed, parseTask, setOwn, taskFileName, type Task, type TaskStatus } from '../format/format.js';
import type { BoardSnapshot, TaskProblem } from './store-types.js';
import { readTaskFile } from '../format/task-file.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const {
  closeSync,
  constants,
  fstatSync,
  futimesSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

/** The index file, in the board's runtime folder. The version is in the name so two versions of dotasks do not take turns rewriting it. */
export const BOARD_INDEX_FILE = 'board-index.v1';
/** How long claimNext trusts the index for what it does not look at, after an exact pass found it right (ms). */
export const FINAL_TRUST_MS = 10_000;

// store.ts's RUNTIME_DIR and HIGHWATERMARK_FILE; not imported, because store.js loads the whole write path.
const RUNTIME = '.runtime';
const HIGHWATERMARK = '.highwatermark';
// claimNext lists the folder instead of looking at each id above the index's high-water mark when there are more.
const MAX_PROBED_IDS = 100_000;
const FORMAT = 'dotasks-board-index';
const VERSION = 1;
// The fields this dotasks knows: an index written by one that knew others (a key it kept among the unknown ones) is not used.
const KNOWN_KEYS = TASK_KEYS.join(',');
// The seal line ending each part: '#', 8 hex digits (CRC-32), '\n'.
const SEAL_BYTES = 10;
// An exact pass that found the index right moves its mtime on when it is older than this (ms).
const REFRESH_MS = 1000;
const NOT_A_TASK_NAME = 'not a task file name (expected task_N.json, N without leading zeros)';
const NO_THROW = { throwIfNoEntry: false } as const;
const { S_IFMT, S_IFREG } = constants;

/** inode, size, mtimeMs, ctimeMs of a task file. */
type FileId = [number, number, number, number];
/** dev, inode, mtimeMs, ctimeMs of the board folder. */
type DirId = [number, number, number, number];

/**
 * The file: this header as one line; the open part, a JSON array of the
 * open tasks' entries, one a line; a seal; the rest, an array of the
 * closed tasks' and unsure ids' entries; a seal. Each seal is a CRC of every
 * byte before it, so claimNext reads and checks the open part only. The
 * header alone says which ids the index holds.
 */
interface IndexHeader {
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
  /** Bytes from the start of the file to the seal of the open part. */
  openBytes: number;
  /** Entries in the open part and in the rest. */
  open: number;
  rest: number;
}

/** An entry: `[id, ino, size, mtimeMs, ctimeMs, task]` for a trusted file, `[id]` for one read every time. */
type EntryItem = [number, number, number, number, number, Task] | [number];

/** An entry of the index being written: its line, and its task's status unless it is unsure. */
interface IndexLine {
  id: number;
  line: string;
  status?: TaskStatus;
}

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

/** The index file of the board at `dir`. */
export function boardIndexPath(dir: string): string {
  return join(dir, RUNTIME, BOARD_INDEX_FILE);
}

// ---- exact reads ------------------------------------------------------------

/**
 * Every task on the board and each file that is not a valid task, exactly as
 * reading every file would give them, reading only files whose identity
 * changed since the index saw them. Updates the index when it learned
 * something.
 */
export function loadBoardSnapshot(dir: string): BoardSnapshot {
  const verifiedAt = Date.now();
  // Before listing: a task made meanwhile is then either listed or above this mark (see viewFromIndex).
  const hwm = readHighWaterMarkQuiet(dir);
  const old = readIndex(boardIndexPath(dir));
  const writer = new IndexWriter(join(dir, RUNTIME));
  try {
    let changed = old === undefined;
    let dirId: DirId | null;
    let ids: number[];
    let bad: string[];
    const dirStat = statBoardDir(dir);
    if (old?.header.dir && sameDir(old.header.dir, dirStat)) {
      // No name came or went since the index listed them.
      dirId = old.header.dir;
      ids = idsOf(old);
      bad = old.header.bad;
    } else {
      const stamp = writer.stamp();
      const fresh = statBoardDir(dir);
      ({ ids, bad } = sortNames(readBoardNames(dir)));
      dirId = stamp !== undefined && fresh.ctimeMs < stamp ? dirIdOf(fresh) : null;
      if (!old || !sameDirId(old.header.dir, dirId) || bad.join('/') !== old.header.bad.join('/')) changed = true;
    }
    if (old && old.header.hwm !== hwm) changed = true;

    // Every file is looked at before the index's tasks are parsed: the garbage of thousands of
    // stats is then collected while little else is alive, instead of copying those tasks each time.
    const prefix = join(dir, 'task_');
    const paths = ids.map((id) => `${prefix}${id}.json`);
    const seen = new Float64Array(ids.length * 4);
    const isFile = new Uint8Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const stat = statSync(paths[i], NO_THROW);
      if (!stat || (stat.mode & S_IFMT) !== S_IFREG) continue;
      isFile[i] = 1;
      seen[i * 4] = stat.ino;
      seen[i * 4 + 1] = stat.size;
      seen[i * 4 + 2] = stat.mtimeMs;
      seen[i * 4 + 3] = stat.ctimeMs;
    }

    const entries = old ? parseEntries(old) : undefined;
    const tasks: Task[] = [];
    const problems: TaskProblem[] = bad.map((name) => ({ file: join(dir, name), message: NOT_A_TASK_NAME }));
    const lines: (IndexLine | number)[] = []; // a number: the old entry at that position, kept
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const path = paths[i];
      const at = entries?.positions.get(id);
      const item = at === undefined ? undefined : entries!.items[at];
      if (
        item &&
        item.length === 6 &&
        isFile[i] &&
        item[1] === seen[i * 4] &&
        item[2] === seen[i * 4 + 1] &&
        item[3] === seen[i * 4 + 2] &&
        item[4] === seen[i * 4 + 3]
      ) {
        tasks.push(taskFromRaw(item[5]));
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
    if (old && lines.length !== old.header.open + old.header.rest) changed = true;

    tasks.sort((a, b) => a.id - b.id);
    problems.sort((a, b) => (a.id ?? 0) - (b.id ?? 0) || a.file.localeCompare(b.file));
    const snapshot = { tasks, byId: new Map(tasks.map((t) => [t.id, t])), problems };

    // The index file's mtime says when an exact pass last found it right (claimNext trusts it for a while after).
    if (changed)
      writer.write(
        boardIndexPath(dir),
        encodeIndex(
          dirId,
          hwm,
          bad,
          lines.map((l) => (typeof l === 'number' ? entries!.lineAt(l) : l)),
        ),
        verifiedAt,
      );
    else if (old && !(verifiedAt - old.verifiedAt >= 0 && verifiedAt - old.verifiedAt < REFRESH_MS)) touch(old.fd, verifiedAt);
    return snapshot;
  } finally {
    writer.close();
    if (old) closeSync(old.fd);
  }
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
  ids.push(...index.header.unsure);
  return ids;
}

/** Sets a file's mtime (through a descriptor of the very file that was checked); failing only means a staler time. */
function touch(fd: number, ms: number): void {
  try {
    futimesSync(fd, ms / 1000, ms / 1000);
  } catch {
    // someone else's file, or a file system without times
  }
}

// ---- claim candidates -------------------------------------------------------

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
    snapshot = loadBoardSnapshot(dir);
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
    exact: true,
  };
}

/** How long the other claimants trust an index past FINAL_TRUST_MS while one claimant makes the exact pass (ms). */
export const REFRESH_TURN_MS = 2000;
const REFRESH_TURN = 'board-index-refresh.lock';

/**
 * The turn to make the exact pass for claims, when the index's trust ran out:
 * a folder in the runtime folder, made by one claimant at a time (mkdir is
 * atomic). Eight claimants used to run out together and all make the pass at
 * once (300 ms each on two cores: the claims' p99). A turn left by a process
 * that died is taken over once it is older than REFRESH_TURN_MS. Returns the
 * folder to remove, or undefined when another claimant has the turn.
 */
function takeRefreshTurn(dir: string): string | undefined {
  const path = join(dir, RUNTIME, REFRESH_TURN);
  for (let tries = 0; tries < 2; tries++) {
    try {
      mkdirSync(path);
      return path;
    } catch (error) {
      if (!isErrnoException(error, 'EEXIST')) return path; // no runtime folder (yet): nobody to share the pass with
      if (turnHeld(path)) return undefined;
      rmdirQuiet(path);
    }
  }
  return undefined;
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
 * Whether a claimant has the turn `path` and is within its time (an older one
 * was left by a process that died). The turn's age is counted in whole
 * milliseconds, as Date.now() counts them: the file system stamps the folder
 * to a fraction of a millisecond, up to 1 ms past the Date.now() read just
 * before it was made, so with fractions a claimant that had waited
 * REFRESH_TURN_MS by Date.now() (awaitExactPass) could still find the turn
 * held for that fraction, and neither take it over nor wait any longer.
 */
export function turnHeld(path: string, now = Date.now()): boolean {
  const stat = statSync(path, NO_THROW);
  return stat !== undefined && now - Math.floor(stat.mtimeMs) < REFRESH_TURN_MS;
}

function rmdirQuiet(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // gone already (taken over as stale), or never made
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
  const known = (id: number) => open.has(id) || unsure.has(id) || inRanges(closed, id);
  // Task files the index does not know, when the folder changed since it listed them. dotasks
  // hands out ids up to `.highwatermark` (a git pull that brings tasks raises it too), so the ids
  // above the index's mark are looked at one by one; a file made some other way below the mark
  // waits for the next exact pass, like a reopened task. Without both marks: list the folder.
  let present: Set<number> | undefined;
  const unknown = new Set<number>();
  const dirStat = statBoardDir(dir);
  if (!header.dir || !sameDir(header.dir, dirStat)) {
    const hwm = readHighWaterMarkQuiet(dir);
    if (hwm !== null && header.hwm !== null && hwm >= header.hwm && hwm - header.hwm <= MAX_PROBED_IDS) {
      for (let id = header.hwm + 1; id <= hwm; id++) if (!known(id)) unknown.add(id);
    } else {
      present = new Set();
      for (const name of readBoardNames(dir)) {
        const id = taskIdOf(name);
        if (id === undefined) continue;
        present.add(id);
        if (!known(id)) unknown.add(id);
      }
    }
  }
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

/**
 * An entry of the index's open part, `[id, ino, size, mtimeMs, ctimeMs, task]`;
 * undefined for anything else, which is then read from its file: the index
 * is only ever a shortcut, and a line it cannot give never stops a claim.
 */
function parseOpenLine(line: string): [number, number, number, number, number, Task] | undefined {
  try {
    const entry = JSON.parse(line) as unknown;
    return Array.isArray(entry) && entry.length === 6 && entry[5] !== null && typeof entry[5] === 'object'
      ? (entry as [number, number, number, number, number, Task])
      : undefined;
  } catch {
    return undefined;
  }
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

/**
 * Completed and deleted tasks this process read while choosing claims, per
 * board: a long-lived claimant (a worker, the agent tool) does not read them
 * again on its next claimNext. Trusted like the index's closed tasks, for
 * FINAL_TRUST_MS after the file was looked at; then a stat renews the trust
 * if the file kept its identity and that identity was old enough when read
 * (a change within the same clock tick as the read could otherwise hide).
 */
class ClosedSeen {
  private readonly files = new Map<number, { fileId: FileId; seenAt: number }>();

  constructor(private readonly dir: string) {}

  remember(id: number, stat: Stats): void {
    this.files.set(id, { fileId: [stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs], seenAt: Date.now() });
  }

  forget(id: number): void {
    this.files.delete(id);
  }

  trusts(id: number): boolean {
    const entry = this.files.get(id);
    if (!entry) return false;
    const now = Date.now();
    const age = now - entry.seenAt;
    if (age >= 0 && age < FINAL_TRUST_MS) return true;
    const stat = statSync(join(this.dir, taskFileName(id)), { throwIfNoEntry: false });
    if (stat && stat.isFile() && sameFile(entry.fileId, stat) && entry.fileId[3] < entry.seenAt - RACY_SLACK_MS) {
      entry.seenAt = now;
      return true;
    }
    this.files.delete(id);
    return false;
  }
}

// How much older than the moment it was read a file's ctime must be for a stat to renew ClosedSeen's trust (ms).
const RACY_SLACK_MS = 2000;
const closedSeenByDir = new Map<string, ClosedSeen>();

function closedSeen(dir: string): ClosedSeen {
  let seen = closedSeenByDir.get(dir);
  if (!seen) closedSeenByDir.set(dir, (seen = new ClosedSeen(dir)));
  return seen;
}

/** A closed task as far as readiness goes; never handed out of claimNext. */
function finalStub(id: number): Task {
  return { id, subject: '', description: '', status: 'completed', owner: '', blockedBy: [], blocks: [], extra: createRecord() };
}

// ---- the folder -------------------------------------------------------------

function statBoardDir(dir: string): Stats {
  try {
    return statSync(dir);
  } catch (error) {
    throw boardGone(dir, error);
  }
}

function readBoardNames(dir: string): string[] {
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
function readHighWaterMarkQuiet(dir: string): number | null {
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

function dirIdOf(stat: Stats): DirId {
  return [stat.dev, stat.ino, stat.mtimeMs, stat.ctimeMs];
}

function sameDir(id: DirId, stat: Stats): boolean {
  return id[0] === stat.dev && id[1] === stat.ino && id[2] === stat.mtimeMs && id[3] === stat.ctimeMs;
}

function sameDirId(a: DirId | null, b: DirId | null): boolean {
  return a === b || (a !== null && b !== null && a.every((v, i) => v === b[i]));
}

function sameFile(id: FileId, stat: Stats): boolean {
  return id[0] === stat.ino && id[1] === stat.size && id[2] === stat.mtimeMs && id[3] === stat.ctimeMs;
}

// ---- entries ----------------------------------------------------------------

function taskLine(task: Task, stat: Stats): IndexLine {
  return { id: task.id, status: task.status, line: JSON.stringify([task.id, stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs, task]) };
}

function unsureLine(id: number): IndexLine {
  return { id, line: `[${id}]` };
}

/**
 * A task as parseTask gives it (prototype-free extra and metadata), made in
 * place from its JSON in the index: the keys come in the order parseTask
 * builds them, since that is the order they were written in.
 */
function taskFromRaw(raw: Task): Task {
  const extra = createRecord();
  for (const key of Object.keys(raw.extra)) setOwn(extra, key, raw.extra[key]);
  raw.extra = extra;
  if (raw.metadata !== undefined) raw.metadata = cloneJson(raw.metadata) as Record<string, unknown>;
  if (raw.notes !== undefined) raw.notes = cloneJson(raw.notes) as Task['notes'];
  return raw;
}

/**
 * idFromFileName without a regular expression: the claim view runs it on
 * every name of a 10,000-task folder, where the regex cost milliseconds.
 */
function taskIdOf(name: string): number | undefined {
  const end = name.length - 5;
  if (end <= 5 || name.charCodeAt(5) === 48 || !name.startsWith('task_') || !name.endsWith('.json')) return undefined;
  for (let i = 5; i < end; i++) {
    const c = name.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  const id = Number(name.slice(5, end));
  return Number.isSafeInteger(id) ? id : undefined;
}

/** The id at the start of an entry line `[id,…` (digits read by hand: thousands of open lines on a big board). */
function leadingId(line: string): number {
  let id = 0;
  for (let i = 1; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) break;
    id = id * 10 + (c - 48);
  }
  return id;
}

function inRanges(ranges: [number, number][], id: number): boolean {
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

// ---- the file ---------------------------------------------------------------

function encodeIndex(dir: DirId | null, hwm: number | null, bad: string[], entries: IndexLine[]): Buffer {
  entries.sort((a, b) => a.id - b.id);
  const open: string[] = [];
  const rest: string[] = [];
  const unsure: number[] = [];
  const closed: [number, number][] = [];
  for (const entry of entries) {
    if (entry.status === undefined) {
      unsure.push(entry.id);
      rest.push(entry.line);
    } else if (isClosed(entry.status)) {
      const last = closed.at(-1);
      if (last && last[1] === entry.id - 1) last[1] = entry.id;
      else closed.push([entry.id, entry.id]);
      rest.push(entry.line);
    } else open.push(entry.line);
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
  if (!Array.isArray(header.closed) || !Array.isArray(header.unsure) || !Array.isArray(header.bad)) return undefined;
  return header;
}

/** The lines of a part (`[line,\nline]\n`). */
function splitLines(part: string): string[] {
  return part.length > 3 ? part.slice(1, -2).split(',\n') : [];
}

interface IndexFile {
  header: IndexHeader;
  /** The open part and the rest, as written (JSON arrays). */
  openText: string;
  restText: string;
  /** The file's mtime: when an exact pass last found it right. */
  verifiedAt: number;
  /** Open on the file that was read, to move its mtime on; the caller closes it. */
  fd: number;
}

/** The whole index, checked; undefined when missing, torn, damaged or not this version. Its parts are parsed by parseEntries. */
function readIndex(file: string): IndexFile | undefined {
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
    return { header, openText, restText, verifiedAt: stat.mtimeMs, fd };
  } catch {
    return undefined;
  } finally {
    if (!kept) closeSync(fd);
  }
}

/** The entries of an index: by position (the open part first), each id's position, and each position's line (split on demand). */
function parseEntries(index: IndexFile): { items: EntryItem[]; positions: Map<number, number>; lineAt(at: number): IndexLine } {
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
      return { id: item[0], line: lines[at], status: item.length === 6 ? item[5].status : undefined };
    },
  };
}

/** The header and open part of an index, as readIndexHead gives them. */
interface IndexHead {
  header: IndexHeader;
  /** The open part's lines by task id. */
  open: Map<number, string>;
  verifiedAt: number;
  seal: string;
}

/** The header and open part of the index, checked; reads only those bytes. */
function readIndexHead(file: string): IndexHead | undefined {
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
function readIndexVerifiedAt(file: string): number | undefined {
  return withIndexFile(file, (fd) => (readHeaderLine(fd) ? fstatSync(fd).mtimeMs : undefined));
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
class IndexWriter {
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
      closeSync(temp.fd);
      temp.fd = undefined;
      renameSync(temp.path, target);
      this.temp = null;
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
