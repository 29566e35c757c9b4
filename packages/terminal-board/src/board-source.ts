import { dirname, relative, resolve, sep } from 'node:path';
import type { FSWatcher } from 'chokidar';
import {
  LEASES_DIR,
  RUNTIME_DIR,
  createBranchStatusReader,
  followEvents,
  idFromFileName,
  readLeases,
  type BoardSnapshot,
  type BranchStatus,
  type BranchStatusReader,
  type EventFollower,
  type Lease,
  type TaskEvent,
  type TaskStore,
} from '@dotasks/core/internal';

/**
 * The board as it changes: file-system notifications (chokidar on the board
 * folder's parent, so a board removed and made again is followed too) start
 * a short debounce, then the board is read again through the store (cheap:
 * the board index reads only the files that changed). The event log is
 * followed by the core's followEvents. Nothing here polls the task files; a
 * burst of notifications is followed by one more read, for a dropped one.
 */

/** What the view draws: the board at one moment, the claim records, the recent events. */
export interface BoardState {
  snapshot: BoardSnapshot;
  leases: Map<number, Lease>;
  /** Seq of each task's last `completed` event. */
  completedSeq: Map<number, number>;
  /** The latest events, oldest first (at most `keepEvents`). */
  events: TaskEvent[];
  /** Each task branch against the merge target (docs/protocol.md, "The way back to main"), as of this read. */
  branches?: Map<number, BranchStatus>;
  /** Why the board could not be read just now (it is gone, a broken config …); the last good state stays. */
  error?: string;
  /** When the board was last read (ms since the epoch). */
  readAt: number;
}

/** Options for createBoardSource. */
export interface BoardSourceOptions {
  /** Quiet time after the last file event before the board is read again, ms (default 25). */
  debounceMs?: number;
  /** A board that keeps changing is read at least this often, ms (default 100). */
  maxWaitMs?: number;
  /** How many recent events to keep (default 20). */
  keepEvents?: number;
  /** After a burst of file events is read, the board is read once more this much later, ms (default 300). */
  settleMs?: number;
  /** How often the task branches are looked at for new commits, which no task file announces, ms (default 2000; 0: never). */
  branchPollMs?: number;
}

/** A running source; `subscribe` is called with every new state. */
export interface BoardSource {
  /** The current state. */
  get(): BoardState;
  /** Calls `listener` on every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Reads the board now (after the view wrote something, without waiting for the notification). */
  refresh(): void;
  /** Resolves once the file watch is set up: changes after this are seen. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** True for the paths under the board that the view shows: task files, claim records, and the folders that hold them. */
export function isWatchedPath(board: string, path: string): boolean {
  const rel = relative(board, path);
  if (rel === '') return true;
  if (rel.startsWith('..') || rel.startsWith(sep) || resolve(board, rel) !== resolve(path)) return false;
  const parts = rel.split(sep);
  if (parts.length === 1) return parts[0] === RUNTIME_DIR || idFromFileName(parts[0]) !== undefined;
  if (parts[0] !== RUNTIME_DIR) return false;
  if (parts[1] !== LEASES_DIR) return false;
  return parts.length === 2 || (parts.length === 3 && /^task_\d+\.json$/.test(parts[2]));
}

/** Starts following the board of `store`. */
export function createBoardSource(store: TaskStore, options: BoardSourceOptions = {}): BoardSource {
  return new LiveBoardSource(store, options);
}

/** The source's state lives in its fields, and each step of following the board is a method. */
class LiveBoardSource implements BoardSource {
  readonly ready: Promise<void>;
  private readonly board: string;
  private readonly debounceMs: number;
  private readonly maxWaitMs: number;
  private readonly keepEvents: number;
  private readonly settleMs: number;
  private readonly listeners = new Set<() => void>();
  /** Seq of each task's last `completed` event (shared by every state: Done is latest first). */
  private readonly completedSeq = new Map<number, number>();
  private events: TaskEvent[] = [];
  private closed = false;
  private state: BoardState;
  /** The read a burst of notifications waits for, and when the burst began (for maxWaitMs). */
  private debounce: NodeJS.Timeout | undefined;
  private firstAt: number | undefined;
  /** The read once more after a burst. */
  private settle: NodeJS.Timeout | undefined;
  /** Undefined while the log is read for the first time. */
  private follower: EventFollower | undefined;
  private watcher: FSWatcher | undefined;
  private readonly branchStatuses: BranchStatusReader;
  /** Looks for commits on the task branches and the target between reads of the board. */
  private branchPoll: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: TaskStore,
    options: BoardSourceOptions,
  ) {
    this.board = resolve(store.dir);
    this.branchStatuses = createBranchStatusReader(store.dir, () => store.config);
    this.debounceMs = options.debounceMs ?? 25;
    this.maxWaitMs = options.maxWaitMs ?? 100;
    this.keepEvents = options.keepEvents ?? 20;
    this.settleMs = options.settleMs ?? 300;
    this.state = this.read();
    this.follower = followEvents(store, { onEvent: (event) => this.onEvent(event) });
    this.state = { ...this.state, events: this.events };
    this.ready = this.watchFiles();
    const branchPollMs = options.branchPollMs ?? 2000;
    if (branchPollMs > 0) {
      this.branchPoll = setInterval(() => this.pollBranches(), branchPollMs);
      this.branchPoll.unref();
    }
  }

