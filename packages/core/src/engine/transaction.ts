import { readdirSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CorruptTaskError, TasksError, isErrnoException } from '../errors.js';
import { appendEvents, readTxEvents, type NewEvent, type TaskEvent } from '../events/events.js';
import { MAX_TASK_FILE_BYTES, copyTask, normalizeIds, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { ensureFolder, pausePoint, readFileIfExists, removeFile, renameFile, syncAndClose, syncFolder, syncFolders, writeNewFile } from '../fs/fsio.js';
import {
  commitJournal,
  hashText,
  stageJournal,
  journalDir,
  journalTasks,
  listJournals,
  newJournal,
  readJournal,
  recoverJournal,
  type JournalOp,
} from './journal.js';
import { LEASES_DIR, parseLease, type Lease } from '../runtime/leases.js';
import { loadBoardSnapshot } from './board-index.js';
import { acquireLock, isExclusivelyHeld, markExclusive, releaseLocks, type AcquiredLock, type HeldLock, type LockOptions } from '../fs/locks.js';

/**
 * The one way anything writes the board (docs/decisions.md, "One writer"):
 * task files, the high-water mark, claim records and the event log. A
 * transaction takes its locks in the one order (owners, board, tasks
 * ascending; the event log's last), finishes any change a dead or stalled
 * writer left half done under those locks, reads what it needs under them,
 * and commits:
 *
 *  1. re-reads every file it will write and starts over if one changed (two
 *     processes can take over one stale lock at once);
 *  2. writes each new file complete and fsync'd inside its lock's folder,
 *     where breaking the lock destroys it;
 *  3. for a change of more than one file, or one with events, renames its
 *     journal into `.runtime/journal/` (the commit point);
 *  4. renames each file into place, checking just before each rename that
 *     the locks it depends on are still its own, and fsyncs the folders;
 *  5. appends its events (fsync'd) and removes the journal.
 *
 * Locks are kept fresh by proper-lockfile's timer; the commit yields to the
 * event loop as it goes, so a change of thousands of files keeps them.
 */

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

/** Thrown inside a transaction when what it read is not what is on disk (a lock raced): it starts over. */
export class ConcurrentChange extends Error {}

/** A lock was lost before the commit point: nothing was written, the transaction starts over. */
class LockLost extends Error {
  constructor(readonly lost: unknown) {
    super('internal: a lock was lost before the commit point');
  }
}

/** A lock was lost after the commit point: the change is committed, its journal finishes it. */
class CommittedChange extends Error {
  constructor(
    readonly journalPath: string,
    readonly written: Task[],
    readonly lost: unknown,
  ) {
    super('internal: a lock was lost after the commit point');
  }
}

function isLockLoss(error: unknown): boolean {
  return error instanceof TasksError && error.code === 'E_COMPROMISED';
}

const MAX_ATTEMPTS = 8;
/** The board's and the tasks' locks carry a holder mark: writes are staged under them. */
const GATE = { mark: true };
export const HIGHWATERMARK_FILE = '.highwatermark';

/** Board-relative path of a claim record. */
function leaseFile(id: number): string {
  return `.runtime/${LEASES_DIR}/${taskFileName(id)}`;
}

interface PendingOp {
  /** Board-relative path. */
  file: string;
  /** The lock a staged copy of this file lives under (and whose loss makes the rename fail). */
  gate: HeldLock;
  before: string | undefined;
  after: string | undefined;
}

/** Reads, stages and commits board files while their locks are held. */
export class Transaction {
  readonly id = `${Date.now().toString(36)}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private originals = new Map<string, string | undefined>();
  private current = new Map<number, Task | undefined>();
  private staged = new Map<number, Task>();
  private leases = new Map<number, Lease | null>();
  private highWaterMark?: number;
  readonly events: NewEvent[] = [];

  private removed = new Set<number>();
  private maxStaged = 0;
  private memos = new Map<string, unknown>();
  private rawTexts = new Map<number, string>();
  private indexRefresh = false;

  constructor(
    private host: TxHost,
    readonly scope: TxScope,
    private cover: TaskCover,
    private boardLock: HeldLock | undefined,
    private ownerLocks: HeldLock[],
    private acquireTask: (id: number) => Promise<HeldLock>,
  ) {}

  /**
   * Takes the lock of a task id now (a new task's). Under the board lock task
   * locks may be taken in any order: every process that holds more than one
   * task lock holds the board lock, and one that holds a single task lock
   * waits for no other lock while holding it, so no cycle of waits can form.
   */
  async lockNewTask(id: number): Promise<void> {
    if (this.cover.covers(id)) return;
    this.need({ board: true });
    if (this.cover.locks.size >= EXCLUSIVE_ABOVE) {
      // A batch or an import of many new tasks: hold the board lock exclusively instead.
      await this.cover.escalate(this.host, this.boardLock!, this.acquireTask);
      return;
    }
    this.cover.locks.set(id, await this.acquireTask(id));
    this.scope.tasks.push(id);
  }

  /** A task for looking at: this transaction's version when it has one, else the file as it is now (no lock). */
  view(id: number): Task | undefined {
    const staged = this.staged.get(id);
    if (staged) return this.removed.has(id) ? undefined : staged;
    if (this.current.has(id)) return this.current.get(id);
    if (this.cover.covers(id)) return this.tryRead(id);
    try {
      const text = this.host.readTaskText(id);
      return text === undefined ? undefined : this.host.parseTaskText(id, text);
    } catch (error) {
      if (error instanceof CorruptTaskError) return undefined;
      throw error;
    }
  }

  /** The raw text of a task file, for repairs of files the strict reader refuses (doctor). */
  readText(id: number): string | undefined {
    this.need({ tasks: [id] });
    return this.original(taskFileName(id), () => this.host.readTaskText(id));
  }

  /** Replaces a task file with `text`, which must be a valid task with that id (doctor's repairs). */
  putText(id: number, text: string): void {
    this.readText(id);
    const task = this.host.parseTaskText(id, text);
    this.staged.set(id, task);
    this.rawTexts.set(id, text);
  }

  /** Removes a task file (`tasks clear`). */
  removeTask(id: number): void {
    const task = this.tryRead(id);
    if (task) this.staged.set(id, task);
    this.removed.add(id);
  }

  /** The highest id ever handed out, from `.highwatermark` (staged value included); refuses anything but one plain integer. */
  readHighWaterMark(): number {
    if (this.highWaterMark !== undefined) return this.highWaterMark;
    this.need({ board: true });
    const text = this.original(HIGHWATERMARK_FILE, () => readFileIfExists(join(this.host.dir, HIGHWATERMARK_FILE)));
    return parseHighWaterMark(text, join(this.host.dir, HIGHWATERMARK_FILE));
  }

  /**
   * Asks for an exact pass over the board once this change is committed and
   * its locks are released, which rewrites the board index: claimNext ranks
   * candidates on what the index says (board-index.ts, `peek`), so a change
   * that makes a task more claimable (released, reaped, a new priority, an
   * edge removed) reaches the order at once instead of at the next exact
   * pass. One pass per transaction, however many steps ask.
   */
  refreshIndexOnCommit(): void {
    this.indexRefresh = true;
  }

  /** Whether refreshIndexOnCommit was asked for. */
  get refreshesIndex(): boolean {
    return this.indexRefresh;
  }

  /** Asks for locks this transaction does not hold (throws NeedLocks, the transaction starts over). */
  need(scope: Partial<TxScope>): void {
    const missing: Partial<TxScope> = {};
    if (scope.board && !this.scope.board) missing.board = true;
    const tasks = (scope.tasks ?? []).filter((id) => !this.cover.covers(id));
    if (tasks.length) missing.tasks = tasks;
    const owners = (scope.owners ?? []).filter((o) => o !== '' && !this.scope.owners.includes(o));
    if (owners.length) missing.owners = owners;
    if (missing.board || missing.tasks || missing.owners) throw new NeedLocks(missing);
  }

  holds(id: number): boolean {
    return this.cover.covers(id);
  }

  private original(file: string, read: () => string | undefined): string | undefined {
    if (!this.originals.has(file)) this.originals.set(file, read());
    return this.originals.get(file);
  }

  /** The task as it is now (staged changes included); throws E_NOT_FOUND or E_CORRUPT. */
  read(id: number): Task {
    const task = this.tryRead(id);
    if (!task) throw this.host.notFound(id);
    return task;
  }

  /** Like read, but undefined when the file does not exist. Asks for the task's lock when it is not held. */
  tryRead(id: number): Task | undefined {
    const staged = this.staged.get(id);
    if (staged) return staged;
    if (this.current.has(id)) return this.current.get(id);
    this.need({ tasks: [id] });
    const text = this.original(taskFileName(id), () => this.host.readTaskText(id));
    const task = text === undefined ? undefined : this.host.parseTaskText(id, text);
    this.current.set(id, task);
    return task;
  }

  /** A copy of the task to change and then put(). */
  edit(id: number): Task {
    return copyTask(this.read(id));
  }

  put(task: Task): void {
    this.need({ tasks: [task.id] });
    if (!this.current.has(task.id) && !this.staged.has(task.id)) this.tryRead(task.id);
    this.staged.set(task.id, task);
    // A text put earlier (putText) is superseded: the file is written from this task.
    this.rawTexts.delete(task.id);
    if (task.id > this.maxStaged) this.maxStaged = task.id;
  }

  /** The highest id this transaction wrote (0 if none). */
  highestStagedId(): number {
    return this.maxStaged;
  }

  /** A value computed once per transaction (e.g. a folder listing a batch needs for every item). */
  memo<T>(key: string, compute: () => T): T {
    if (!this.memos.has(key)) this.memos.set(key, compute());
    return this.memos.get(key) as T;
  }

  /** The claim record of a task (staged changes included). */
  readLease(id: number): Lease | undefined {
    if (this.leases.has(id)) return this.leases.get(id) ?? undefined;
    this.need({ tasks: [id] });
    return parseLease(
      this.original(leaseFile(id), () => readFileIfExists(join(this.host.dir, leaseFile(id)))),
      id,
    );
  }

  /** Records a claim; written before the task file, so a claim never shows without its record. */
  putLease(lease: Lease): void {
    this.readLease(lease.task);
    this.leases.set(lease.task, lease);
  }

  /** Removes a claim record; removed after the task file is written. */
  dropLease(id: number): void {
    this.readLease(id);
    this.leases.set(id, null);
  }

  /** Raises `.highwatermark` to `id` (board lock only), after the task files are in place. */
  setHighWaterMark(id: number): void {
    this.need({ board: true });
    this.original(HIGHWATERMARK_FILE, () => readFileIfExists(join(this.host.dir, HIGHWATERMARK_FILE)));
    this.highWaterMark = id;
  }

  event(event: NewEvent): void {
    this.events.push(event);
  }

  /** Staged tasks, ascending id. */
  stagedTasks(): Task[] {
    return [...this.staged.values()].sort((a, b) => a.id - b.id);
  }

  private gateOf(file: string): HeldLock {
    const m = /task_([1-9][0-9]*)\.json$/.exec(file);
    if (m) {
      const lock = this.cover.gate(Number(m[1]));
      if (!lock) throw new Error(`internal: ${file} written without its lock`);
      return lock;
    }
    if (!this.boardLock) throw new Error(`internal: ${file} written without the board lock`);
    return this.boardLock;
  }

  /** Every lock, for the check before a commit. */
  private allLocks(): HeldLock[] {
    return [...this.ownerLocks, ...(this.boardLock ? [this.boardLock] : []), ...this.cover.locks.values()];
  }

  /** The locks every rename depends on besides its own file's: owners and board. */
  private sharedLocks(): HeldLock[] {
    return [...this.ownerLocks, ...(this.boardLock ? [this.boardLock] : [])];
  }

  /** The file changes to make, in the order they are made. */
  private plan(): PendingOp[] {
    const ops: PendingOp[] = [];
    const push = (file: string, after: string | undefined) => {
      const before = this.originals.get(file);
      if (after !== before) ops.push({ file, gate: this.gateOf(file), before, after });
    };
    // Claim records first: a task never says in_progress without its record.
    for (const [id, lease] of [...this.leases].sort((a, b) => a[0] - b[0])) if (lease) push(leaseFile(id), JSON.stringify(lease, null, 2) + '\n');
    for (const task of this.stagedTasks()) {
      if (this.removed.has(task.id)) {
        push(taskFileName(task.id), undefined);
        continue;
      }
      const text = this.rawTexts.get(task.id) ?? serializeTask(task);
      const size = Buffer.byteLength(text);
      if (size > MAX_TASK_FILE_BYTES)
        throw new TasksError(
          'E_INVALID',
          `task #${task.id} would be ${(size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task file; nothing was written (keep long text in a file and link it from the description)`,
          { id: task.id, bytes: size },
        );
      // A text put by putText was parsed already; a task built by a command is checked by the readers' own parser.
      if (!this.rawTexts.has(task.id)) checkReadable(task.id, text);
      push(taskFileName(task.id), text);
    }
    // The file is complete on disk before the mark moves.
    if (this.highWaterMark !== undefined) push(HIGHWATERMARK_FILE, `${this.highWaterMark}\n`);
    // Records of claims that ended go last.
    for (const [id, lease] of [...this.leases].sort((a, b) => a[0] - b[0])) if (!lease) push(leaseFile(id), undefined);
    return ops;
  }

  /** Writes every change, after checking nobody else wrote meanwhile; see the module comment. */
  async commit(): Promise<{ written: Task[]; events: TaskEvent[] }> {
    const ops = this.plan();
    if (ops.length === 0 && this.events.length === 0) return { written: [], events: [] };
    // Two processes can both take over one stale lock (proper-lockfile #121): re-check what we read.
    for (const op of ops) if (readFileIfExists(join(this.host.dir, op.file)) !== op.before) throw new ConcurrentChange();
    try {
      this.assertAllHeld();
    } catch (error) {
      throw new LockLost(error);
    }

    // Stage: complete files inside the lock folders, and the journal with them, fsync'd in batches.
    const journaled = ops.length > 1 || (ops.length === 1 && this.events.length > 0);
    const staged = new Map<PendingOp, string>();
    let stagedJournal: string | undefined;
    for (const folder of new Set(ops.filter((op) => op.after !== undefined).map((op) => dirname(op.file)))) {
      if (folder !== '.') ensureFolder(join(this.host.dir, folder));
    }
    try {
      let batch: { fd: number; path: string }[] = [];
      for (const op of ops) {
        if (op.after === undefined) continue;
        const path = op.gate.stagePath(basename(op.file));
        batch.push({ fd: writeNewFile(path, op.after), path });
        staged.set(op, path);
        if (batch.length >= 64) {
          await syncAndClose(batch);
          batch = [];
        }
      }
      if (journaled) {
        const journalOps: JournalOp[] = ops.map((op) => ({ file: op.file, before: hashText(op.before), after: op.after ?? null }));
        const journal = stageJournal(newJournal(this.id, journalOps, this.events), this.journalName(), this.boardLock ?? this.singleTaskLock());
        batch.push(journal);
        stagedJournal = journal.path;
      }
      await syncAndClose(batch);
    } catch (error) {
      throw this.beforeCommit(error);
    }
    pausePoint('staged');

    let journalPath: string | undefined;
    if (stagedJournal !== undefined) {
      try {
        journalPath = commitJournal(this.host.runtimeDir, this.journalName(), stagedJournal, () => this.assertAllHeld());
      } catch (error) {
        throw this.beforeCommit(error);
      }
    }

    // Apply: rename each staged file into place.
    const applied: PendingOp[] = [];
    let events: TaskEvent[];
    try {
      if (journalPath) {
        syncFolder(dirname(journalPath));
        pausePoint('committed');
      }
      const folders = new Set<string>();
      let lastYield = Date.now();
      for (const op of ops) {
        pausePoint('rename');
        for (const lock of this.sharedLocks()) lock.assertHeld(false);
        op.gate.assertHeld(false);
        const target = join(this.host.dir, op.file);
        const from = staged.get(op);
        if (from !== undefined) renameFile(from, target);
        else removeFile(target);
        applied.push(op);
        folders.add(dirname(target));
        // Let proper-lockfile's refresh timers run during a long commit.
        if (Date.now() - lastYield > 50) {
          await yieldToLoop();
          lastYield = Date.now();
        }
      }
      await syncFolders(folders);
      pausePoint('renamed');
      this.assertAllHeld();
      events = await appendEvents(this.host.runtimeDir, this.events, this.host.lockOptions, { tx: this.id });
      pausePoint('logged');
    } catch (error) {
      throw await this.abandon(error, applied, journalPath, this.writtenBy(ops));
    }
    // Done: the record can go. Should removing it fail, the next holder finds every file and event in place and only removes it.
    if (journalPath) {
      try {
        removeFile(journalPath);
      } catch {
        // left for the next holder of these locks
      }
    }
    return { written: this.writtenBy(ops), events };
  }

  private writtenBy(ops: PendingOp[]): Task[] {
    const files = new Set(ops.filter((op) => op.after !== undefined).map((op) => op.file));
    return this.stagedTasks().filter((t) => files.has(taskFileName(t.id)));
  }

  private assertAllHeld(): void {
    for (const lock of this.allLocks()) lock.assertHeld();
  }

  /** Whether any lock is lost now. */
  private anyLost(): boolean {
    try {
      this.assertAllHeld();
      return false;
    } catch {
      return true;
    }
  }

  private journalName(): string {
    return this.boardLock ? 'board.json' : `task_${this.scope.tasks[0]}.json`;
  }

  private singleTaskLock(): HeldLock {
    if (this.cover.locks.size !== 1) throw new Error('internal: a change to several tasks must hold the board lock');
    return [...this.cover.locks.values()][0];
  }

  /**
   * A failure before the commit point: nothing was written. A lost lock (its
   * staged folder vanished with it) starts the transaction over; any other
   * file system error fails it with one line.
   */
  private beforeCommit(error: unknown): unknown {
    if (isLockLoss(error) || this.anyLost()) return new LockLost(error);
    return ioError(error, 'nothing was changed');
  }

  /**
   * A failure after the commit point. With every lock still ours the change
   * is undone (each file renamed back to what it held) and the journal
   * removed: the command failed and nothing changed. With a lock lost, we may
   * no longer write: the journal stays and the next process holding the
   * locks completes the change.
   */
  private async abandon(error: unknown, applied: PendingOp[], journalPath: string | undefined, written: Task[]): Promise<unknown> {
    if (isLockLoss(error) || this.anyLost()) {
      // Committed: whoever holds the locks now finishes it from the journal.
      if (journalPath) return new CommittedChange(journalPath, written, error);
      // One file, no journal: the rename either landed before the takeover or failed with its staged file.
      return applied.length ? error : new LockLost(error);
    }
    try {
      for (const op of [...applied].reverse()) {
        const target = join(this.host.dir, op.file);
        if (op.before === undefined) removeFile(target);
        else {
          const from = op.gate.stagePath(`undo.${basename(op.file)}`);
          await syncAndClose([{ fd: writeNewFile(from, op.before), path: from }]);
          renameFile(from, target);
        }
      }
      for (const folder of new Set(applied.map((op) => dirname(join(this.host.dir, op.file))))) syncFolder(folder);
      if (journalPath) removeFile(journalPath);
    } catch {
      return ioError(
        error,
        journalPath
          ? `the change is half applied and the next command that takes these locks completes it from ${journalPath}`
          : 'the change may be half applied',
      );
    }
    return ioError(error, 'nothing was changed');
  }
}

