import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { findBoard, type FindBoardOptions } from './board/board.js';
import { loadBoardSnapshot, openClaimView } from './board/board-index.js';
import { readConfig, type BoardConfig } from './board/config.js';
import { ClaimError, CorruptTaskError, CycleError, TasksError, isErrnoException } from './errors.js';
import { EVENTS_FILE, appendEvents, parseEvents, type NewEvent, type TaskEvent } from './events/events.js';
import { createRecord, idFromFileName, isClosed, normalizeIds, parseTask, taskFileName, type Task, type TaskStatus } from './format/format.js';
import { atomicWriteFile, isTempFileName, readFileIfExists } from './fs/fsio.js';
import { findCycle, isReady, openBlockers, type TaskLookup } from './graph/graph.js';
import { createLease, leaseExpiry, listLeases, readLease, type Lease, type LeaseInput } from './runtime/leases.js';
import { DEFAULT_LOCK_OPTIONS, type LockOptions } from './fs/locks.js';
import { applyMetadata, assertHeldBy, checkStatus, checkSubject, checkTransition, removeId } from './board/rules.js';
import { readTaskFile } from './format/task-file.js';
import { HIGHWATERMARK_FILE, ownerLockName, parseHighWaterMark, runTransaction, type Transaction, type TxHost, type TxOptions, type TxScope } from './board/transaction.js';

export { HIGHWATERMARK_FILE };
export const RUNTIME_DIR = '.runtime';
export const BOARD_LOCK = '.board.lock';

/** The `.gitignore` that `tasks init` writes (docs/protocol.md, "Board files"). */
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

/** Options of a change: who acts, and whether a task somebody else holds may be taken over. */
export interface UpdateOptions extends ActorOptions {
  force?: boolean;
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

/** Options for claims (docs/protocol.md, "Owners, claims and leases"). */
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

/**
 * The board: every read and mutation of `.tasks/`. Adapters (CLI, watcher,
 * agent tool) go through this and never touch the files themselves. Every
 * mutation is one transaction (transaction.ts).
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

  /** Under the owner's lock: refuses a second task in progress for `owner`. */
  private assertOwnerFree(tx: Transaction, owner: string, except: Set<number>): void {
    if (!this.config.singleInProgress || owner === '') return;
    tx.need({ owners: [owner] });
    const busy = this.findOwnerTask(owner, except, (id) => tx.view(id));
    if (busy !== undefined)
      throw new ClaimError(
        'owner_busy',
        `${owner} already has task #${busy} in progress; finish it ('tasks done ${busy}') or release it ('tasks release ${busy}') first`,
        { task: busy, owner },
      );
  }

  // ---- mutations ---------------------------------------------------------

