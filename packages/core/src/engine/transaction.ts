import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { CorruptTaskError, TasksError } from '../errors.js';
import { appendEvents, type NewEvent, type TaskEvent } from '../events/events.js';
import { copyTask, taskFileName, type Task } from '../format/format.js';
import { pausePoint, readFileIfExists, removeFile, syncFolder } from '../fs/fsio.js';
import type { HeldLock } from '../fs/locks.js';
import { parseLease, type Lease } from '../runtime/leases.js';
import { commitJournal, hashText, journalDir, newJournal, stageJournal, type JournalOp } from './journal.js';
import { EXCLUSIVE_ABOVE, NeedLocks, ownerLockName, type TaskCover, type TxHost, type TxScope } from './tx-locks.js';
import { applyWrites, ioError, leaseFile, stageWrites, taskText, undoWrites, type PendingOp } from './tx-staging.js';

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
 *
 * The locks and their order are tx-locks.ts's, the files staged and renamed
 * tx-staging.ts's, the commit record journal.ts's; this file holds the
 * Transaction (what a change reads and stages, and what a lost lock means
 * at each step of its commit); run-transaction.ts runs one, starting over as
 * often as it must.
 */

/** Thrown inside a transaction when what it read is not what is on disk (a lock raced): it starts over. */
export class ConcurrentChange extends Error {}

/** A lock was lost before the commit point: nothing was written, the transaction starts over. */
export class LockLost extends Error {
  constructor(readonly lost: unknown) {
    super('internal: a lock was lost before the commit point');
  }
}

/** A lock was lost after the commit point: the change is committed, its journal finishes it. */
export class CommittedChange extends Error {
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

export const HIGHWATERMARK_FILE = '.highwatermark';

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

  /** Whether `.highwatermark` exists (or this transaction set it): without it, a new id follows the names present. */
  hasHighWaterMark(): boolean {
    if (this.highWaterMark !== undefined) return true;
    this.need({ board: true });
    return this.original(HIGHWATERMARK_FILE, () => readFileIfExists(join(this.host.dir, HIGHWATERMARK_FILE))) !== undefined;
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

  /** Whether this change gives a task that was there another parent: the board index must have it before the locks go (parents.ts). */
  movesParents(): boolean {
    for (const [id, task] of this.staged) {
      const before = this.current.get(id);
      if (before !== undefined && before.parent !== task.parent && !this.removed.has(id)) return true;
    }
    return false;
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
    for (const task of this.stagedTasks()) push(taskFileName(task.id), this.removed.has(task.id) ? undefined : taskText(task, this.rawTexts.get(task.id)));
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
    this.checkUnchanged(ops);
    const { staged, journalPath } = await this.stage(ops);
    // Apply: rename each staged file into place, then log the events.
    const applied: PendingOp[] = [];
    let events: TaskEvent[];
    try {
      if (journalPath) {
        syncFolder(dirname(journalPath));
        pausePoint('committed');
      }
      await applyWrites(this.host.dir, ops, staged, this.sharedLocks(), applied);
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

  /** Before staging: every file is as it was read (two processes can both take over one stale lock, proper-lockfile #121), and every lock ours. */
  private checkUnchanged(ops: PendingOp[]): void {
    for (const op of ops) if (readFileIfExists(join(this.host.dir, op.file)) !== op.before) throw new ConcurrentChange();
    try {
      this.assertAllHeld();
    } catch (error) {
      throw new LockLost(error);
    }
  }

  /**
   * Stages the new files inside the lock folders, and the journal with them
   * for a change of more than one file or one with events, then renames the
   * journal into `.runtime/journal/`: the commit point.
   */
  private async stage(ops: PendingOp[]): Promise<{ staged: Map<PendingOp, string>; journalPath: string | undefined }> {
    const journaled = ops.length > 1 || (ops.length === 1 && this.events.length > 0);
    const journal = () => {
      const journalOps: JournalOp[] = ops.map((op) => ({ file: op.file, before: hashText(op.before), after: op.after ?? null }));
      return stageJournal(newJournal(this.id, journalOps, this.events), this.journalName(), this.boardLock ?? this.singleTaskLock());
    };
    let staging: Awaited<ReturnType<typeof stageWrites>>;
    try {
      staging = await stageWrites(this.host.dir, ops, journaled ? journal : undefined);
    } catch (error) {
      throw this.beforeCommit(error);
    }
    pausePoint('staged');
    let journalPath: string | undefined;
    if (staging.journal !== undefined) {
      try {
        journalPath = commitJournal(this.host.runtimeDir, this.journalName(), staging.journal, () => this.assertAllHeld());
      } catch (error) {
        throw this.beforeCommit(error);
      }
    }
    return { staged: staging.staged, journalPath };
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
      await undoWrites(this.host.dir, applied);
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

export { journalDir, CorruptTaskError, EXCLUSIVE_ABOVE, NeedLocks, ownerLockName, type TxHost, type TxScope };