function ioError(error: unknown, outcome: string): unknown {
  if (error instanceof TasksError) return error;
  if (!isErrnoException(error)) return error;
  const dest = (error as { dest?: string }).dest;
  const where = dest ? ` ${dest}` : error.path ? ` ${error.path}` : '';
  return new TasksError('E_IO', `cannot write${where}: ${error.code} (${error.message.split(',')[0]}); ${outcome}`, { code: error.code }, { cause: error });
}

/** How runTransaction takes its locks. */
export interface TxOptions {
  /** Wait for no task lock (claimNext's first pass): a held one fails with E_LOCKED at once. */
  noWaitTasks?: boolean;
}

function mergeScope(scope: TxScope, more: Partial<TxScope>): TxScope {
  return {
    owners: [...new Set([...scope.owners, ...(more.owners ?? [])].filter((o) => o !== ''))].sort(),
    board: scope.board || !!more.board || normalizeIds([...scope.tasks, ...(more.tasks ?? [])]).length > 1,
    tasks: normalizeIds([...scope.tasks, ...(more.tasks ?? [])]),
  };
}

/**
 * Runs `fn` in a transaction holding the locks of `scope` and commits what
 * it staged. Starts over when `fn` asks for more locks (NeedLocks) or a lock
 * race is detected (ConcurrentChange). A change to more than one task always
 * holds the board lock.
 */
