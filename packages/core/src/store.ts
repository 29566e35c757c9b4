import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { findBoard, type FindBoardOptions } from './find-board.js';
import { loadBoardSnapshot } from './engine/board-index.js';
import * as claims from './engine/claims.js';
import { readConfig, type BoardConfig } from './board-config.js';
import * as mutations from './engine/mutations.js';
import {
  BOARD_GITIGNORE,
  BOARD_LOCK,
  RUNTIME_DIR,
  type ActorOptions,
  type BatchItem,
  type BoardSnapshot,
  type ClaimOptions,
  type ClaimResult,
  type MutationResult,
  type ReapedTask,
  type CreateTaskInput,
  type UpdateOptions,
  type UpdateTaskInput,
} from './engine/store-types.js';
import {
  HIGHWATERMARK_FILE,
  ownerLockName,
  parseHighWaterMark,
  runTransaction,
  type Transaction,
  type TxHost,
  type TxOptions,
  type TxScope,
} from './engine/transaction.js';
import { CorruptTaskError, TasksError, isErrnoException } from './errors.js';
import { EVENTS_FILE, appendEvents, parseEvents, type NewEvent, type TaskEvent } from './events/events.js';
import { idFromFileName, parseTask, taskFileName, type Task } from './format/format.js';
import { readTaskFile } from './format/task-file.js';
import { atomicWriteFile, isTempFileName, readFileIfExists } from './fs/fsio.js';
import { DEFAULT_LOCK_OPTIONS, type LockOptions } from './fs/locks.js';
import type { TaskLookup } from './graph/graph.js';
import { listLeases, type Lease } from './runtime/leases.js';
import { assertNotMovedAway } from './runtime/moved-tasks.js';

export { HIGHWATERMARK_FILE };
export {
  BOARD_GITIGNORE,
  BOARD_LOCK,
  RUNTIME_DIR,
  type ActorOptions,
  type BatchItem,
  type BoardSnapshot,
  type ClaimOptions,
  type ClaimResult,
  type CreateTaskInput,
  type MutationResult,
  type ReapedTask,
  type ScopeOverlap,
  type TaskProblem,
  type UpdateOptions,
  type UpdateTaskInput,
} from './engine/store-types.js';
/**
 * The board: every read and mutation of `.tasks/`. Adapters (CLI, watcher,
 * agent tool) go through this and never touch the files themselves. Every
 * mutation is one transaction (engine/transaction.ts). A façade: reads and
 * paths are here, changes in engine/mutations.ts, claims in engine/claims.ts.
 */
export class TaskStore implements TxHost {
  readonly dir: string;
  readonly runtimeDir: string;
  readonly lockOptions: LockOptions;
  private configCache?: BoardConfig;

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

  /** Opens the board found from `options` (docs/protocol.md, "Where the board is"). */
  static open(options: FindBoardOptions = {}): TaskStore {
    return new TaskStore(findBoard(options), { env: options.env });
  }