  // Arrows: the view hands these two to useSyncExternalStore as they are.
  readonly get = (): BoardState => this.state;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  refresh(): void {
    // The log first, so a completion read in the files already has its seq (Done is latest first).
    if (!this.closed) this.follower?.catchUp();
    clearTimeout(this.debounce);
    this.debounce = undefined;
    this.firstAt = undefined;
    if (this.closed) return;
    this.reread();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.debounce);
    clearTimeout(this.settle);
    clearInterval(this.branchPoll);
    this.follower?.close();
    await this.ready.catch(() => undefined);
    await this.watcher?.close();
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  private read(previous?: BoardState): BoardState {
    const { store, completedSeq, events } = this;
    try {
      const snapshot = store.loadBoard();
      const leases = new Map(readLeases(store).map((lease) => [lease.task, lease]));
      return { snapshot, leases, completedSeq, events, branches: this.readBranches(snapshot), readAt: Date.now() };
    } catch (error) {
      const message = (error as Error).message;
      const empty: BoardSnapshot = { tasks: [], byId: new Map(), problems: [] };
      return { ...(previous ?? { snapshot: empty, leases: new Map(), completedSeq, events }), events, error: message, readAt: Date.now() };
    }
  }

  /** Branch statuses ask git only about what moved; a git that cannot answer costs the statuses, never the board. */
  private readBranches(snapshot: BoardSnapshot): Map<number, BranchStatus> {
    try {
      return this.branchStatuses.read(snapshot.tasks);
    } catch {
      return new Map();
    }
  }

  /** A commit moves no task file: when a ref the last read looked at moved, the statuses are read again on their own, and drawn when they changed. */
  private pollBranches(): void {
    if (this.closed || this.state.error || !this.branchesMoved()) return;
    const branches = this.readBranches(this.state.snapshot);
    if (sameBranches(branches, this.state.branches)) return;
    this.state = { ...this.state, branches };
    this.emit();
  }

  /** The reader's cheap question (refs only); a git folder that cannot be read is asked again by the next read. */
  private branchesMoved(): boolean {
    try {
      return this.branchStatuses.moved();
    } catch {
      return false;
    }
  }

  private reread(): void {
    this.state = this.read(this.state);
    this.emit();
  }

  /**
   * A read once the notifications are quiet (or maxWaitMs after the first).
   * chokidar can drop the notification of a change that follows a rename of
   * the same file closely (a hand edit just after a completion rewrote the
   * task): once a burst of notifications is read, the board is read once
   * more a moment later, which finds what such a change left.
   */
  private schedule(): void {
    if (this.closed) return;
    const now = Date.now();
    this.firstAt ??= now;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(
      () => {
        this.refresh();
        clearTimeout(this.settle);
        this.settle = setTimeout(() => {
          this.settle = undefined;
          if (this.closed) return;
          this.reread();
        }, this.settleMs);
      },
      Math.max(0, Math.min(this.debounceMs, this.firstAt + this.maxWaitMs - now)),
    );
  }

  private onEvent(event: TaskEvent): void {
    if (event.type === 'completed' && typeof event.task === 'number') this.completedSeq.set(event.task, event.seq);
    if (event.type === 'cleared') this.completedSeq.clear();
    this.events = [...this.events.slice(-(this.keepEvents - 1)), event];
    if (this.follower) {
      // Past the first read of the log: show the event now. The task files' own notifications redraw the
      // columns; reading the board once more is the fallback for a notification the file system dropped.
      this.state = { ...this.state, events: this.events };
      this.emit();
      this.schedule();
    }
  }

  /** chokidar on the board's parent folder, so a board removed and made again is followed too. */
  private async watchFiles(): Promise<void> {
    const { watch } = await import('chokidar');
    if (this.closed) return;
    const { board } = this;
    const parent = dirname(board);
    const ignored = (path: string) => path !== parent && !isWatchedPath(board, path);
    const watcher = (this.watcher = watch(parent, { ignored, ignoreInitial: true, depth: 3, persistent: true, atomic: false }));
    watcher.on('all', () => this.schedule());
    // A watch error (out of inotify watches …) is shown like any other; the event log still redraws the board.
    watcher.on('error', (error) => {
      this.state = { ...this.state, error: `cannot watch ${board}: ${(error as Error).message}` };
      this.emit();
    });
    await new Promise<void>((done) => watcher.once('ready', () => done()));
    // Whatever changed while the watch was being set up.
    if (!this.closed) this.refresh();
  }
}

function sameBranches(a: ReadonlyMap<number, BranchStatus>, b: ReadonlyMap<number, BranchStatus> | undefined): boolean {
  if (!b || a.size !== b.size) return false;
  for (const [id, status] of a) if (JSON.stringify(status) !== JSON.stringify(b.get(id))) return false;
  return true;
}