export async function runTransaction<T>(
  host: TxHost,
  initial: Partial<TxScope>,
  fn: (tx: Transaction) => T | Promise<T>,
  options: TxOptions = {},
): Promise<{ value: T; written: Task[]; events: TaskEvent[] }> {
  let scope = mergeScope({ owners: [], board: false, tasks: [] }, initial);
  let value: T | undefined;
  let txId: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const taken: AcquiredLock[] = [];
    try {
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
      const taskOptions = options.noWaitTasks && attempt === 1 ? { ...host.lockOptions, timeoutMs: 0 } : host.lockOptions;
      const cover = await takeTaskCover(host, scope.tasks, boardLock, taskOptions, taken);
      await recoverTaskJournals(host, scope, cover);
      // A change of many tasks may hold the board lock exclusively meanwhile: then wait for the board lock.
      if (!boardLock && isExclusivelyHeld(host.boardLockPath())) throw new NeedLocks({ board: true });
      pausePoint('locked');
      value = undefined;
      const tx = new Transaction(host, scope, cover, boardLock, ownerLocks, async (id) => {
        const t = await acquireLock(host.taskLockPath(id), host.lockOptions, GATE);
        taken.push(t);
        return t.lock;
      });
      txId = tx.id;
      value = await fn(tx);
      const { written, events } = await tx.commit();
      await releaseLocks(taken);
      if (tx.refreshesIndex && written.length > 0) refreshBoardIndex(host.dir);
      return { value, written, events };
    } catch (error) {
      await releaseLocks(taken).catch(() => undefined);
      if (error instanceof NeedLocks && attempt < MAX_ATTEMPTS * 4) {
        scope = mergeScope(scope, error.scope);
        continue;
      }
      if ((error instanceof ConcurrentChange || error instanceof LockLost) && attempt < MAX_ATTEMPTS) {
        await yieldToLoop();
        continue;
      }
      if (error instanceof LockLost) throw error.lost;
      if (error instanceof CommittedChange) return finishCommitted(host, scope, error, value!, txId!);
      if (error instanceof ConcurrentChange || error instanceof NeedLocks)
        throw new TasksError('E_LOCKED', 'another process kept changing the same task files; run the command again');
      throw error;
    }
  }
}