  /** Creates a new board at `dir`; refuses to clobber an existing one. */
  static init(dir: string): TaskStore {
    let names: string[] = [];
    try {
      const stat = statSync(dir);
      if (!stat.isDirectory()) throw new TasksError('E_EXISTS', `${dir} exists and is not a folder; choose another --dir`, { dir });
      names = readdirSync(dir);
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT')) throw error;
    }
    if (names.some((n) => n.startsWith('task_') || n === HIGHWATERMARK_FILE || n === '.gitignore'))
      throw new TasksError('E_EXISTS', `a board already exists at ${dir}; nothing was changed`, { dir });
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

  /** The lock folder of task `id`. */
  taskLockPath(id: number): string {
    return join(this.dir, `${taskFileName(id)}.lock`);
  }

  /** The lock folder of the board (ids, edges, changes to several tasks). */
  boardLockPath(): string {
    return join(this.dir, BOARD_LOCK);
  }

  /** The lock folder that makes single-in-progress safe for `owner` across processes. */
  ownerLockPath(owner: string): string {
    return join(this.runtimeDir, ownerLockName(owner));
  }

  notFound(id: number): TasksError {
    const ids = this.listIds();
    const near = ids.length
      ? ` (the board has ${ids.length === 1 ? `#${ids[0]}` : `#${ids[0]}…#${ids[ids.length - 1]}`}; see 'tasks list')`
      : " (the board is empty; create one with 'tasks create')";
    return new TasksError('E_NOT_FOUND', `task #${id} not found${near}`, { id });
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

  /**
   * Raw text of a task file, or undefined when it does not exist. Refuses
   * what cannot be a task without reading it: a folder or other non-regular
   * file of that name, a file over the size limit.
   */
  readTaskText(id: number): string | undefined {
    return readTaskFile(this.taskPath(id))?.text;
  }

  /** Parses text read from task_N.json (messages name the full path). */
  parseTaskText(id: number, text: string): Task {
    return parseTask(text, this.taskPath(id));
  }

  /** One task; throws E_NOT_FOUND or E_CORRUPT (with file, line, column). */
  getTask(id: number): Task {
    const text = this.readTaskText(id);
    if (text === undefined) throw this.notFound(id);
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

  /**
   * Reads every task file; bad files are reported in `problems`, never skipped
   * silently. Files unchanged since the board index saw them are not read
   * again (board-index.ts).
   */
  loadBoard(): BoardSnapshot {
    return loadBoardSnapshot(this.dir);
  }

  /**
   * The highest id ever handed out, from `.highwatermark` (0 when absent).
   * Throws E_CORRUPT when it holds anything but one plain integer.
   */
  readHighWaterMark(): number {
    const file = join(this.dir, HIGHWATERMARK_FILE);
    return parseHighWaterMark(readFileIfExists(file), file);
  }

  // ---- the transaction -----------------------------------------------------

  /**
   * Runs `fn` as one transaction holding `scope`'s locks (more are taken when
   * it asks, by starting over); see transaction.ts. For core modules that
   * write the board (doctor, reconcile, import): nothing writes around it.
   */
  async transact<T>(
    scope: Partial<TxScope>,
    fn: (tx: Transaction) => T | Promise<T>,
    options: TxOptions = {},
  ): Promise<{ value: T; written: Task[]; events: TaskEvent[] }> {
    const owners = this.config.singleInProgress ? scope.owners : [];
    return runTransaction(this, { ...scope, owners }, fn, options);
  }

  // ---- single-in-progress -------------------------------------------------

  /** The id of a task other than `except` that `owner` holds in progress, if any (from claim records). */
  findOwnerTask(owner: string, except: Set<number> = new Set(), view: TaskLookup = (id) => this.peekTask(id)): number | undefined {
    for (const lease of listLeases(this.runtimeDir)) {
      if (lease.owner !== owner || except.has(lease.task)) continue;
      const task = view(lease.task);
      if (task && task.status === 'in_progress' && task.owner === owner) return task.id;
    }
    return undefined;
  }

  // ---- changes (engine/mutations.ts) --------------------------------------

  /** Creates a task; edges are written on both sides. */
  createTask(input: CreateTaskInput, options: ActorOptions = {}): Promise<MutationResult> {
    return mutations.createTask(this, input, options);
  }

  /**
   * Changes any fields of a task, its edges and its status, in one locked
   * step, deciding status and owner from what is read under the task's lock.
   */
  async updateTask(id: number, patch: UpdateTaskInput, options: UpdateOptions = {}): Promise<MutationResult> {
    this.assertSameTask(id, options.actor);
    const result = await mutations.updateTask(this, id, patch, options);
    // A new priority, a removed edge or a task back to pending changes what claim --next takes next.
    if (patch.priority !== undefined || patch.status !== undefined || patch.removeBlockedBy?.length || patch.removeBlocks?.length) this.refreshIndex();
    return result;
  }

  /** Adds the edge "`blocker` blocks `task`" on both sides, refusing cycles. */
  addDependency(task: number, blocker: number, options: ActorOptions = {}): Promise<MutationResult> {
    return mutations.addDependency(this, task, blocker, options);
  }

  /** Removes the edge "`blocker` blocks `task`" from both sides. */
  async removeDependency(task: number, blocker: number, options: ActorOptions = {}): Promise<MutationResult> {
    const result = await mutations.removeDependency(this, task, blocker, options);
    this.refreshIndex();
    return result;
  }

  /** Completes a task and propagates; someone else's, or one still blocked, needs `force`. */
  async completeTask(
    id: number,
    options: ActorOptions & { force?: boolean; heldBy?: string; metadata?: Record<string, unknown> } = {},
  ): Promise<MutationResult> {
    this.assertSameTask(id, options.heldBy ?? options.actor);
    return mutations.completeTask(this, id, options);
  }

  /** Propagates completions that were made by hand (idempotent; writes nothing when settled). */
  propagateCompletion(id: number, options: ActorOptions = {}): Promise<MutationResult> {
    return mutations.propagateCompletion(this, id, options);
  }

  /** Appends a note `{at, owner: actor, text}` to a task (any status), through one transaction. */
  async addNote(id: number, text: string, options: ActorOptions & { at?: Date } = {}): Promise<MutationResult> {
    this.assertSameTask(id, options.actor);
    return mutations.addNote(this, id, text, options);
  }

  /** Tombstones a task: its file stays, it never blocks anyone again. */
  async deleteTask(id: number, options: ActorOptions = {}): Promise<MutationResult> {
    this.assertSameTask(id, options.actor);
    return mutations.deleteTask(this, id, options);
  }

  /** Removes every task file and its claim record, in one transaction; only with `confirm: true`. */
  clearBoard(options: ActorOptions & { confirm: boolean }): Promise<{ removed: number[] }> {
    return mutations.clearBoard(this, options);
  }

  /** TodoWrite-style batch in one transaction: every item is applied, or none. */
  batchWrite(items: BatchItem[], options: ActorOptions = {}): Promise<{ tasks: Task[]; unblocked: number[] }> {
    return mutations.batchWrite(this, items, options);
  }

  // ---- claims (engine/claims.ts) -----------------------------------------------

  /** Compare-and-swap claim under the task's lock: of concurrent claimants exactly one wins. */
  async claimTask(id: number, options: ClaimOptions): Promise<ClaimResult> {
    this.assertSameTask(id, options.owner);
    return claims.claimTask(this, id, options);
  }

  /** Claims the first ready task by priority, then the work it unblocks, then id; on losing a race, tries the next one. */
  claimNext(options: ClaimOptions): Promise<ClaimResult> {
    return claims.claimNext(this, options);
  }

  /** Starts work on a task as a person: like a claim, without a lease that expires. */
  async startTask(id: number, options: ActorOptions & { owner?: string; activeForm?: string } = {}): Promise<ClaimResult> {
    this.assertSameTask(id, options.owner ?? options.actor);
    return claims.startTask(this, id, options);
  }

  /** Puts a claimed task back to pending with no owner; someone else's needs `force`; `note` is appended to its notes in the same step. */
  async releaseTask(
    id: number,
    options: ActorOptions & { force?: boolean; reason?: string; metadata?: Record<string, unknown>; heldBy?: string; note?: string } = {},
  ): Promise<MutationResult> {
    this.assertSameTask(id, options.heldBy ?? options.actor);
    const result = await claims.releaseTask(this, id, options);
    this.refreshIndex();
    return result;
  }

  /** Renews the lease of `id` (or of every task the owner holds). */
  async heartbeat(options: { owner: string; id?: number; ttlSeconds?: number; worktree?: string }): Promise<Lease[]> {
    if (options.id !== undefined) this.assertSameTask(options.id, options.owner);
    return claims.heartbeat(this, options);
  }

  /** Releases every task whose lease expired or whose process is gone. */
  async reap(options: ActorOptions & { dryRun?: boolean; now?: number } = {}): Promise<ReapedTask[]> {
    const reaped = await claims.reap(this, options);
    if (reaped.length && !options.dryRun) this.refreshIndex();
    return reaped;
  }

  /**
   * An exact pass over the board, which rewrites its index: claimNext ranks
   * candidates on what the index says (board-index.ts, `peek`), so a change
   * that makes a task more claimable (released, reaped, a higher priority, an
   * edge removed) reaches the order at once instead of at the next exact pass.
   * Only a cache is at stake: a failure is ignored.
   */
  private refreshIndex(): void {
    try {
      loadBoardSnapshot(this.dir);
    } catch {
      // the next reader rebuilds it
    }
  }

  /**
   * Refuses to act for `actor` on `id` when a sync moved the task `actor`
   * holds from that id to another (runtime/moved-tasks.ts): the id names
   * another machine's task now. One failed open when nothing was moved.
   */
  private assertSameTask(id: number, actor: string | undefined): void {
    assertNotMovedAway(this.runtimeDir, id, actor, (other) => this.peekTask(other));
  }

  /** Removes a claim record whose task is no longer held by its owner (checked under the task's lock). */
  dropStaleLease(lease: Lease): Promise<boolean> {
    return claims.dropStaleLease(this, lease);
  }

  /** Writes a claim record for every task in progress with an owner but none; returns the adopted ids. */
  adoptUntrackedClaims(snapshot?: BoardSnapshot): Promise<number[]> {
    return claims.adoptUntrackedClaims(this, snapshot);
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
