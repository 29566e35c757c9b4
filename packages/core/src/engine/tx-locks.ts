// The locks of a transaction (docs/decisions.md, "One writer"): which it
// holds (TxScope), taken in the one order (owners, board, tasks ascending),
// the task cover that stands in for thousands of task locks, and the
// journals a dead or stalled writer left, finished under those locks before
// anything is read. transaction.ts runs a transaction on them.
import { readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { TasksError } from '../errors.js';
import { normalizeIds, type Task } from '../format/format.js';
import { ensureFolder } from '../fs/fsio.js';
import { acquireLock, isExclusivelyHeld, markExclusive, releaseLocks, type AcquiredLock, type HeldLock, type LockOptions } from '../fs/locks.js';
import { journalTasks, listJournals, readJournal, recoverJournal } from './journal.js';

/** Which locks a transaction holds. */
export interface TxScope {
  /** Owner locks (single-in-progress), sorted. */
  owners: string[];
  /** The board lock: any change of more than one task, ids, edges. */
  board: boolean;
  /** Task locks, ascending. */
  tasks: number[];
}

/** What the store gives a transaction to work with. */
export interface TxHost {
  readonly dir: string;
  readonly runtimeDir: string;
  readonly lockOptions: LockOptions;
  taskPath(id: number): string;
  taskLockPath(id: number): string;
  ownerLockPath(owner: string): string;
  boardLockPath(): string;
  /** Raw text of a task file (refusing what cannot be a task: too big, not a regular file). */
  readTaskText(id: number): string | undefined;
  parseTaskText(id: number, text: string): Task;
  notFound(id: number): Error;
}

/** Thrown inside a transaction to ask for locks it does not hold: it starts over holding them too. */
export class NeedLocks extends Error {
  constructor(readonly scope: Partial<TxScope>) {
    super('internal: transaction needs more locks');
  }
}

/** The board's and the tasks' locks carry a holder mark: writes are staged under them. */
export const GATE = { mark: true };

export function mergeScope(scope: TxScope, more: Partial<TxScope>): TxScope {
  return {
    owners: [...new Set([...scope.owners, ...(more.owners ?? [])].filter((o) => o !== ''))].sort(),
    board: scope.board || !!more.board || normalizeIds([...scope.tasks, ...(more.tasks ?? [])]).length > 1,
    tasks: normalizeIds([...scope.tasks, ...(more.tasks ?? [])]),
  };
}

/** The locks a transaction holds, once taken in the one order. */
export interface TakenLocks {
  ownerLocks: HeldLock[];
  boardLock: HeldLock | undefined;
  cover: TaskCover;
}

/**
 * Takes the locks of `scope` in the one order (owners, board, tasks
 * ascending), each pushed to `taken` as it is taken so the caller can release
 * them whatever happens, and finishes under them any change a dead or
 * stalled writer left half done. Throws NeedLocks when a change of many tasks
 * holds the board lock exclusively: the transaction then waits for it.
 */
export async function takeLocks(host: TxHost, scope: TxScope, taskOptions: LockOptions, taken: AcquiredLock[]): Promise<TakenLocks> {
  const ownerLocks: HeldLock[] = [];
  if (scope.owners.length) ensureFolder(host.runtimeDir);
  for (const owner of scope.owners) {
    const t = await acquireLock(host.ownerLockPath(owner), host.lockOptions);
    taken.push(t);
    ownerLocks.push(t.lock);
  }
  let boardLock: HeldLock | undefined;
  if (scope.board) {
    const t = await acquireLock(host.boardLockPath(), host.lockOptions, GATE);
    taken.push(t);
    boardLock = t.lock;
    await recoverBoardJournal(host, boardLock);
  }
  const cover = await takeTaskCover(host, scope.tasks, boardLock, taskOptions, taken);
  await recoverTaskJournals(host, scope, cover);
  // A change of many tasks may hold the board lock exclusively meanwhile: then wait for the board lock.
  if (!boardLock && isExclusivelyHeld(host.boardLockPath())) throw new NeedLocks({ board: true });
  return { ownerLocks, boardLock, cover };
}

/** Under the board lock: finish a board change a writer left half done (taking its task locks). */
export async function recoverBoardJournal(host: TxHost, boardLock: HeldLock): Promise<void> {
  if (!listJournals(host.runtimeDir).includes('board.json')) return;
  const journal = readJournal(host.runtimeDir, 'board.json');
  if (!journal) return;
  const ids = journalTasks(journal);
  const taken: AcquiredLock[] = [];
  try {
    const cover = await takeTaskCover(host, ids, boardLock, host.lockOptions, taken);
    await recoverTaskJournals(host, { owners: [], board: true, tasks: ids }, cover);
    await recoverJournal(host.dir, host.runtimeDir, 'board.json', (file) => gateFor(file, cover, boardLock), host.lockOptions);
  } finally {
    await releaseLocks(taken);
  }
}

/**
 * With the task locks of `scope` held: finish one-task changes left half
 * done on them. A half-done board change touching them needs the board lock
 * first: without it, the transaction starts over holding it.
 */
export async function recoverTaskJournals(host: TxHost, scope: TxScope, cover: TaskCover): Promise<void> {
  const names = listJournals(host.runtimeDir);
  if (names.length === 0) return;
  if (!scope.board && names.includes('board.json')) {
    const journal = readJournal(host.runtimeDir, 'board.json');
    if (journal && journalTasks(journal).some((id) => cover.covers(id))) throw new NeedLocks({ board: true });
  }
  for (const name of names) {
    const m = /^task_([1-9][0-9]*)\.json$/.exec(name);
    if (!m) continue;
    const id = Number(m[1]);
    if (!cover.covers(id)) continue;
    if (!cover.locks.has(id)) {
      // Held exclusively through the board lock, and nobody holds this task's lock: its writer let go without finishing.
      await recoverJournal(host.dir, host.runtimeDir, name, () => cover.exclusive!, host.lockOptions);
      continue;
    }
    await recoverJournal(host.dir, host.runtimeDir, name, (file) => gateFor(file, cover, undefined), host.lockOptions);
  }
}

/** Above this many task locks a change of the board holds the board lock exclusively instead. */
export const EXCLUSIVE_ABOVE = 64;

/**
 * The task locks a transaction holds. A change of up to EXCLUSIVE_ABOVE
 * tasks takes each task's lock. A bigger one (a completion with thousands of
 * dependents, a clear, an import) marks the board lock it holds exclusive
 * and takes only the task locks held at that moment: every transaction that
 * holds task locks without the board lock looks for the mark after taking
 * them and, finding it, starts over waiting for the board lock. Either the
 * big change sees a task lock held (and waits for it), or its holder sees
 * the mark (and backs off); no file is written by both.
 */
export class TaskCover {
  constructor(
    readonly locks: Map<number, HeldLock>,
    public exclusive: HeldLock | undefined,
  ) {}

  /** From task locks to the board lock held exclusively (see takeTaskCover), in the middle of a transaction. */
  async escalate(host: TxHost, boardLock: HeldLock, acquire: (id: number) => Promise<HeldLock>): Promise<void> {
    markExclusive(boardLock);
    for (const id of heldTaskLocks(host)) if (!this.locks.has(id)) this.locks.set(id, await acquire(id));
    this.exclusive = boardLock;
  }

  covers(id: number): boolean {
    return this.locks.has(id) || this.exclusive !== undefined;
  }

  /** The lock a write to task `id` is staged under. */
  gate(id: number): HeldLock | undefined {
    return this.locks.get(id) ?? this.exclusive;
  }
}

export async function takeTaskCover(
  host: TxHost,
  ids: number[],
  boardLock: HeldLock | undefined,
  options: LockOptions,
  taken: AcquiredLock[],
): Promise<TaskCover> {
  const locks = new Map<number, HeldLock>();
  if (boardLock && ids.length > EXCLUSIVE_ABOVE) {
    markExclusive(boardLock);
    // Task locks held right now belong to changes in flight: wait for each (and keep it).
    for (const id of heldTaskLocks(host)) {
      const t = await acquireLock(host.taskLockPath(id), host.lockOptions, GATE);
      taken.push(t);
      locks.set(id, t.lock);
    }
    return new TaskCover(locks, boardLock);
  }
  for (const id of ids) {
    const t = await acquireLock(host.taskLockPath(id), options, GATE);
    taken.push(t);
    locks.set(id, t.lock);
  }
  return new TaskCover(locks, undefined);
}

/** Ids whose task lock folder exists right now. */
function heldTaskLocks(host: TxHost): number[] {
  const ids: number[] = [];
  for (const name of readdirSync(host.dir)) {
    const m = /^task_([1-9][0-9]*)\.json\.lock$/.exec(name);
    if (m) ids.push(Number(m[1]));
  }
  return ids;
}

export function gateFor(file: string, cover: TaskCover, boardLock: HeldLock | undefined): HeldLock {
  const m = /task_([1-9][0-9]*)\.json$/.exec(file);
  const lock = m ? cover.gate(Number(m[1])) : boardLock;
  if (!lock) throw new TasksError('E_CORRUPT', `a commit record names ${file}, which it has no lock for; run 'tasks doctor'`);
  return lock;
}

/** sha1 of a lock owner's name, for owner lock folder names. */
export function ownerLockName(owner: string): string {
  return `owner-${createHash('sha1').update(owner).digest('hex').slice(0, 16)}.lock`;
}