/** An exact pass over the board, which rewrites its index (see refreshIndexOnCommit). Only a cache is at stake: a failure is ignored. */
function refreshBoardIndex(dir: string): void {
  try {
    loadBoardSnapshot(dir);
  } catch {
    // the next reader rebuilds it
  }
}

/**
 * Our change is committed but our locks were taken over before we finished
 * it (we stalled). Taking the same locks again finishes it: whoever holds
 * them first rolls every journal forward, so once we hold them the change is
 * on disk, and its events are in the log under our transaction's id.
 */
async function finishCommitted<T>(
  host: TxHost,
  scope: TxScope,
  committed: CommittedChange,
  value: T,
  tx: string,
): Promise<{ value: T; written: Task[]; events: TaskEvent[] }> {
  const taken: AcquiredLock[] = [];
  try {
    for (const owner of scope.owners) taken.push(await acquireLock(host.ownerLockPath(owner), host.lockOptions));
    if (scope.board) {
      const t = await acquireLock(host.boardLockPath(), host.lockOptions, GATE);
      taken.push(t);
      await recoverBoardJournal(host, t.lock);
    }
    // (the board lock, when taken, is the last of `taken` here)
    const boardLock = scope.board ? taken.at(-1)!.lock : undefined;
    const cover = await takeTaskCover(host, scope.tasks, boardLock, host.lockOptions, taken);
    await recoverTaskJournals(host, scope, cover);
  } finally {
    await releaseLocks(taken).catch(() => undefined);
  }
  if (listJournals(host.runtimeDir).includes(basename(committed.journalPath)) && readJournal(host.runtimeDir, basename(committed.journalPath))?.tx === tx)
    throw new TasksError(
      'E_COMPROMISED',
      `lost a lock while writing (the process stalled); the change is committed and is finished from ${committed.journalPath} by the next command that takes its locks: do not run it again`,
      { journal: committed.journalPath },
      { cause: committed.lost },
    );
  return { value, written: committed.written, events: readTxEvents(host.runtimeDir, tx) };
}

