import { existsSync, mkdirSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { findBoard, type FindBoardOptions } from './board.js';
import { readConfig, type BoardConfig } from './config.js';
import { ClaimError, CorruptTaskError, CycleError, TasksError, isErrnoException } from './errors.js';
import { EVENTS_FILE, appendEvents, parseEvents, type NewEvent, type TaskEvent } from './events.js';
import {
  MAX_TASK_FILE_BYTES,
  TASK_STATUSES,
  copyTask,
  createRecord,
  idFromFileName,
  isClosed,
  normalizeIds,
  parseTask,
  serializeTask,
  setOwn,
  taskFileName,
  cloneJson,
  type Task,
  type TaskStatus,
} from './format.js';
import { atomicWriteFile, isTempFileName, readFileIfExists } from './fsio.js';
import { findCycle, isReady, openBlockers } from './graph.js';
import {
  createLease,
  leaseExpiry,
  listLeases,
  readLease,
  removeLease,
  writeLease,
  type Lease,
  type LeaseInput,
} from './leases.js';
import { DEFAULT_LOCK_OPTIONS, withLock, withLocks, type HeldLock, type LockOptions } from './locks.js';

export const RUNTIME_DIR = '.runtime';
export const HIGHWATERMARK_FILE = '.highwatermark';
export const BOARD_LOCK = '.board.lock';

/** The `.gitignore` that `tasks init` writes (PROTOCOL §3). */
export const BOARD_GITIGNORE = `# Written by 'tasks init': locks, temp files and runtime state stay out of git.
*.lock
.tmp-*
.runtime/
`;

/** A task file that could not be read as a task, reported instead of skipped. */
export interface TaskProblem {
  file: string;
  id?: number;
  line?: number;
  column?: number;
  message: string;
}

/** Every task on the board at one moment, plus each file that is not a valid task. */
export interface BoardSnapshot {
  tasks: Task[];
  byId: Map<number, Task>;
  problems: TaskProblem[];
}

/** Who acts, for ownership checks and events. */
export interface ActorOptions {
  actor?: string;
}

/** The fields a new task can start with. */
export interface CreateTaskInput {
  subject: string;
  description?: string;
  activeForm?: string;
  owner?: string;
  status?: TaskStatus;
  metadata?: Record<string, unknown>;
  blockedBy?: number[];
  blocks?: number[];
}

/** A change to one task. `activeForm: null` removes it; a metadata value of null removes that key. */
export interface UpdateTaskInput {
  subject?: string;
  description?: string;
  activeForm?: string | null;
  owner?: string;
  status?: TaskStatus;
  metadata?: Record<string, unknown>;
  addBlockedBy?: number[];
  removeBlockedBy?: number[];
  addBlocks?: number[];
  removeBlocks?: number[];
}

/** One entry of a TodoWrite-style batch: with an id it replaces those fields, without one it creates. */
export interface BatchItem {
  id?: number;
  subject?: string;
  description?: string;
  status?: TaskStatus;
  activeForm?: string | null;
  owner?: string;
  blockedBy?: number[];
  metadata?: Record<string, unknown>;
}

/** What a mutation did. */
export interface MutationResult {
  /** The task the command was about, as written. */
  task: Task;
  /** Every task file written, ascending id. */
  written: Task[];
  /** Tasks whose blockedBy became empty through this mutation. */
  unblocked: number[];
  events: TaskEvent[];
}

/** Options for claims (PROTOCOL §6). */
export interface ClaimOptions {
  owner: string;
  /** The lease to record; null records a claim that never expires. Default: a lease of the board's length. */
  lease?: LeaseInput | null;
  /** claimNext only: ids never to claim (e.g. tasks that kept failing for this worker). */
  exclude?: Iterable<number>;
}

export interface ClaimResult extends MutationResult {
  /** True when the claimant already held the task. */
  alreadyHeld: boolean;
  lease: Lease;
}

/** A task the reaper released, or would release with dryRun. */
export interface ReapedTask {
  task: number;
  owner: string;
  reason: 'expired' | 'process_gone';
  lease: Lease;
}

/** Thrown inside a transaction when a file changed under a lock we believed we held (proper-lockfile #121). */
class ConcurrentChangeError extends Error {}

const MAX_ATTEMPTS = 5;

/** How long claimNext trusts a closed task it has seen before stat'ing its file again (ms). */
const CLOSED_RECHECK_MS = 1000;

/** Reads, stages and commits task files while their locks are held. */
class Transaction {
  private originals = new Map<number, string | undefined>();
  private current = new Map<number, Task>();
  private staged = new Map<number, Task>();
  readonly events: NewEvent[] = [];
  /** Runs just before the task files are renamed into place (claim records: they must exist first). */
  readonly beforeWrite: (() => void)[] = [];
  readonly afterCommit: (() => void)[] = [];

  constructor(
    private store: TaskStore,
    private locked: Set<number>,
    private locks: HeldLock[],
  ) {}

  /** The task as it is now (staged changes included); throws E_NOT_FOUND or E_CORRUPT. */
  read(id: number): Task {
    const task = this.tryRead(id);
    if (!task) throw notFound(id, this.store);
    return task;
  }

  /** Like read, but undefined when the file does not exist. */
  tryRead(id: number): Task | undefined {
    const staged = this.staged.get(id);
    if (staged) return staged;
    if (this.current.has(id)) return this.current.get(id);
    if (!this.locked.has(id)) throw new Error(`internal: task ${id} read for update without its lock`);
    const text = this.store.readTaskText(id);
    this.originals.set(id, text);
    if (text === undefined) return undefined;
    const task = this.store.parseTaskText(id, text);
    this.current.set(id, task);
    return task;
  }

  /** A copy of the task to change and then put(). */
  edit(id: number): Task {
    return copyTask(this.read(id));
  }

  put(task: Task): void {
    if (!this.locked.has(task.id)) throw new Error(`internal: task ${task.id} written without its lock`);
    if (!this.originals.has(task.id)) this.originals.set(task.id, this.store.readTaskText(task.id));
    this.staged.set(task.id, task);
  }

  event(event: NewEvent): void {
    this.events.push(event);
  }

  /** Writes every staged task whose bytes changed, after checking nobody else wrote meanwhile. */
  async commit(): Promise<{ written: Task[]; events: TaskEvent[] }> {
    const writes: { task: Task; text: string }[] = [];
    for (const [id, task] of [...this.staged].sort((a, b) => a[0] - b[0])) {
      const text = serializeTask(task);
      if (text !== this.originals.get(id)) writes.push({ task, text });
    }
    for (const lock of this.locks) lock.assertHeld();
    // Two processes can both take over one stale lock (proper-lockfile #121):
    // re-check what we read before writing anything.
    for (const { task } of writes) {
      if (this.store.readTaskText(task.id) !== this.originals.get(task.id)) throw new ConcurrentChangeError();
    }
    for (const hook of this.beforeWrite) hook();
    for (const { task, text } of writes) atomicWriteFile(this.store.taskPath(task.id), text);
    for (const hook of this.afterCommit) hook();
    const events = await appendEvents(this.store.runtimeDir, this.events, this.store.lockOptions);
    return { written: writes.map((w) => w.task), events };
  }
}

function notFound(id: number, store: TaskStore): TasksError {
  const ids = store.listIds();
  const near = ids.length
    ? ` (the board has ${ids.length === 1 ? `#${ids[0]}` : `#${ids[0]}…#${ids[ids.length - 1]}`}; see 'tasks list')`
    : " (the board is empty; create one with 'tasks create')";
  return new TasksError('E_NOT_FOUND', `task #${id} not found${near}`, { id });
}

function ownerLockName(owner: string): string {
  return `owner-${createHash('sha1').update(owner).digest('hex').slice(0, 16)}.lock`;
}

/** For workers: the task must still be in progress for `owner` (not reaped or taken meanwhile). */
function assertHeldBy(task: Task, owner: string): void {
  if (task.status !== 'in_progress' || task.owner !== owner)
    throw new TasksError(
      'E_NOT_OWNER',
      `task #${task.id} is no longer in progress for ${owner} (now ${task.status}${task.owner ? `, owner ${task.owner}` : ''}); it was reaped or taken meanwhile`,
      { id: task.id, owner: task.owner, status: task.status },
    );
}

function transitionAllowed(from: TaskStatus, to: TaskStatus): boolean {
  if (from === to || to === 'deleted') return true;
  if (from === 'pending') return to === 'in_progress' || to === 'completed';
  if (from === 'in_progress') return to === 'completed' || to === 'pending';
  return false;
}

function checkTransition(task: Task, to: TaskStatus): void {
  if (!transitionAllowed(task.status, to)) {
    const hint =
      task.status === 'completed'
        ? '; a completed task stays completed, create a new task for more work'
        : task.status === 'deleted'
          ? '; a deleted task is a tombstone, create a new task instead'
          : '';
    throw new TasksError('E_TRANSITION', `task #${task.id} cannot go from ${task.status} to ${to}${hint}`, {
      id: task.id,
      from: task.status,
      to,
    });
  }
}

function checkSubject(subject: unknown): string {
  if (typeof subject !== 'string' || subject.trim() === '')
    throw new TasksError('E_INVALID', 'a task needs a subject: a non-empty one-line title');
  if (/[\r\n]/.test(subject)) throw new TasksError('E_INVALID', 'a subject is one line; put details in the description');
  return subject;
}

function checkStatus(status: unknown): TaskStatus {
  if (typeof status !== 'string' || !(TASK_STATUSES as readonly string[]).includes(status))
    throw new TasksError('E_INVALID', `unknown status ${JSON.stringify(status)}; use one of ${TASK_STATUSES.join(', ')}`);
  return status as TaskStatus;
}

function applyMetadata(task: Task, patch: Record<string, unknown>): void {
  const metadata = (task.metadata ? cloneJson(task.metadata) : createRecord()) as Record<string, unknown>;
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null || value === undefined) delete metadata[key];
    else setOwn(metadata, key, cloneJson(value));
  }
  task.metadata = metadata;
}