  /** Checks that every id names an existing, non-deleted task other than `self`. */
  private checkEdgeTargets(self: number, ids: number[], lookup: TaskLookup): void {
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

  /** The next id: above `.highwatermark`, every task file and every task this transaction created. */
  private allocateId(tx: Transaction): number {
    // Under the board lock no other command adds a file: the folder is listed once per transaction.
    const present = tx.memo('highestPresent', () => this.listIds().at(-1) ?? 0);
    const highest = Math.max(tx.readHighWaterMark(), present, tx.highestStagedId());
    const id = highest + 1;
    if (!Number.isSafeInteger(id))
      throw new TasksError(
        'E_INVALID',
        `no more ids: the next would be ${id}, above ${Number.MAX_SAFE_INTEGER} (check ${join(this.dir, HIGHWATERMARK_FILE)}; 'tasks doctor --fix' sets it from the board)`,
      );
    return id;
  }

  /** Creates a task; edges are written on both sides. */
  async createTask(input: CreateTaskInput, options: ActorOptions = {}): Promise<MutationResult> {
    const status = input.status === undefined ? 'pending' : checkStatus(input.status);
    checkSubject(input.subject);
    const owners = status === 'in_progress' ? [input.owner || options.actor || ''] : [];
    const result = await this.transact({ owners, board: true, tasks: [...(input.blockedBy ?? []), ...(input.blocks ?? [])] }, (tx) =>
      this.createInTx(tx, input, options),
    );
    return { task: result.value, written: result.written, unblocked: [], events: result.events };
  }

  private async createInTx(tx: Transaction, input: CreateTaskInput, options: ActorOptions): Promise<Task> {
    const subject = checkSubject(input.subject);
    const status = input.status === undefined ? 'pending' : checkStatus(input.status);
    if (status === 'deleted') throw new TasksError('E_INVALID', 'a new task cannot start deleted');
    const blockedBy = normalizeIds(input.blockedBy ?? []);
    const blocks = normalizeIds(input.blocks ?? []);
    tx.need({ board: true, tasks: [...blockedBy, ...blocks] });
    const id = this.allocateId(tx);
    const view = (n: number) => tx.view(n);
    this.checkEdgeTargets(id, [...blockedBy, ...blocks], view);
    // A cycle through the new task needs a path from one of its dependents to one of its blockers.
    for (const b of blockedBy) {
      for (const d of blocks) {
        if (b === d) throw new CycleError([id, d, id]);
        const path = findCycle(b, d, view);
        if (path) throw new CycleError([id, ...path.slice(1, -1), b, id].filter((x, i, a) => i === 0 || x !== a[i - 1]));
      }
    }
    const owner = input.owner ?? (status === 'in_progress' ? options.actor ?? '' : '');
    if (status === 'in_progress') {
      if (owner === '') throw new TasksError('E_INVALID', 'a task created in progress needs an owner (--owner)');
      this.assertOwnerFree(tx, owner, new Set());
      const open = blockedBy.filter((b) => !isClosed(view(b)!.status));
      if (open.length) throw new TasksError('E_BLOCKED', `task cannot start: blocked by ${open.map((b) => `#${b}`).join(', ')}`);
    }
    await tx.lockNewTask(id);
    if (tx.tryRead(id)) throw new TasksError('E_EXISTS', `task_${id}.json appeared meanwhile; run the command again`);
    const task: Task = {
      id,
      subject,
      description: input.description ?? '',
      status,
      owner,
      blockedBy: blockedBy.filter((b) => !isClosed(view(b)!.status)),
      blocks,
      extra: createRecord(),
    };
    if (input.activeForm !== undefined) task.activeForm = input.activeForm;
    if (input.metadata !== undefined) applyMetadata(task, input.metadata);
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
    if (status === 'in_progress') tx.putLease(createLease(id, owner, null, this.config.leaseSeconds));
    tx.setHighWaterMark(id);
    return task;
  }

  /**
   * Changes any fields of a task, its edges and its status, in one locked
   * step. Every decision about status and owner is made from what is read
   * under the task's lock (compare-and-swap): taking over a task somebody
   * else holds needs `force`, and a change that keeps a task in progress for
   * the same owner keeps its claim record (lease) as it is.
   */
  async updateTask(id: number, patch: UpdateTaskInput, options: UpdateOptions = {}): Promise<MutationResult> {
    if (patch.subject !== undefined) checkSubject(patch.subject);
    const toStatus = patch.status === undefined ? undefined : checkStatus(patch.status);
    // A first guess at the locks; the transaction asks for more when what it reads needs them.
    const guess = this.peekTask(id);
    const edges = [...(patch.addBlockedBy ?? []), ...(patch.removeBlockedBy ?? []), ...(patch.addBlocks ?? []), ...(patch.removeBlocks ?? [])];
    const closing = toStatus === 'completed' || toStatus === 'deleted';
    const tasks = [id, ...edges, ...(closing && guess ? guess.blocks : [])];
    const owners = toStatus === 'in_progress' || patch.owner !== undefined ? [patch.owner ?? (guess?.owner || options.actor || '')] : [];
    const unblocked: number[] = [];
    const result = await this.transact({ owners, board: edges.length > 0 || closing, tasks }, (tx) => {
      unblocked.push(...this.updateInTx(tx, id, patch, options));
    });
    const task = result.written.find((t) => t.id === id) ?? this.getTask(id);
    return { task, written: result.written, unblocked, events: result.events };
  }

  /** The body of updateTask inside a transaction; returns the tasks it unblocked. */
  private updateInTx(tx: Transaction, id: number, patch: UpdateTaskInput, options: UpdateOptions): number[] {
    const before = tx.read(id);
    const toStatus = patch.status === undefined ? undefined : checkStatus(patch.status);
    const addBlockedBy = normalizeIds(patch.addBlockedBy ?? []);
    const removeBlockedBy = normalizeIds(patch.removeBlockedBy ?? []);
    const addBlocks = normalizeIds(patch.addBlocks ?? []);
    const removeBlocks = normalizeIds(patch.removeBlocks ?? []);
    const closing = toStatus === 'completed' || toStatus === 'deleted';
    if (addBlockedBy.length || removeBlockedBy.length || addBlocks.length || removeBlocks.length || closing) tx.need({ board: true });
    tx.need({ tasks: [...addBlockedBy, ...removeBlockedBy, ...addBlocks, ...removeBlocks, ...(closing ? [...before.blocks, ...addBlocks] : [])] });
    const view = (n: number) => tx.view(n);
    this.checkEdgeTargets(id, [...addBlockedBy, ...addBlocks], view);

    const finalStatus = toStatus ?? before.status;
    // Compare-and-swap on what was read under the lock: another owner's task
    // is not taken over, released or finished by accident.
    const holder = before.status === 'in_progress' ? before.owner : '';
    const actorIsOther = holder !== '' && options.actor !== undefined && options.actor !== holder;
    let nextOwner: string;
    if (patch.owner !== undefined) nextOwner = patch.owner;
    else if (toStatus === 'in_progress' && actorIsOther) nextOwner = options.actor!;
    else nextOwner = before.owner || (toStatus === 'in_progress' ? options.actor ?? '' : '');
    if (actorIsOther && !options.force) {
      if (finalStatus === 'in_progress' && nextOwner !== holder)
        throw new ClaimError('already_claimed', `task #${id} is already claimed by ${holder}; add --force to take it over`, { task: id, owner: holder });
      if (toStatus === 'pending' || toStatus === 'completed')
        throw new TasksError('E_NOT_OWNER', `task #${id} belongs to ${holder}; add --force to change its status anyway`, { id, owner: holder });
    }
    const keepsClaim = holder !== '' && finalStatus === 'in_progress' && nextOwner === holder;
    const startsWork = finalStatus === 'in_progress' && !keepsClaim;
    if (startsWork) this.assertOwnerFree(tx, nextOwner, new Set([id]));

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
    for (const b of addBlockedBy) this.linkInTx(tx, b, id);
    for (const d of addBlocks) this.linkInTx(tx, id, d);
    for (const b of removeBlockedBy) this.unlinkInTx(tx, b, id);
    for (const d of removeBlocks) this.unlinkInTx(tx, id, d);

    const unblocked: number[] = [];
    if (toStatus !== undefined && toStatus !== before.status) {
      const edited = tx.edit(id);
      checkTransition(edited, toStatus);
      if (toStatus === 'in_progress') {
        const open = openBlockers(edited, view);
        if (open.length)
          throw new TasksError('E_BLOCKED', `task #${id} is blocked by ${open.map((b) => `#${b}`).join(', ')}; finish those first`, {
            id,
            blockedBy: open,
          });
        edited.status = 'in_progress';
        edited.owner = nextOwner;
        tx.put(edited);
        tx.putLease(createLease(id, nextOwner, null, this.config.leaseSeconds));
        tx.event({ type: 'started', task: id, owner: nextOwner });
      } else if (toStatus === 'pending') {
        tx.put(Object.assign(edited, { status: 'pending' as const }));
        tx.dropLease(id);
        tx.event({ type: 'released', task: id, owner: options.actor, previousOwner: before.owner });
      } else {
        unblocked.push(...this.closeInTx(tx, id, toStatus, options));
      }
    } else if (startsWork) {
      // In progress already, for a new owner (handed over, or taken over with force): the claim is theirs now.
      const edited = tx.edit(id);
      edited.owner = nextOwner;
      tx.put(edited);
      tx.putLease(createLease(id, nextOwner, null, this.config.leaseSeconds));
      tx.event({ type: 'started', task: id, owner: nextOwner, previousOwner: before.owner });
    } else if (keepsClaim && !tx.readLease(id)) {
      // Kept in progress but without a record (set by hand): record it, so single-in-progress sees it.
      tx.putLease(createLease(id, nextOwner, null, this.config.leaseSeconds));
    }
    const changed = Object.keys(patch).filter((k) => k !== 'status' && (patch as Record<string, unknown>)[k] !== undefined);
    if (changed.length) tx.event({ type: 'updated', task: id, owner: options.actor, fields: changed });
    return unblocked;
  }

  /** Adds "blocker blocks waiter" on both sides inside a transaction, refusing cycles. */
  private linkInTx(tx: Transaction, blocker: number, waiter: number): void {
    const cycle = findCycle(blocker, waiter, (n) => tx.view(n));
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
    if (w && removeId(w.blockedBy, blocker)) {
      changed = true;
      tx.put(w);
    }
    if (b && removeId(b.blocks, waiter)) {
      changed = true;
      tx.put(b);
    }
    if (changed) tx.event({ type: 'edge.removed', task: waiter, blockedBy: blocker });
  }

  /**
   * Marks a task completed or deleted and propagates: its id leaves every
   * dependent's blockedBy; returns the dependents that became unblocked.
   * Idempotent.
   */
  private closeInTx(tx: Transaction, id: number, status: 'completed' | 'deleted', options: ActorOptions): number[] {
    const task = tx.edit(id);
    // Propagation writes the dependents: the board lock; a task nobody waits for is a change of one file.
    if (task.blocks.length) tx.need({ board: true, tasks: task.blocks });
    const wasOpen = task.status !== status;
    task.status = status;
    tx.put(task);
    if (tx.readLease(id)) tx.dropLease(id);
    if (wasOpen) tx.event({ type: status, task: id, owner: options.actor });
    const unblocked: number[] = [];
    for (const d of task.blocks) {
      const dependent = tx.tryRead(d);
      if (!dependent) continue;
      if (!dependent.blockedBy.includes(id)) continue;
      const edited = tx.edit(d);
      removeId(edited.blockedBy, id);
      tx.put(edited);
      if (edited.blockedBy.length === 0 && !isClosed(edited.status)) {
        unblocked.push(d);
        tx.event({ type: 'unblocked', task: d, by: id });
      }
    }
    return unblocked;
  }

  /** The locks a completion or deletion of `id` will want: its own, and its dependents' under the board lock. */
  private closingScope(id: number): Partial<TxScope> {
    const blocks = this.peekTask(id)?.blocks ?? [];
    return { board: blocks.length > 0, tasks: [id, ...blocks] };
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
    const unblocked: number[] = [];
    const result = await this.transact(this.closingScope(id), (tx) => {
      unblocked.length = 0;
      const task = tx.read(id);
      if (options.heldBy !== undefined) assertHeldBy(task, options.heldBy);
      if (task.status === 'deleted') checkTransition(task, 'completed');
      if (task.status !== 'completed' && !options.force) {
        if (task.owner !== '' && options.actor !== undefined && task.owner !== options.actor)
          throw new TasksError('E_NOT_OWNER', `task #${id} belongs to ${task.owner}; only they complete it, or add --force`, {
            id,
            owner: task.owner,
          });
        const open = openBlockers(task, (n) => tx.view(n));
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
  }

  /** Propagates completions that were made by hand (idempotent; writes nothing when settled). */
  async propagateCompletion(id: number, options: ActorOptions = {}): Promise<MutationResult> {
    const unblocked: number[] = [];
    const result = await this.transact(this.closingScope(id), (tx) => {
      unblocked.length = 0;
      const task = tx.read(id);
      if (!isClosed(task.status)) return;
      unblocked.push(...this.closeInTx(tx, id, task.status as 'completed' | 'deleted', options));
    });
    return { task: this.getTask(id), written: result.written, unblocked, events: result.events };
  }

  /** Tombstones a task: its file stays, it never blocks anyone again. */
  async deleteTask(id: number, options: ActorOptions = {}): Promise<MutationResult> {
    const unblocked: number[] = [];
    const result = await this.transact(this.closingScope(id), (tx) => {
      unblocked.length = 0;
      tx.read(id);
      unblocked.push(...this.closeInTx(tx, id, 'deleted', options));
    });
    return { task: this.getTask(id), written: result.written, unblocked, events: result.events };
  }

  /**
   * Removes every task file and its claim record, in one transaction. Ids are
   * never handed out again: `.highwatermark` keeps the highest. Only with
   * `confirm: true`. Entries that are not task files are left in place.
   */
  async clearBoard(options: ActorOptions & { confirm: boolean }): Promise<{ removed: number[] }> {
    if (options.confirm !== true)
      throw new TasksError('E_CONFIRM', "clear removes every task file; run 'tasks clear --yes' to confirm");
    const result = await this.transact({ board: true, tasks: this.listIds() }, (tx) => {
      const removed: number[] = [];
      const ids = this.listIds();
      tx.need({ tasks: ids });
      const highest = Math.max(tx.readHighWaterMark(), ids.at(-1) ?? 0);
      for (const id of ids) {
        let present: boolean;
        try {
          present = tx.readText(id) !== undefined;
        } catch (error) {
          // A folder (or anything but a file) called task_N.json is not ours to remove.
          if (error instanceof CorruptTaskError && /not a regular file/.test(String(error.details.problem))) continue;
          throw error;
        }
        if (!present) continue;
        tx.removeTask(id);
        if (tx.readLease(id)) tx.dropLease(id);
        removed.push(id);
      }
      if (highest > 0) tx.setHighWaterMark(highest);
      tx.event({ type: 'cleared', owner: options.actor, removed: removed.length });
      return removed;
    });
    return { removed: result.value };
  }

  /**
   * TodoWrite-style batch: creates items without an id and replaces the
   * given fields of items with one, in one transaction: every item is
   * applied, or (on the first refusal) none.
   */
  async batchWrite(items: BatchItem[], options: ActorOptions = {}): Promise<{ tasks: Task[]; unblocked: number[] }> {
    if (!Array.isArray(items) || items.length === 0) throw new TasksError('E_INVALID', 'a batch needs at least one item');
    const owners = items.filter((i) => i.status === 'in_progress').map((i) => i.owner ?? options.actor ?? '');
    const ids = items.flatMap((i) => [...(i.id !== undefined ? [i.id] : []), ...(i.blockedBy ?? [])]);
    const result = await this.transact({ owners, board: true, tasks: ids }, async (tx) => {
      const tasks: Task[] = [];
      const unblocked: number[] = [];
      for (const [index, item] of items.entries()) {
        try {
          if (item.id === undefined) {
            const wanted = item.status ?? 'pending';
            let task = await this.createInTx(
              tx,
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
            if (wanted === 'completed') {
              this.updateInTx(tx, task.id, { status: 'completed' }, options);
              task = tx.read(task.id);
            }
            tasks.push(task);
          } else {
            const current = tx.read(item.id);
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
            unblocked.push(...this.updateInTx(tx, item.id, patch, options));
            tasks.push(tx.read(item.id));
          }
        } catch (error) {
          if (error instanceof TasksError)
            throw new TasksError(error.code, `item ${index + 1} of the batch: ${error.message} (nothing was written)`, error.details, {
              cause: error,
            });
          throw error;
        }
      }
      return { tasks, unblocked: normalizeIds(unblocked) };
    });
    return result.value;
  }

  // ---- claims ----------------------------------------------------------------

  /**
   * Compare-and-swap claim under the task's lock: succeeds only when the task
   * is ready or already the claimant's. Of concurrent claimants exactly one
   * wins; the others get a ClaimError with the reason.
   */
  async claimTask(id: number, options: ClaimOptions): Promise<ClaimResult> {
    return this.claimOne(id, options, 'claimed');
  }

  private async claimOne(id: number, options: ClaimOptions & { activeForm?: string }, eventType: string, txOptions: TxOptions = {}): Promise<ClaimResult> {
    const owner = options.owner;
    if (owner === '') throw new TasksError('E_INVALID', 'a claim needs an owner (--owner or TASKS_OWNER)');
    if (!existsSync(this.taskPath(id))) throw new ClaimError('not_found', `task #${id} not found (see 'tasks list')`, { task: id });
    let alreadyHeld = false;
    let lease!: Lease;
    const result = await this.transact(
      { owners: [owner], tasks: [id] },
      (tx) => {
        alreadyHeld = false;
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
          const open = openBlockers(task, (n) => tx.view(n));
          if (open.length)
            throw new ClaimError('blocked', `task #${id} is blocked by ${open.map((b) => `#${b}`).join(', ')}`, {
              task: id,
              blockedBy: open,
            });
        }
        if (!alreadyHeld) this.assertOwnerFree(tx, owner, new Set([id]));
        const edited = tx.edit(id);
        edited.status = 'in_progress';
        edited.owner = owner;
        if (options.activeForm !== undefined) edited.activeForm = options.activeForm;
        tx.put(edited);
        const previous = alreadyHeld ? tx.readLease(id) : undefined;
        lease = createLease(id, owner, options.lease === undefined ? {} : options.lease, this.config.leaseSeconds);
        if (previous && options.lease === undefined) lease.claimedAt = previous.claimedAt;
        tx.putLease(lease);
        if (!alreadyHeld) tx.event({ type: eventType, task: id, owner, ...(lease.expiresAt ? { expiresAt: lease.expiresAt } : {}) });
        else if (options.activeForm !== undefined) tx.event({ type: 'updated', task: id, owner, fields: ['activeForm'] });
      },
      txOptions,
    );
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
    // Candidates come from the board index; the claim itself re-checks under the lock (board-index.ts).
    let view = openClaimView(this.dir);
    const lookup = (n: number) => view.lookup(n);
    const busy: number[] = [];
    const attempt = async (id: number, noWait: boolean): Promise<ClaimResult | undefined> => {
      try {
        return await this.claimOne(id, options, 'claimed', { noWaitTasks: noWait });
      } catch (error) {
        if (noWait && error instanceof TasksError && error.code === 'E_LOCKED' && error.details.lock === this.taskLockPath(id)) {
          busy.push(id);
          return undefined;
        }
        if (error instanceof ClaimError && error.reason !== 'owner_busy') {
          view.forget(id);
          return undefined;
        }
        throw error;
      }
    };
    for (;;) {
      // Files are read lazily in id order and the scan stops at the first win.
      for (const id of view.candidates) {
        if (exclude.has(id)) continue;
        const task = lookup(id);
        if (!task || !isReady(task, lookup, options.owner)) continue;
        const won = await attempt(id, true);
        if (won) return won;
      }
      for (const id of busy.splice(0)) {
        view.forget(id);
        const task = lookup(id);
        if (!task || !isReady(task, lookup, options.owner)) continue;
        const won = await attempt(id, false);
        if (won) return won;
      }
      if (view.exact) break;
      // Nothing from the index: look at every file before saying so.
      view = openClaimView(this.dir, { exact: true });
    }
    throw new ClaimError('nothing_ready', "nothing is ready to claim (see 'tasks list')");
  }

  /** Starts work on a task as a person: like a claim, without a lease that expires. */
  async startTask(id: number, options: ActorOptions & { owner?: string; activeForm?: string } = {}): Promise<ClaimResult> {
    const owner = options.owner ?? options.actor ?? '';
    return this.claimOne(id, { owner, lease: null, activeForm: options.activeForm }, 'started');
  }

  /** Puts a claimed task back to pending with no owner; someone else's needs `force`. */
  async releaseTask(
    id: number,
    options: ActorOptions & { force?: boolean; reason?: string; metadata?: Record<string, unknown>; heldBy?: string } = {},
  ): Promise<MutationResult> {
    const result = await this.transact({ tasks: [id] }, (tx) => {
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
      if (tx.readLease(id)) tx.dropLease(id);
      tx.event({
        type: options.reason === 'reaped' ? 'reaped' : 'released',
        task: id,
        owner: options.actor,
        previousOwner,
        ...(options.reason ? { reason: options.reason } : {}),
      });
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
      const result = await this.transact({ tasks: [id] }, (tx) => {
        const task = tx.read(id);
        if (task.status !== 'in_progress' || task.owner !== options.owner)
          throw new TasksError(
            'E_NOT_OWNER',
            `task #${id} is not in progress for ${options.owner} (${task.status}${task.owner ? `, owner ${task.owner}` : ''}); nothing to renew`,
            { id, owner: task.owner, status: task.status },
          );
        const old = tx.readLease(id);
        const ttlSeconds = options.ttlSeconds ?? (old && old.expiresAt === null ? null : undefined);
        const lease = createLease(id, options.owner, { ttlSeconds, pid: old?.pid, worktree: options.worktree ?? old?.worktree }, this.config.leaseSeconds);
        if (old) lease.claimedAt = old.claimedAt;
        tx.putLease(lease);
        return lease;
      });
      renewed.push(result.value);
    }
    return renewed;
  }

  /** Releases every task whose lease expired or whose process is gone. */
  async reap(options: ActorOptions & { dryRun?: boolean; now?: number } = {}): Promise<ReapedTask[]> {
    const out: ReapedTask[] = [];
    for (const lease of listLeases(this.runtimeDir)) {
      const reason = leaseExpiry(lease, options.now);
      if (!reason) continue;
      const task = this.peekTask(lease.task);
      if (!task || task.status !== 'in_progress' || task.owner !== lease.owner) {
        // A record left behind by a claim that ended: remove it under the task's lock.
        if (!options.dryRun) await this.dropStaleLease(lease);
        continue;
      }
      if (!options.dryRun) {
        const reaped = await this.reapOne(lease, reason, options, options.now);
        if (!reaped) continue;
      }
      out.push({ task: lease.task, owner: lease.owner, reason, lease });
    }
    return out;
  }

  private async reapOne(lease: Lease, reason: string, options: ActorOptions, now?: number): Promise<boolean> {
    const result = await this.transact({ tasks: [lease.task] }, (tx) => {
      // Re-check under the lock: a heartbeat may have renewed it meanwhile.
      const fresh = tx.readLease(lease.task);
      const task = tx.edit(lease.task);
      if (!fresh || fresh.claimedAt !== lease.claimedAt || !leaseExpiry(fresh, now) || task.status !== 'in_progress' || task.owner !== lease.owner)
        return false;
      task.status = 'pending';
      task.owner = '';
      tx.put(task);
      tx.dropLease(lease.task);
      tx.event({ type: 'reaped', task: lease.task, owner: options.actor, previousOwner: lease.owner, reason });
      return true;
    });
    return result.value;
  }

  /** Removes a claim record whose task is no longer held by its owner (checked under the task's lock). */
  async dropStaleLease(lease: Lease): Promise<boolean> {
    const result = await this.transact({ tasks: [lease.task] }, (tx) => {
      const fresh = tx.readLease(lease.task);
      if (!fresh || fresh.claimedAt !== lease.claimedAt || fresh.owner !== lease.owner) return false;
      const task = tx.tryRead(lease.task);
      if (task && task.status === 'in_progress' && task.owner === fresh.owner) return false;
      tx.dropLease(lease.task);
      return true;
    });
    return result.value;
  }

  /**
   * Writes a claim record (without expiry) for every task that is in progress
   * with an owner but has none, e.g. set by hand or pulled through git, so the
   * single-in-progress rule sees it. Each under its task's lock. Returns the
   * adopted ids.
   */
  async adoptUntrackedClaims(snapshot?: BoardSnapshot): Promise<number[]> {
    const adopted: number[] = [];
    const untracked = (task: Task | undefined, lease: Lease | undefined): task is Task =>
      !!task && task.status === 'in_progress' && task.owner !== '' && (!lease || lease.owner !== task.owner);
    for (const seen of (snapshot ?? this.loadBoard()).tasks) {
      if (!untracked(seen, readLease(this.runtimeDir, seen.id))) continue;
      // Under the task's lock a claim in flight has either written its record already or not yet changed the file: look again.
      const result = await this.transact({ tasks: [seen.id] }, (tx) => {
        let task: Task | undefined;
        try {
          task = tx.tryRead(seen.id);
        } catch (error) {
          if (error instanceof CorruptTaskError) return false;
          throw error;
        }
        if (!untracked(task, tx.readLease(seen.id))) return false;
        tx.putLease(createLease(task.id, task.owner, null, this.config.leaseSeconds));
        return true;
      });
      if (result.value) adopted.push(seen.id);
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
