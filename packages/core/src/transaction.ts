import { mkdirSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CorruptTaskError, TasksError, isErrnoException } from './errors.js';
import { appendEvents, type NewEvent, type TaskEvent } from './events.js';
import { MAX_TASK_FILE_BYTES, copyTask, normalizeIds, serializeTask, taskFileName, type Task } from './format.js';
import { pausePoint, readFileIfExists, removeFile, renameFile, syncAndClose, syncFolder, writeNewFile } from './fsio.js';
import {
  commitJournal,
  hashText,
  journalDir,
  journalTasks,
  listJournals,
  newJournal,
  readJournal,
  recoverJournal,
  type JournalOp,
} from './journal.js';
import { LEASES_DIR, type Lease } from './leases.js';
import { acquireLock, releaseLocks, type AcquiredLock, type HeldLock, type LockOptions } from './locks.js';

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

const MAX_ATTEMPTS = 8;
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
  private rawTexts = new Map<number, string>();

  constructor(
    private host: TxHost,
    readonly scope: TxScope,
    private taskLocks: Map<number, HeldLock>,
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
    if (this.taskLocks.has(id)) return;
    this.need({ board: true });
    this.taskLocks.set(id, await this.acquireTask(id));
    this.scope.tasks.push(id);
  }

  /** A task for looking at: this transaction's version when it has one, else the file as it is now (no lock). */
  view(id: number): Task | undefined {
    const staged = this.staged.get(id);
    if (staged) return this.removed.has(id) ? undefined : staged;
    if (this.current.has(id)) return this.current.get(id);
    if (this.taskLocks.has(id)) return this.tryRead(id);
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

  /** Asks for locks this transaction does not hold (throws NeedLocks, the transaction starts over). */
  need(scope: Partial<TxScope>): void {
    const missing: Partial<TxScope> = {};
    if (scope.board && !this.scope.board) missing.board = true;
    const tasks = (scope.tasks ?? []).filter((id) => !this.taskLocks.has(id));
    if (tasks.length) missing.tasks = tasks;
    const owners = (scope.owners ?? []).filter((o) => o !== '' && !this.scope.owners.includes(o));
    if (owners.length) missing.owners = owners;
    if (missing.board || missing.tasks || missing.owners) throw new NeedLocks(missing);
  }

  holds(id: number): boolean {
    return this.taskLocks.has(id);
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
  }

  /** The claim record of a task (staged changes included). */
  readLease(id: number): Lease | undefined {
    if (this.leases.has(id)) return this.leases.get(id) ?? undefined;
    this.need({ tasks: [id] });
    const text = this.original(leaseFile(id), () => readFileIfExists(join(this.host.dir, leaseFile(id))));
    if (text === undefined) return undefined;
    try {
      const lease = JSON.parse(text) as Lease;
      return typeof lease.owner === 'string' && lease.task === id ? lease : undefined;
    } catch {
      return undefined;
    }
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
      const lock = this.taskLocks.get(Number(m[1]));
      if (!lock) throw new Error(`internal: ${file} written without its lock`);
      return lock;
    }
    if (!this.boardLock) throw new Error(`internal: ${file} written without the board lock`);
    return this.boardLock;
  }

  /** Every lock, for the check before a commit. */
  private allLocks(): HeldLock[] {
    return [...this.ownerLocks, ...(this.boardLock ? [this.boardLock] : []), ...this.taskLocks.values()];
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
    for (const lock of this.allLocks()) lock.assertHeld();

    // Stage: complete files inside the lock folders, fsync'd in batches.
    const staged = new Map<PendingOp, string>();
    for (const folder of new Set(ops.filter((op) => op.after !== undefined).map((op) => dirname(op.file)))) {
      if (folder !== '.') mkdirSync(join(this.host.dir, folder), { recursive: true });
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
      await syncAndClose(batch);
    } catch (error) {
      throw this.lockLossOr(error);
    }
    pausePoint('staged');

    const journaled = ops.length > 1 || (ops.length === 1 && this.events.length > 0);
    let journalPath: string | undefined;
    if (journaled) {
      const journalOps: JournalOp[] = ops.map((op) => ({ file: op.file, before: hashText(op.before), after: op.after ?? null }));
      const gate = this.boardLock ?? this.singleTaskLock();
      try {
        journalPath = await commitJournal(this.host.runtimeDir, this.journalName(), newJournal(this.id, journalOps, this.events), gate, () => {
          for (const lock of this.allLocks()) lock.assertHeld();
        });
      } catch (error) {
        throw this.lockLossOr(error);
      }
      pausePoint('committed');
    }

    // Apply: rename each staged file into place.
    const applied: PendingOp[] = [];
    let events: TaskEvent[];
    try {
      const folders = new Set<string>();
      let lastYield = Date.now();
      for (const op of ops) {
        pausePoint('rename');
        for (const lock of this.sharedLocks()) lock.assertHeld();
        op.gate.assertHeld();
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
      for (const folder of folders) syncFolder(folder);
      pausePoint('renamed');
      for (const lock of this.allLocks()) lock.assertHeld();
      events = await appendEvents(this.host.runtimeDir, this.events, this.host.lockOptions, { tx: this.id });
      pausePoint('logged');
    } catch (error) {
      throw await this.abandon(error, applied, journalPath);
    }
    if (journalPath) removeFile(journalPath);
    const files = new Set(ops.filter((op) => op.after !== undefined).map((op) => op.file));
    return { written: this.stagedTasks().filter((t) => files.has(taskFileName(t.id))), events };
  }

  private journalName(): string {
    return this.boardLock ? 'board.json' : `task_${this.scope.tasks[0]}.json`;
  }

  private singleTaskLock(): HeldLock {
    if (this.taskLocks.size !== 1) throw new Error('internal: a change to several tasks must hold the board lock');
    return [...this.taskLocks.values()][0];
  }

  /** A write that failed because a lock was lost (its staged folder vanished) says so. */
  private lockLossOr(error: unknown): unknown {
    if (error instanceof TasksError) return error;
    if (isErrnoException(error, 'ENOENT')) {
      for (const lock of this.allLocks()) lock.assertHeld();
    }
    return error;
  }

  /**
   * A failure after the commit point. With every lock still ours the change
   * is undone (each file renamed back to what it held) and the journal
   * removed: the command failed and nothing changed. With a lock lost, we may
   * no longer write: the journal stays and the next process holding the
   * locks completes the change.
   */
  private async abandon(error: unknown, applied: PendingOp[], journalPath: string | undefined): Promise<unknown> {
    const lost = this.allLocks().find((l) => {
      try {
        l.assertHeld();
        return false;
      } catch {
        return true;
      }
    });
    if (lost || (error instanceof TasksError && error.code === 'E_COMPROMISED')) {
      if (!journalPath) return error;
      return new TasksError(
        'E_COMPROMISED',
        `${error instanceof Error ? error.message.replace(/; nothing more was written, run the command again$/, '') : String(error)}; the change is committed and the next command that takes these locks completes it from ${journalPath}: do not run it again`,
        { journal: journalPath },
        { cause: error },
      );
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
      return ioError(error, journalPath ? `the change is half applied and the next command that takes these locks completes it from ${journalPath}` : 'the change may be half applied');
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
  for (let attempt = 1; ; attempt++) {
    const taken: AcquiredLock[] = [];
    try {
      const ownerLocks: HeldLock[] = [];
      if (scope.owners.length) mkdirSync(host.runtimeDir, { recursive: true });
      for (const owner of scope.owners) {
        const t = await acquireLock(host.ownerLockPath(owner), host.lockOptions);
        taken.push(t);
        ownerLocks.push(t.lock);
      }
      let boardLock: HeldLock | undefined;
      if (scope.board) {
        const t = await acquireLock(host.boardLockPath(), host.lockOptions);
        taken.push(t);
        boardLock = t.lock;
        await recoverBoardJournal(host, boardLock);
      }
      const taskLocks = new Map<number, HeldLock>();
      const taskOptions = options.noWaitTasks && attempt === 1 ? { ...host.lockOptions, timeoutMs: 0 } : host.lockOptions;
      for (const id of scope.tasks) {
        const t = await acquireLock(host.taskLockPath(id), taskOptions);
        taken.push(t);
        taskLocks.set(id, t.lock);
      }
      await recoverTaskJournals(host, scope, taskLocks);
      pausePoint('locked');
      const tx = new Transaction(host, scope, taskLocks, boardLock, ownerLocks, async (id) => {
        const t = await acquireLock(host.taskLockPath(id), host.lockOptions);
        taken.push(t);
        return t.lock;
      });
      const value = await fn(tx);
      const { written, events } = await tx.commit();
      await releaseLocks(taken);
      return { value, written, events };
    } catch (error) {
      await releaseLocks(taken).catch(() => undefined);
      if (error instanceof NeedLocks && attempt < MAX_ATTEMPTS * 4) {
        scope = mergeScope(scope, error.scope);
        continue;
      }
      if (error instanceof ConcurrentChange && attempt < MAX_ATTEMPTS) {
        await yieldToLoop();
        continue;
      }
      if (error instanceof ConcurrentChange || error instanceof NeedLocks)
        throw new TasksError('E_LOCKED', 'another process kept changing the same task files; run the command again');
      throw error;
    }
  }
}

/** Under the board lock: finish a board change a writer left half done (taking its task locks). */
async function recoverBoardJournal(host: TxHost, boardLock: HeldLock): Promise<void> {
  if (!listJournals(host.runtimeDir).includes('board.json')) return;
  const journal = readJournal(host.runtimeDir, 'board.json');
  if (!journal) return;
  const ids = journalTasks(journal);
  const taken: AcquiredLock[] = [];
  try {
    const locks = new Map<number, HeldLock>();
    for (const id of ids) {
      const t = await acquireLock(host.taskLockPath(id), host.lockOptions);
      taken.push(t);
      locks.set(id, t.lock);
    }
    await recoverTaskJournals(host, { owners: [], board: true, tasks: ids }, locks);
    await recoverJournal(host.dir, host.runtimeDir, 'board.json', (file) => gateFor(file, locks, boardLock), host.lockOptions);
  } finally {
    await releaseLocks(taken);
  }
}

/**
 * With the task locks of `scope` held: finish one-task changes left half
 * done on them. A half-done board change touching them needs the board lock
 * first: without it, the transaction starts over holding it.
 */
async function recoverTaskJournals(host: TxHost, scope: TxScope, locks: Map<number, HeldLock>): Promise<void> {
  const names = listJournals(host.runtimeDir);
  if (names.length === 0) return;
  if (!scope.board && names.includes('board.json')) {
    const journal = readJournal(host.runtimeDir, 'board.json');
    if (journal && journalTasks(journal).some((id) => locks.has(id))) throw new NeedLocks({ board: true });
  }
  for (const name of names) {
    const m = /^task_([1-9][0-9]*)\.json$/.exec(name);
    if (!m || !locks.has(Number(m[1]))) continue;
    await recoverJournal(host.dir, host.runtimeDir, name, (file) => gateFor(file, locks, undefined), host.lockOptions);
  }
}

function gateFor(file: string, locks: Map<number, HeldLock>, boardLock: HeldLock | undefined): HeldLock {
  const m = /task_([1-9][0-9]*)\.json$/.exec(file);
  const lock = m ? locks.get(Number(m[1])) : boardLock;
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