function remove(list: number[], id: number): boolean {
  const i = list.indexOf(id);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

/**
 * The board: every read and mutation of `.tasks/`. Adapters (CLI, watcher,
 * agent tool) go through this and never touch the files themselves.
 */
export class TaskStore {
  readonly dir: string;
  readonly runtimeDir: string;
  readonly lockOptions: LockOptions;
  private configCache?: BoardConfig;
  /**
   * Closed tasks already read by claimNext, with the file's identity when read
   * and when that was last checked. Completed and deleted are final states, so
   * a later scan does not read these files again: it trusts the entry for
   * CLOSED_RECHECK_MS, then stats the file (any rewrite, even by hand or by
   * `clear` and a new task with the same id, changes the stat).
   */
  private closedSeen = new Map<number, { ino: number; mtimeMs: number; size: number; checkedAt: number; task: Task }>();

  constructor(dir: string, options: { lock?: Partial<LockOptions>; env?: NodeJS.ProcessEnv } = {}) {
    this.dir = dir;
    this.runtimeDir = join(dir, RUNTIME_DIR);
    const env = options.env ?? process.env;
    const config = this.config;
    this.lockOptions = {
      staleMs: Number(env.TASKS_LOCK_STALE_MS) || config.staleLockSeconds * 1000 || DEFAULT_LOCK_OPTIONS.staleMs,
      timeoutMs: Number(env.TASKS_LOCK_TIMEOUT_MS) || config.lockTimeoutSeconds * 1000 || DEFAULT_LOCK_OPTIONS.timeoutMs,
      ...options.lock,
    };
  }

  /** Opens the board found from `options` (PROTOCOL §1). */
  static open(options: FindBoardOptions = {}): TaskStore {
    return new TaskStore(findBoard(options), { env: options.env });
  }

  /** Creates a new board at `dir`; refuses to clobber an existing one. */
  static init(dir: string): TaskStore {
    if (existsSync(dir)) {
      const names = readdirSync(dir);
      if (names.some((n) => n.startsWith('task_') || n === HIGHWATERMARK_FILE || n === '.gitignore'))
        throw new TasksError('E_EXISTS', `a board already exists at ${dir}; nothing was changed`, { dir });
    }
    mkdirSync(dir, { recursive: true });
    atomicWriteFile(join(dir, '.gitignore'), BOARD_GITIGNORE);
    atomicWriteFile(join(dir, HIGHWATERMARK_FILE), '0\n');
    mkdirSync(join(dir, RUNTIME_DIR), { recursive: true });
    return new TaskStore(dir);
  }

  /** `.tasks/config.json`, read once per store. */
  get config(): BoardConfig {
    this.configCache ??= readConfig(this.dir);
    return this.configCache;
  }

  taskPath(id: number): string {
    return join(this.dir, taskFileName(id));
  }

  /** The lock directory of task `id` (for core modules that write task files under its lock). */
  taskLockPath(id: number): string {
    return join(this.dir, `${taskFileName(id)}.lock`);
  }

  // ---- reads -------------------------------------------------------------

  /** Task ids present as `task_N.json`, ascending. */
  listIds(): number[] {
    const ids: number[] = [];
    for (const name of this.readDirNames()) {
      const id = idFromFileName(name);
      if (id !== undefined) ids.push(id);
    }
    return ids.sort((a, b) => a - b);
  }

  private readDirNames(): string[] {
    try {
      return readdirSync(this.dir);
    } catch (error) {
      if (isErrnoException(error, 'ENOENT'))
        throw new TasksError('E_NO_BOARD', `the board ${this.dir} is gone; run 'tasks init' to create one`, {}, { cause: error });
      throw error;
    }
  }

  /** Raw text of a task file, or undefined when it does not exist. Refuses oversized files. */
  readTaskText(id: number): string | undefined {
    const text = readFileIfExists(this.taskPath(id));
    if (text !== undefined && Buffer.byteLength(text) > MAX_TASK_FILE_BYTES)
      throw new CorruptTaskError(
        this.taskPath(id),
        1,
        1,
        `file is ${(Buffer.byteLength(text) / 1024 / 1024).toFixed(1)} MB, over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task`,
      );
    return text;
  }

  /** Parses text read from task_N.json (messages name the full path). */
  parseTaskText(id: number, text: string): Task {
    return parseTask(text, this.taskPath(id));
  }

  /** One task; throws E_NOT_FOUND or E_CORRUPT (with file, line, column). */
  getTask(id: number): Task {
    const text = this.readTaskText(id);
    if (text === undefined) throw notFound(id, this);
    return this.parseTaskText(id, text);
  }

  /** One task, or undefined when missing or unreadable (for looking at neighbours). */
  peekTask(id: number): Task | undefined {
    try {
      const text = this.readTaskText(id);
      return text === undefined ? undefined : this.parseTaskText(id, text);
    } catch (error) {
      if (error instanceof CorruptTaskError) return undefined;
      throw error;
    }
  }

  /** Reads every task file; bad files are reported in `problems`, never skipped silently. */
  loadBoard(): BoardSnapshot {
    const tasks: Task[] = [];
    const problems: TaskProblem[] = [];
    for (const name of this.readDirNames()) {
      const id = idFromFileName(name);
      if (id === undefined) {
        if (/^task_.*\.json$/i.test(name))
          problems.push({ file: join(this.dir, name), message: `not a task file name (expected task_N.json, N without leading zeros)` });
        continue;
      }
      try {
        const text = this.readTaskText(id);
        if (text === undefined) continue; // removed between readdir and read
        tasks.push(this.parseTaskText(id, text));
      } catch (error) {
        if (!(error instanceof CorruptTaskError)) throw error;
        problems.push({ file: error.file, id, line: error.line, column: error.column, message: String(error.details.problem) });
      }
    }
    tasks.sort((a, b) => a.id - b.id);
    problems.sort((a, b) => (a.id ?? 0) - (b.id ?? 0) || a.file.localeCompare(b.file));
    return { tasks, byId: new Map(tasks.map((t) => [t.id, t])), problems };
  }

  /** The highest id ever allocated, from `.highwatermark` (0 when absent or unreadable). */
  readHighWaterMark(): number {
    const text = readFileIfExists(join(this.dir, HIGHWATERMARK_FILE));
    const n = text === undefined ? 0 : Number.parseInt(text.trim(), 10);
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  }

  // ---- locking -----------------------------------------------------------

  private async withBoardLock<T>(fn: () => Promise<T>): Promise<T> {
    return withLock(join(this.dir, BOARD_LOCK), this.lockOptions, fn);
  }

  /** Holds the owner locks (sorted) that make single-in-progress safe across processes. */
  private async withOwnerLocks<T>(owners: string[], fn: () => Promise<T>): Promise<T> {
    const names = [...new Set(owners.filter((o) => o !== ''))].sort();
    if (!this.config.singleInProgress || names.length === 0) return fn();
    mkdirSync(this.runtimeDir, { recursive: true });
    return withLocks(
      names.map((o) => join(this.runtimeDir, ownerLockName(o))),
      this.lockOptions,
      fn,
    );
  }

  /** Runs fn in a transaction holding the locks of `ids` (ascending), retrying on a detected lock race. */
  private async transact<T>(
    ids: number[],
    fn: (tx: Transaction) => T | Promise<T>,
    lockOptions: LockOptions = this.lockOptions,
  ): Promise<{ value: T; written: Task[]; events: TaskEvent[] }> {
    const sorted = normalizeIds(ids);
    for (let attempt = 1; ; attempt++) {
      try {
        return await withLocks(
          sorted.map((id) => this.taskLockPath(id)),
          lockOptions,
          async (locks) => {
            const tx = new Transaction(this, new Set(sorted), locks);
            const value = await fn(tx);
            const { written, events } = await tx.commit();
            return { value, written, events };
          },
        );
      } catch (error) {
        if (error instanceof ConcurrentChangeError && attempt < MAX_ATTEMPTS) continue;
        if (error instanceof ConcurrentChangeError)
          throw new TasksError('E_LOCKED', 'another process kept changing the same task files; run the command again');
        throw error;
      }
    }
  }

  // ---- single-in-progress -------------------------------------------------

  /** The id of a task other than `except` that `owner` holds in progress, if any. */
  findOwnerTask(owner: string, except: Set<number> = new Set()): number | undefined {
    for (const lease of listLeases(this.runtimeDir)) {
      if (lease.owner !== owner || except.has(lease.task)) continue;
      const task = this.peekTask(lease.task);
      if (task && task.status === 'in_progress' && task.owner === owner) return task.id;
    }
    return undefined;
  }

  private assertOwnerFree(owner: string, except: Set<number>): void {
    if (!this.config.singleInProgress || owner === '') return;
    const busy = this.findOwnerTask(owner, except);
    if (busy !== undefined)
      throw new ClaimError(
        'owner_busy',
        `${owner} already has task #${busy} in progress; finish it ('tasks done ${busy}') or release it ('tasks release ${busy}') first`,
        { task: busy, owner },
      );
  }

  // ---- mutations ---------------------------------------------------------

  /** Checks that every id names an existing, non-deleted task other than `self`. */
  private checkEdgeTargets(self: number, ids: number[], lookup: (id: number) => Task | undefined): void {
    for (const id of ids) {
      if (id === self) throw new CycleError([self, self]);
      const task = lookup(id);
      if (!task) {
        if (existsSync(this.taskPath(id))) this.getTask(id); // throws the corruption with its position
        throw new TasksError('E_NOT_FOUND', `cannot link to task #${id}: it does not exist (see 'tasks list')`, { id });
      }
      if (task.status === 'deleted') throw new TasksError('E_INVALID', `cannot link to task #${id}: it is deleted`, { id });
    }
  }

  /** Creates a task; edges are written on both sides (PROTOCOL §4, §5). */
  async createTask(input: CreateTaskInput, options: ActorOptions = {}): Promise<MutationResult> {
    const status = input.status === undefined ? 'pending' : checkStatus(input.status);
    const owners = status === 'in_progress' ? [input.owner || options.actor || ''] : [];
    return this.withOwnerLocks(owners, () => this.withBoardLock(() => this.createUnderBoardLock(input, options)));
  }

  private async createUnderBoardLock(input: CreateTaskInput, options: ActorOptions): Promise<MutationResult> {
    const subject = checkSubject(input.subject);
    const status = input.status === undefined ? 'pending' : checkStatus(input.status);
    if (status === 'deleted') throw new TasksError('E_INVALID', 'a new task cannot start deleted');
    const blockedBy = normalizeIds(input.blockedBy ?? []);
    const blocks = normalizeIds(input.blocks ?? []);
    const id = Math.max(this.readHighWaterMark(), this.listIds().at(-1) ?? 0) + 1;
    const peek = (n: number) => this.peekTask(n);
    this.checkEdgeTargets(id, [...blockedBy, ...blocks], peek);
    // A cycle through the new task needs a path from one of its dependents to one of its blockers.
    for (const b of blockedBy) {
      for (const d of blocks) {
        const path = findCycle(b, d, peek);
        if (path) throw new CycleError([id, ...path.slice(1, -1), b, id].filter((x, i, a) => i === 0 || x !== a[i - 1]));
        if (b === d) throw new CycleError([id, d, id]);
      }
    }
    const owner = input.owner ?? (status === 'in_progress' ? options.actor ?? '' : '');
    if (status === 'in_progress') {
      if (owner === '') throw new TasksError('E_INVALID', 'a task created in progress needs an owner (--owner)');
      this.assertOwnerFree(owner, new Set());
      const open = blockedBy.filter((b) => !isClosed(peek(b)!.status));
      if (open.length) throw new TasksError('E_BLOCKED', `task cannot start: blocked by ${open.map((b) => `#${b}`).join(', ')}`);
    }
    const task: Task = {
      id,
      subject,
      description: input.description ?? '',
      status,
      owner,
      blockedBy: blockedBy.filter((b) => !isClosed(peek(b)!.status)),
      blocks,
      extra: createRecord(),
    };
    if (input.activeForm !== undefined) task.activeForm = input.activeForm;
    if (input.metadata !== undefined) applyMetadata(task, input.metadata);
    const result = await this.transact([id, ...blockedBy, ...blocks], (tx) => {
      if (tx.tryRead(id)) throw new ConcurrentChangeError();
      tx.put(task);
      for (const b of blockedBy) {
        const blocker = tx.edit(b);
        blocker.blocks = normalizeIds([...blocker.blocks, id]);
        tx.put(blocker);
      }
      for (const d of blocks) {
        const dependent = tx.edit(d);
        if (!isClosed(task.status)) dependent.blockedBy = normalizeIds([...dependent.blockedBy, id]);
        tx.put(dependent);
      }
      tx.event({ type: 'created', task: id, owner: options.actor, subject });
      if (task.status === 'in_progress') {
        const lease = createLease(id, owner, null, this.config.leaseSeconds);
        tx.beforeWrite.push(() => writeLease(this.runtimeDir, lease));
      }
      // The file is complete on disk before the mark moves (PROTOCOL §5).
      tx.afterCommit.push(() => atomicWriteFile(join(this.dir, HIGHWATERMARK_FILE), `${id}\n`));
    });
    return { task, written: result.written, unblocked: [], events: result.events };
  }

  /** Changes any fields of a task, its edges and its status, in one locked step. */
  async updateTask(id: number, patch: UpdateTaskInput, options: ActorOptions = {}): Promise<MutationResult> {
    if (patch.subject !== undefined) checkSubject(patch.subject);
    const toStatus = patch.status === undefined ? undefined : checkStatus(patch.status);
    const edgeChange = !!(patch.addBlockedBy?.length || patch.removeBlockedBy?.length || patch.addBlocks?.length || patch.removeBlocks?.length);
    const closing = toStatus === 'completed' || toStatus === 'deleted';
    const current = this.getTask(id);
    const nextOwner = patch.owner ?? (current.owner || (toStatus === 'in_progress' ? options.actor ?? '' : ''));
    const startsWork = (toStatus ?? current.status) === 'in_progress' && (toStatus === 'in_progress' || patch.owner !== undefined);
    const run = () => this.updateLocked(id, patch, options, toStatus, nextOwner, startsWork);
    return this.withOwnerLocks(startsWork ? [nextOwner] : [], () =>
      edgeChange || closing ? this.withBoardLock(run) : run(),
    );
  }

  private async updateLocked(
    id: number,
    patch: UpdateTaskInput,
    options: ActorOptions,
    toStatus: TaskStatus | undefined,
    nextOwner: string,
    startsWork: boolean,
  ): Promise<MutationResult> {
    const before = this.getTask(id);
    const addBlockedBy = normalizeIds(patch.addBlockedBy ?? []);
    const removeBlockedBy = normalizeIds(patch.removeBlockedBy ?? []);
    const addBlocks = normalizeIds(patch.addBlocks ?? []);
    const removeBlocks = normalizeIds(patch.removeBlocks ?? []);
    const peek = (n: number) => this.peekTask(n);
    this.checkEdgeTargets(id, [...addBlockedBy, ...addBlocks], peek);
    const closing = toStatus === 'completed' || toStatus === 'deleted';
    const ids = [id, ...addBlockedBy, ...removeBlockedBy, ...addBlocks, ...removeBlocks];
    if (closing) ids.push(...before.blocks, ...addBlocks);
    if (startsWork) this.assertOwnerFree(nextOwner, new Set([id]));

    const unblocked: number[] = [];
    const result = await this.transact(ids, (tx) => {
      const task = tx.edit(id);
      if (patch.subject !== undefined) task.subject = patch.subject;
      if (patch.description !== undefined) task.description = patch.description;
      if (patch.activeForm === null) delete task.activeForm;
      else if (patch.activeForm !== undefined) task.activeForm = patch.activeForm;
      if (patch.owner !== undefined) task.owner = patch.owner;
      if (patch.metadata !== undefined) applyMetadata(task, patch.metadata);
      tx.put(task);

      // Edges first, so a status change sees the new graph. Cycle checks read
      // through the transaction so edges added in this same step count.
      const lookup = (n: number) => (ids.includes(n) ? tx.tryRead(n) : peek(n));
      for (const b of addBlockedBy) this.linkInTx(tx, b, id, lookup);
      for (const d of addBlocks) this.linkInTx(tx, id, d, lookup);
      for (const b of removeBlockedBy) this.unlinkInTx(tx, b, id);
      for (const d of removeBlocks) this.unlinkInTx(tx, id, d);

      if (toStatus !== undefined && toStatus !== before.status) {
        const edited = tx.edit(id);
        checkTransition(edited, toStatus);
        if (toStatus === 'in_progress') {
          const open = openBlockers(edited, lookup);
          if (open.length)
            throw new TasksError('E_BLOCKED', `task #${id} is blocked by ${open.map((b) => `#${b}`).join(', ')}; finish those first`, {
              id,
              blockedBy: open,
            });
          edited.status = 'in_progress';
          edited.owner = nextOwner;
          tx.put(edited);
          const lease = createLease(id, nextOwner, null, this.config.leaseSeconds);
          tx.beforeWrite.push(() => writeLease(this.runtimeDir, lease));
          tx.event({ type: 'started', task: id, owner: nextOwner });
        } else if (toStatus === 'pending') {
          tx.put(Object.assign(edited, { status: 'pending' as const }));
          tx.afterCommit.push(() => removeLease(this.runtimeDir, id));
          tx.event({ type: 'released', task: id, owner: options.actor, previousOwner: before.owner });
        } else {
          unblocked.push(...this.closeInTx(tx, id, toStatus, options));
        }
      } else if (startsWork) {
        const lease = createLease(id, nextOwner, null, this.config.leaseSeconds);
        tx.beforeWrite.push(() => writeLease(this.runtimeDir, lease));
      }
      const changed = Object.keys(patch).filter((k) => k !== 'status' && (patch as Record<string, unknown>)[k] !== undefined);
      if (changed.length) tx.event({ type: 'updated', task: id, owner: options.actor, fields: changed });
    });
    const task = result.written.find((t) => t.id === id) ?? this.getTask(id);
    return { task, written: result.written, unblocked, events: result.events };
  }

  /** Adds "blocker blocks waiter" on both sides inside a transaction. */
  private linkInTx(tx: Transaction, blocker: number, waiter: number, lookup: (id: number) => Task | undefined): void {
    const cycle = findCycle(blocker, waiter, lookup);
    if (cycle) throw new CycleError(cycle);
    const b = tx.edit(blocker);
    const w = tx.edit(waiter);
    b.blocks = normalizeIds([...b.blocks, waiter]);
    // A finished blocker no longer blocks: its edge is kept as history on its side only.
    if (!isClosed(b.status)) w.blockedBy = normalizeIds([...w.blockedBy, blocker]);
    tx.put(b);
    tx.put(w);
    tx.event({ type: 'edge.added', task: waiter, blockedBy: blocker });
  }

  /** Removes "blocker blocks waiter" from both sides inside a transaction. */
  private unlinkInTx(tx: Transaction, blocker: number, waiter: number): void {
    const w = tx.tryRead(waiter) ? tx.edit(waiter) : undefined;
    const b = tx.tryRead(blocker) ? tx.edit(blocker) : undefined;
    let changed = false;
    if (w && remove(w.blockedBy, blocker)) {
      changed = true;
      tx.put(w);
    }
    if (b && remove(b.blocks, waiter)) {
      changed = true;
      tx.put(b);
    }
    if (changed) tx.event({ type: 'edge.removed', task: waiter, blockedBy: blocker });
  }

  /**
   * Marks a task completed or deleted and propagates (PROTOCOL §4): its id
   * leaves every dependent's blockedBy; returns the dependents that became
   * unblocked. Idempotent.
   */
  private closeInTx(tx: Transaction, id: number, status: 'completed' | 'deleted', options: ActorOptions): number[] {
    const task = tx.edit(id);
    const wasOpen = task.status !== status;
    task.status = status;
    tx.put(task);
    tx.afterCommit.push(() => removeLease(this.runtimeDir, id));
    if (wasOpen) tx.event({ type: status, task: id, owner: options.actor });
    const unblocked: number[] = [];
    for (const d of task.blocks) {
      const dependent = tx.tryRead(d);
      if (!dependent) continue;
      if (!dependent.blockedBy.includes(id)) continue;
      const edited = copyTask(dependent);
      remove(edited.blockedBy, id);
      tx.put(edited);
      if (edited.blockedBy.length === 0 && !isClosed(edited.status)) {
        unblocked.push(d);
        tx.event({ type: 'unblocked', task: d, by: id });
      }
    }
    return unblocked;
  }

  /** Adds the edge "`blocker` blocks `task`" on both sides, refusing cycles. */
  async addDependency(task: number, blocker: number, options: ActorOptions = {}): Promise<MutationResult> {
    return this.updateTask(task, { addBlockedBy: [blocker] }, options);
  }

  /** Removes the edge "`blocker` blocks `task`" from both sides. */
  async removeDependency(task: number, blocker: number, options: ActorOptions = {}): Promise<MutationResult> {
    return this.updateTask(task, { removeBlockedBy: [blocker] }, options);
  }

  /**
   * Completes a task and propagates. A task owned by someone else needs
   * `force`; so does one whose blockers are still open.
   */
  async completeTask(id: number, options: ActorOptions & { force?: boolean; heldBy?: string } = {}): Promise<MutationResult> {
    return this.withBoardLock(async () => {
      const current = this.getTask(id);
      const ids = [id, ...current.blocks];
      const unblocked: number[] = [];
      const result = await this.transact(ids, (tx) => {
        const task = tx.read(id);
        if (options.heldBy !== undefined) assertHeldBy(task, options.heldBy);
        if (task.status === 'deleted') checkTransition(task, 'completed');
        if (task.status !== 'completed' && !options.force) {
          if (task.owner !== '' && options.actor !== undefined && task.owner !== options.actor)
            throw new TasksError(
              'E_NOT_OWNER',
              `task #${id} belongs to ${task.owner}; only they complete it, or add --force`,
              { id, owner: task.owner },
            );
          const open = openBlockers(task, (n) => this.peekTask(n));
          if (open.length)
            throw new TasksError(
              'E_BLOCKED',
              `task #${id} is still blocked by ${open.map((b) => `#${b}`).join(', ')}; finish those first or add --force`,
              { id, blockedBy: open },
            );
        }
        unblocked.push(...this.closeInTx(tx, id, 'completed', options));
      });
      const task = result.written.find((t) => t.id === id) ?? this.getTask(id);
      return { task, written: result.written, unblocked, events: result.events };
    });
  }

  /** Propagates completions that were made by hand (idempotent; writes nothing when settled). */
  async propagateCompletion(id: number, options: ActorOptions = {}): Promise<MutationResult> {
    return this.withBoardLock(async () => {
      const current = this.getTask(id);
      if (!isClosed(current.status)) return { task: current, written: [], unblocked: [], events: [] };
      const unblocked: number[] = [];
      const result = await this.transact([id, ...current.blocks], (tx) => {
        unblocked.push(...this.closeInTx(tx, id, tx.read(id).status as 'completed' | 'deleted', options));
      });
      return { task: this.getTask(id), written: result.written, unblocked, events: result.events };
    });
  }

  /** Tombstones a task: its file stays, it never blocks anyone again. */
  async deleteTask(id: number, options: ActorOptions = {}): Promise<MutationResult> {
    return this.withBoardLock(async () => {
      const current = this.getTask(id);
      const unblocked: number[] = [];
      const result = await this.transact([id, ...current.blocks], (tx) => {
        unblocked.push(...this.closeInTx(tx, id, 'deleted', options));
      });
      return { task: this.getTask(id), written: result.written, unblocked, events: result.events };
    });
  }

  /** Removes every task file and resets `.highwatermark`. Only with `confirm: true`. */
  async clearBoard(options: ActorOptions & { confirm: boolean }): Promise<{ removed: number[] }> {
    if (options.confirm !== true)
      throw new TasksError('E_CONFIRM', "clear removes every task file; run 'tasks clear --yes' to confirm");
    return this.withBoardLock(async () => {
      const removed: number[] = [];
      const strays = this.readDirNames().filter((n) => /^task_.*\.json$/i.test(n) && idFromFileName(n) === undefined);
      for (const id of this.listIds()) {
        await withLock(this.taskLockPath(id), this.lockOptions, (lock) => {
          lock.assertHeld();
          unlinkSync(this.taskPath(id));
          removeLease(this.runtimeDir, id);
          removed.push(id);
        });
      }
      for (const name of strays) unlinkSync(join(this.dir, name));
      atomicWriteFile(join(this.dir, HIGHWATERMARK_FILE), '0\n');
      await appendEvents(this.runtimeDir, [{ type: 'cleared', owner: options.actor, removed: removed.length }], this.lockOptions);
      return { removed };
    });
  }

  /**
   * TodoWrite-style batch (seed 000): creates items without an id and
   * replaces the given fields of items with one, all under one board lock.
   */
  async batchWrite(items: BatchItem[], options: ActorOptions = {}): Promise<{ tasks: Task[]; unblocked: number[] }> {
    if (!Array.isArray(items) || items.length === 0) throw new TasksError('E_INVALID', 'a batch needs at least one item');
    const owners = items.filter((i) => i.status === 'in_progress').map((i) => i.owner ?? options.actor ?? '');
    return this.withOwnerLocks(owners, () =>
      this.withBoardLock(async () => {
        const tasks: Task[] = [];
        const unblocked: number[] = [];
        for (const [index, item] of items.entries()) {
          try {
            if (item.id === undefined) {
              const wanted = item.status ?? 'pending';
              const created = await this.createUnderBoardLock(
                {
                  subject: item.subject as string,
                  description: item.description,
                  activeForm: item.activeForm ?? undefined,
                  owner: item.owner,
                  status: wanted === 'completed' ? 'pending' : wanted,
                  blockedBy: item.blockedBy,
                  metadata: item.metadata,
                },
                options,
              );
              let task = created.task;
              if (wanted === 'completed') {
                const done = await this.updateLocked(task.id, { status: 'completed' }, options, 'completed', task.owner, false);
                task = done.task;
              }
              tasks.push(task);
            } else {
              const current = this.getTask(item.id);
              const patch: UpdateTaskInput = {
                subject: item.subject,
                description: item.description,
                activeForm: item.activeForm,
                owner: item.owner,
                status: item.status,
                metadata: item.metadata,
              };
              if (item.blockedBy !== undefined) {
                const want = normalizeIds(item.blockedBy);
                patch.addBlockedBy = want.filter((b) => !current.blockedBy.includes(b));
                patch.removeBlockedBy = current.blockedBy.filter((b) => !want.includes(b));
              }
              const toStatus = item.status === undefined ? undefined : checkStatus(item.status);
              const nextOwner = item.owner ?? (current.owner || (toStatus === 'in_progress' ? options.actor ?? '' : ''));
              const startsWork = (toStatus ?? current.status) === 'in_progress' && (toStatus === 'in_progress' || item.owner !== undefined);
              const updated = await this.updateLocked(item.id, patch, options, toStatus, nextOwner, startsWork);
              unblocked.push(...updated.unblocked);
              tasks.push(updated.task);
            }
          } catch (error) {
            if (error instanceof TasksError)
              throw new TasksError(error.code, `item ${index + 1} of the batch: ${error.message} (items before it were written)`, error.details, {
                cause: error,
              });
            throw error;
          }
        }
        return { tasks, unblocked: normalizeIds(unblocked) };
      }),
    );
  }

  // ---- claims (PROTOCOL §6) ------------------------------------------------

  /**
   * Compare-and-swap claim under the task's lock: succeeds only when the task
   * is ready or already the claimant's. Of concurrent claimants exactly one
   * wins; the others get a ClaimError with the reason.
   */
  async claimTask(id: number, options: ClaimOptions): Promise<ClaimResult> {
    return this.withOwnerLocks([options.owner], () => this.claimUnderOwnerLock(id, options));
  }

  private async claimUnderOwnerLock(id: number, options: ClaimOptions, eventType = 'claimed', noWait = false): Promise<ClaimResult> {
    const owner = options.owner;
    if (owner === '') throw new TasksError('E_INVALID', 'a claim needs an owner (--owner or TASKS_OWNER)');
    if (!existsSync(this.taskPath(id))) throw new ClaimError('not_found', `task #${id} not found (see 'tasks list')`, { task: id });
    this.assertOwnerFree(owner, new Set([id]));
    let alreadyHeld = false;
    let lease!: Lease;
    const result = await this.transact([id], (tx) => {
      const task = tx.tryRead(id);
      if (!task) throw new ClaimError('not_found', `task #${id} not found (see 'tasks list')`, { task: id });
      if (task.status === 'in_progress' && task.owner === owner) {
        alreadyHeld = true;
      } else if (task.status === 'in_progress' || (task.status === 'pending' && task.owner !== '' && task.owner !== owner)) {
        throw new ClaimError('already_claimed', `task #${id} is already claimed by ${task.owner || 'someone'}`, {
          task: id,
          owner: task.owner,
        });
      } else if (task.status !== 'pending') {
        throw new ClaimError('not_pending', `task #${id} is ${task.status}, not pending`, { task: id, status: task.status });
      } else {
        const open = openBlockers(task, (n) => this.peekTask(n));
        if (open.length)
          throw new ClaimError('blocked', `task #${id} is blocked by ${open.map((b) => `#${b}`).join(', ')}`, {
            task: id,
            blockedBy: open,
          });
      }
      const edited = copyTask(task);
      edited.status = 'in_progress';
      edited.owner = owner;
      tx.put(edited);
      const previous = alreadyHeld ? readLease(this.runtimeDir, id) : undefined;
      lease = createLease(id, owner, options.lease === undefined ? {} : options.lease, this.config.leaseSeconds);
      if (previous && options.lease === undefined) lease.claimedAt = previous.claimedAt;
      tx.beforeWrite.push(() => writeLease(this.runtimeDir, lease));
      if (!alreadyHeld) tx.event({ type: eventType, task: id, owner, ...(lease.expiresAt ? { expiresAt: lease.expiresAt } : {}) });
    }, noWait ? { ...this.lockOptions, timeoutMs: 0 } : this.lockOptions);
    const task = result.written[0] ?? this.getTask(id);
    return { task, written: result.written, unblocked: [], events: result.events, alreadyHeld, lease };
  }

  /**
   * Claims the lowest-id ready task; on losing a race, tries the next one.
   * A ready task whose lock is held right now is being claimed (or changed)
   * by someone else: it is passed over at first and tried again, waiting for
   * its lock, only if no later task could be claimed, so that contending
   * claimants spread over the ready tasks instead of queueing on one lock.
   */
  async claimNext(options: ClaimOptions): Promise<ClaimResult> {
    const exclude = new Set(options.exclude ?? []);
    return this.withOwnerLocks([options.owner], async () => {
      this.assertOwnerFree(options.owner, new Set());
      const cache = new Map<number, Task | undefined>();
      const lookup = (n: number) => {
        if (!cache.has(n)) cache.set(n, this.peekForScan(n));
        return cache.get(n);
      };
      const busy: number[] = [];
      const attempt = async (id: number, noWait: boolean): Promise<ClaimResult | undefined> => {
        try {
          return await this.claimUnderOwnerLock(id, options, 'claimed', noWait);
        } catch (error) {
          if (noWait && error instanceof TasksError && error.code === 'E_LOCKED' && error.details.lock === this.taskLockPath(id)) {
            busy.push(id);
            return undefined;
          }
          if (error instanceof ClaimError && error.reason !== 'owner_busy') {
            cache.delete(id);
            return undefined;
          }
          throw error;
        }
      };
      // Files are read lazily in id order and the scan stops at the first win.
      for (const id of this.listIds()) {
        if (exclude.has(id)) continue;
        const task = lookup(id);
        if (!task || !isReady(task, lookup, options.owner)) continue;
        const won = await attempt(id, true);
        if (won) return won;
      }
      for (const id of busy.splice(0)) {
        cache.delete(id);
        const task = lookup(id);
        if (!task || !isReady(task, lookup, options.owner)) continue;
        const won = await attempt(id, false);
        if (won) return won;
      }
      throw new ClaimError('nothing_ready', "nothing is ready to claim (see 'tasks list')");
    });
  }

  /** peekTask for scans: a closed task seen before is trusted for a moment, then only stat'ed, not read again. */
  private peekForScan(id: number): Task | undefined {
    const now = Date.now();
    const seen = this.closedSeen.get(id);
    if (seen && now - seen.checkedAt < CLOSED_RECHECK_MS) return seen.task;
    const stat = statSync(this.taskPath(id), { throwIfNoEntry: false });
    if (!stat) {
      this.closedSeen.delete(id);
      return undefined;
    }
    if (seen && seen.ino === stat.ino && seen.mtimeMs === stat.mtimeMs && seen.size === stat.size) {
      seen.checkedAt = now;
      return seen.task;
    }
    const task = this.peekTask(id);
    if (task && isClosed(task.status)) this.closedSeen.set(id, { ino: stat.ino, mtimeMs: stat.mtimeMs, size: stat.size, checkedAt: now, task });
    else this.closedSeen.delete(id);
    return task;
  }

  /** Starts work on a task as a person: like a claim, without a lease that expires. */
  async startTask(id: number, options: ActorOptions & { owner?: string; activeForm?: string } = {}): Promise<ClaimResult> {
    const owner = options.owner ?? options.actor ?? '';
    return this.withOwnerLocks([owner], async () => {
      const result = await this.claimUnderOwnerLock(id, { owner, lease: null }, 'started');
      if (options.activeForm === undefined) return result;
      const updated = await this.updateTask(id, { activeForm: options.activeForm }, options);
      return { ...result, task: updated.task };
    });
  }

  /** Puts a claimed task back to pending with no owner; someone else's needs `force`. */
  async releaseTask(
    id: number,
    options: ActorOptions & { force?: boolean; reason?: string; metadata?: Record<string, unknown>; heldBy?: string } = {},
  ): Promise<MutationResult> {
    const result = await this.transact([id], (tx) => {
      const task = tx.edit(id);
      if (options.heldBy !== undefined) assertHeldBy(task, options.heldBy);
      if (isClosed(task.status)) checkTransition(task, 'pending');
      if (task.owner !== '' && options.actor !== undefined && task.owner !== options.actor && !options.force)
        throw new TasksError('E_NOT_OWNER', `task #${id} belongs to ${task.owner}; add --force to release it anyway`, {
          id,
          owner: task.owner,
        });
      const previousOwner = task.owner;
      task.status = 'pending';
      task.owner = '';
      if (options.metadata) applyMetadata(task, options.metadata);
      tx.put(task);
      tx.afterCommit.push(() => removeLease(this.runtimeDir, id));
      tx.event({ type: options.reason === 'reaped' ? 'reaped' : 'released', task: id, owner: options.actor, previousOwner, ...(options.reason ? { reason: options.reason } : {}) });
    });
    return { task: result.written[0] ?? this.getTask(id), written: result.written, unblocked: [], events: result.events };
  }

  /**
   * Renews the lease of `id` (or of every task the owner holds). A claim that
   * never expires stays so unless `ttlSeconds` is given; `worktree` records
   * where the work happens.
   */
  async heartbeat(options: { owner: string; id?: number; ttlSeconds?: number; worktree?: string }): Promise<Lease[]> {
    const renewed: Lease[] = [];
    const ids = options.id !== undefined ? [options.id] : listLeases(this.runtimeDir).filter((l) => l.owner === options.owner).map((l) => l.task);
    for (const id of ids) {
      await withLock(this.taskLockPath(id), this.lockOptions, () => {
        const task = this.getTask(id);
        if (task.status !== 'in_progress' || task.owner !== options.owner)
          throw new TasksError(
            'E_NOT_OWNER',
            `task #${id} is not in progress for ${options.owner} (${task.status}${task.owner ? `, owner ${task.owner}` : ''}); nothing to renew`,
            { id, owner: task.owner, status: task.status },
          );
        const old = readLease(this.runtimeDir, id);
        const ttlSeconds = options.ttlSeconds ?? (old && old.expiresAt === null ? null : undefined);
        const lease = createLease(
          id,
          options.owner,
          { ttlSeconds, pid: old?.pid, worktree: options.worktree ?? old?.worktree },
          this.config.leaseSeconds,
        );
        if (old) lease.claimedAt = old.claimedAt;
        writeLease(this.runtimeDir, lease);
        renewed.push(lease);
      });
    }
    return renewed;
  }

  /** Releases every task whose lease expired or whose process is gone (PROTOCOL §6). */
  async reap(options: ActorOptions & { dryRun?: boolean; now?: number } = {}): Promise<ReapedTask[]> {
    const out: ReapedTask[] = [];
    for (const lease of listLeases(this.runtimeDir)) {
      const reason = leaseExpiry(lease, options.now);
      if (!reason) continue;
      const task = this.peekTask(lease.task);
      if (!task || task.status !== 'in_progress' || task.owner !== lease.owner) {
        if (!options.dryRun) removeLease(this.runtimeDir, lease.task);
        continue;
      }
      if (!options.dryRun) {
        try {
          await this.reapOne(lease, reason, options);
        } catch (error) {
          if (error instanceof TasksError && error.code === 'E_NOT_OWNER') continue;
          throw error;
        }
      }
      out.push({ task: lease.task, owner: lease.owner, reason, lease });
    }
    return out;
  }

  private async reapOne(lease: Lease, reason: string, options: ActorOptions): Promise<void> {
    await this.transact([lease.task], (tx) => {
      // Re-check under the lock: a heartbeat may have renewed it meanwhile.
      const fresh = readLease(this.runtimeDir, lease.task);
      const task = tx.edit(lease.task);
      if (!fresh || fresh.claimedAt !== lease.claimedAt || !leaseExpiry(fresh) || task.status !== 'in_progress' || task.owner !== lease.owner)
        throw new TasksError('E_NOT_OWNER', 'lease renewed meanwhile');
      task.status = 'pending';
      task.owner = '';
      tx.put(task);
      tx.afterCommit.push(() => removeLease(this.runtimeDir, lease.task));
      tx.event({ type: 'reaped', task: lease.task, owner: options.actor, previousOwner: lease.owner, reason });
    });
  }

  /**
   * Writes a claim record (without expiry) for every task that is in progress
   * with an owner but has none, e.g. set by hand or pulled through git, so the
   * single-in-progress rule sees it. Takes each task's lock unless the
   * caller holds them (`locked`). Returns the adopted ids.
   */
  async adoptUntrackedClaims(snapshot?: BoardSnapshot, options: { locked?: boolean } = {}): Promise<number[]> {
    const adopted: number[] = [];
    const untracked = (task: Task | undefined): task is Task => {
      if (!task || task.status !== 'in_progress' || task.owner === '') return false;
      const lease = readLease(this.runtimeDir, task.id);
      return !lease || lease.owner !== task.owner;
    };
    for (const seen of (snapshot ?? this.loadBoard()).tasks) {
      if (!untracked(seen)) continue;
      const adopt = () => {
        // Under the task's lock a claim in flight has either written its
        // record already or not yet changed the file: look again.
        const task = options.locked ? seen : this.peekTask(seen.id);
        if (!untracked(task)) return;
        writeLease(this.runtimeDir, createLease(task.id, task.owner, null, this.config.leaseSeconds));
        adopted.push(task.id);
      };
      if (options.locked) adopt();
      else await withLock(this.taskLockPath(seen.id), this.lockOptions, adopt);
    }
    return adopted;
  }

  /** Appends an adapter's own event (`job.started`, `invalid` …) to the log. */
  async recordEvent(event: NewEvent): Promise<TaskEvent> {
    const [written] = await appendEvents(this.runtimeDir, [event], this.lockOptions);
    return written;
  }

  /** Reads the event log (events after `sinceSeq`). */
  readEvents(sinceSeq = 0): TaskEvent[] {
    const text = readFileIfExists(join(this.runtimeDir, EVENTS_FILE));
    return text === undefined ? [] : parseEvents(text, sinceSeq);
  }

  /** True when the id names a task file on disk. */
  hasTask(id: number): boolean {
    return existsSync(this.taskPath(id));
  }

  /** Files in the board folder that are neither tasks nor board files (for doctor/watch to ignore or report). */
  static isIgnoredName(name: string): boolean {
    return isTempFileName(name) || name.endsWith('.lock') || name === RUNTIME_DIR;
  }
}

/** Lists the lease records of a board (for `tasks reap --dry-run`, workers, doctor). */
export function readLeases(store: TaskStore): Lease[] {
  return listLeases(store.runtimeDir);
}

