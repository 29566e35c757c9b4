import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BoardFiles } from './engine/board-files.js';
import { loadBoardSnapshot } from './engine/board-index.js';
import type { OpenSnapshot } from './engine/folded-view.js';
import { loadOpenSnapshot } from './engine/open-view.js';
import * as claims from './engine/claims.js';
import * as reaping from './engine/reap.js';
import * as closing from './engine/closing.js';
import * as mutations from './engine/mutations.js';
import { clearBoard } from './engine/clear.js';
import * as review from './engine/review.js';
import * as verify from './engine/verify.js';
import { openChildrenNow } from './engine/parents.js';
import {
  BOARD_GITIGNORE,
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
import { HIGHWATERMARK_FILE } from './engine/transaction.js';
import { TasksError, isErrnoException } from './errors.js';
import { EVENTS_FILE, appendEvents, parseEvents, type NewEvent, type TaskEvent } from './events/events.js';
import { findBoard, type FindBoardOptions } from './find-board.js';
import type { Task } from './format/format.js';
import { atomicWriteFile, isTempFileName, readFileIfExists } from './fs/fsio.js';
import type { TaskLookup } from './graph/graph.js';
import { listLeases, type Lease, type LeaseInput } from './runtime/leases.js';
import { assertNotMovedAway } from './runtime/moved-tasks.js';

export { HIGHWATERMARK_FILE };
export type { LockWait } from './fs/locks.js';
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
 * mutation is one transaction (engine/transaction.ts). A façade: paths and
 * reads of files are in engine/board-files.ts, changes in
 * engine/mutations.ts and engine/closing.ts, claims in engine/claims.ts; no method here calls
 * another of the façade's changes, so each change is one transaction and
 * one refresh of the board index, where it commits.
 */
export class TaskStore extends BoardFiles {
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

  /**
   * Reads every task file; bad files are reported in `problems`, never skipped
   * silently. Files unchanged since the board index saw them are not read
   * again (board-index.ts).
   */
  loadBoard(): BoardSnapshot {
    return loadBoardSnapshot(this.dir);
  }

  /**
   * The open work, for what shows only that (the agents' board, `tasks
   * prime`, the stop guard): on a board whose history is large, the open
   * tasks alone and the closed ones counted (`history`), without reading
   * their files (open-view.ts); else the whole board, as loadBoard.
   */
  loadOpenWork(): OpenSnapshot {
    return loadOpenSnapshot(this.dir, { foldAt: 0 });
  }

  // ---- single-in-progress -------------------------------------------------

  /** The id of a task other than `except` that `owner` holds in progress, if any (from claim records). */
  findOwnerTask(owner: string, except: Set<number> = new Set(), view: TaskLookup = (id) => this.peekTask(id)): number | undefined {
    return mutations.findOwnerTask(this, owner, except, view);
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
    return mutations.updateTask(this, id, patch, options);
  }

  /** Adds the edge "`blocker` blocks `task`" on both sides, refusing cycles. */
  async addDependency(task: number, blocker: number, options: ActorOptions = {}): Promise<MutationResult> {
    this.assertSameTask(task, options.actor);
    return mutations.addDependency(this, task, blocker, options);
  }

  /** Removes the edge "`blocker` blocks `task`" from both sides. */
  async removeDependency(task: number, blocker: number, options: ActorOptions = {}): Promise<MutationResult> {
    this.assertSameTask(task, options.actor);
    return mutations.removeDependency(this, task, blocker, options);
  }

  /** Completes a task and propagates; someone else's, or one still blocked, needs `force`. No check runs here: finishTask runs it. */
  async completeTask(id: number, options: closing.CompleteOptions = {}): Promise<MutationResult> {
    this.assertSameTask(id, options.heldBy ?? options.actor);
    return closing.completeTask(this, id, options);
  }

  /**
   * Completes a task once its check before done passes (engine/verify.ts): the
   * check runs outside every lock, a failing one leaves a note and throws a
   * VerifyError; `force` skips it and says so in the notes.
   */
  async finishTask(id: number, options: verify.FinishOptions = {}): Promise<verify.FinishResult> {
    this.assertSameTask(id, options.actor);
    return verify.finishTask(this, id, options);
  }

  // ---- review (engine/review.ts) -------------------------------------------

  /** Approves a task waiting for review (not the actor's own): it completes, and its dependents unblock. */
  async approveTask(id: number, options: review.ApproveOptions = {}): Promise<MutationResult> {
    this.assertSameTask(id, options.actor);
    return review.approveTask(this, id, options);
  }

  /** Sends a task waiting for review (not the actor's own) back to pending, still its owner's, with the reviewer's note. */
  async rejectTask(id: number, options: review.VerdictOptions & { note: string }): Promise<MutationResult> {
    this.assertSameTask(id, options.actor);
    return review.rejectTask(this, id, options);
  }

  /** Claims the oldest task waiting for review that `owner` may review, so that no other reviewer takes it. */
  claimReview(options: { owner: string; lease?: LeaseInput; exclude?: Iterable<number> }): Promise<review.ReviewClaim> {
    return review.claimReview(this, options);
  }

  /** Renews a reviewer's claim; E_NOT_OWNER once it is not the reviewer's. */
  renewReview(options: { id: number; owner: string; claimedAt: string; ttlSeconds?: number }): Promise<Lease> {
    return review.renewReview(this, options);
  }

  /** Gives a reviewer's claim up without a verdict. */
  releaseReview(options: { id: number; owner: string; claimedAt: string }): Promise<boolean> {
    return review.releaseReview(this, options);
  }

  /** Propagates completions that were made by hand (idempotent; writes nothing when settled). */
  propagateCompletion(id: number, options: ActorOptions = {}): Promise<MutationResult> {
    return closing.propagateCompletion(this, id, options);
  }

  /** Appends a note `{at, owner: actor, text}` to a task (any status), through one transaction. */
  async addNote(id: number, text: string, options: ActorOptions & { at?: Date } = {}): Promise<MutationResult> {
    this.assertSameTask(id, options.actor);
    return mutations.addNote(this, id, text, options);
  }

  /** Tombstones a task: its file stays, it never blocks anyone again. */
  async deleteTask(id: number, options: ActorOptions = {}): Promise<MutationResult> {
    this.assertSameTask(id, options.actor);
    return closing.deleteTask(this, id, options);
  }

  /** Removes every task file and its claim record, in one transaction; only with `confirm: true`. */
  clearBoard(options: ActorOptions & { confirm: boolean }): Promise<{ removed: number[] }> {
    return clearBoard(this, options);
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
    return claims.releaseTask(this, id, options);
  }

  /** Renews the lease of `id` (or of every task the owner holds). */
  async heartbeat(options: { owner: string; id?: number; ttlSeconds?: number; worktree?: string }): Promise<Lease[]> {
    if (options.id !== undefined) this.assertSameTask(options.id, options.owner);
    return claims.heartbeat(this, options);
  }

  /** Releases every task whose lease expired or whose process is gone. */
  reap(options: ActorOptions & { dryRun?: boolean; now?: number } = {}): Promise<ReapedTask[]> {
    return reaping.reap(this, options);
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
    return reaping.dropStaleLease(this, lease);
  }

  /** Writes a claim record for every task in progress with an owner but none; returns the adopted ids. */
  adoptUntrackedClaims(snapshot?: BoardSnapshot): Promise<number[]> {
    return reaping.adoptUntrackedClaims(this, snapshot);
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

  /** The open tasks whose parent is `id`, ascending, as their files have them (docs/protocol.md, "Parents"). */
  openChildrenOf(id: number): number[] {
    return openChildrenNow(this.dir, id, (n) => this.peekTask(n));
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