/** Under the board lock: finish a board change a writer left half done (taking its task locks). */
async function recoverBoardJournal(host: TxHost, boardLock: HeldLock): Promise<void> {
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
async function recoverTaskJournals(host: TxHost, scope: TxScope, cover: TaskCover): Promise<void> {
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
class TaskCover {
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

async function takeTaskCover(host: TxHost, ids: number[], boardLock: HeldLock | undefined, options: LockOptions, taken: AcquiredLock[]): Promise<TaskCover> {
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

function gateFor(file: string, cover: TaskCover, boardLock: HeldLock | undefined): HeldLock {
  const m = /task_([1-9][0-9]*)\.json$/.exec(file);
  const lock = m ? cover.gate(Number(m[1])) : boardLock;
  if (!lock) throw new TasksError('E_CORRUPT', `a commit record names ${file}, which it has no lock for; run 'tasks doctor'`);
  return lock;
}

/**
 * The value of `.highwatermark`: one plain integer (surrounding white space
 * allowed), 0 when the file is missing. Anything else stops id allocation:
 * reading it as 0 would hand out ids again.
 */
export function parseHighWaterMark(text: string | undefined, file: string): number {
  if (text === undefined) return 0;
  const m = /^\s*([0-9]+)\s*$/.exec(text);
  const n = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(n))
    throw new TasksError(
      'E_CORRUPT',
      `${file} must hold one plain integer, the highest id ever handed out, but holds ${JSON.stringify(text.trim().slice(0, 40))}; no id was handed out (run 'tasks doctor --fix' to set it from the board)`,
      { file },
    );
  return n;
}

/** sha1 of a lock owner's name, for owner lock folder names. */
export function ownerLockName(owner: string): string {
  return `owner-${createHash('sha1').update(owner).digest('hex').slice(0, 16)}.lock`;
}

export { journalDir, CorruptTaskError };

/**
 * The last gate of every write: a task its own readers would refuse is never
 * written, whichever command built it (docs/protocol.md, "One task, one
 * file"); the commands' checks come first, with their own messages.
 */
function checkReadable(id: number, text: string): void {
  try {
    parseTask(text, taskFileName(id));
  } catch (error) {
    if (!(error instanceof CorruptTaskError)) throw error;
    throw new TasksError(
      'E_INVALID',
      `task #${id} would be refused by every reader: ${String(error.details.problem)}; nothing was written`,
      { id },
      { cause: error },
    );
  }
}
