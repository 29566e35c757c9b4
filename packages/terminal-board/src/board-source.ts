import { dirname, relative, resolve, sep } from 'node:path';
import type { FSWatcher } from 'chokidar';
import {
  LEASES_DIR,
  RUNTIME_DIR,
  followEvents,
  idFromFileName,
  readLeases,
  type BoardSnapshot,
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
  const board = resolve(store.dir);
  const parent = dirname(board);
  const debounceMs = options.debounceMs ?? 25;
  const maxWaitMs = options.maxWaitMs ?? 100;
  const keepEvents = options.keepEvents ?? 20;
  const listeners = new Set<() => void>();
  const completedSeq = new Map<number, number>();
  let events: TaskEvent[] = [];
  let closed = false;

  const read = (previous?: BoardState): BoardState => {
    try {
      const snapshot = store.loadBoard();
      const leases = new Map(readLeases(store).map((lease) => [lease.task, lease]));
      return { snapshot, leases, completedSeq, events, readAt: Date.now() };
    } catch (error) {
      const message = (error as Error).message;
      const empty: BoardSnapshot = { tasks: [], byId: new Map(), problems: [] };
      return { ...(previous ?? { snapshot: empty, leases: new Map(), completedSeq, events }), events, error: message, readAt: Date.now() };
    }
  };

  let state = read();
  const emit = () => {
    for (const listener of listeners) listener();
  };

  let debounce: NodeJS.Timeout | undefined;
  let firstAt: number | undefined;
  const refresh = () => {
    // The log first, so a completion read in the files already has its seq (Done is latest first).
    if (!closed) follower?.catchUp();
    clearTimeout(debounce);
    debounce = undefined;
    firstAt = undefined;
    if (closed) return;
    state = read(state);
    emit();
  };
  // chokidar can drop the notification of a change that follows a rename of the same file closely (a hand
  // edit just after a completion rewrote the task): once a burst of notifications is read, the board is read
  // once more a moment later, which finds what such a change left.
  let settle: NodeJS.Timeout | undefined;
  const settleMs = options.settleMs ?? 300;
  const schedule = () => {
    if (closed) return;
    const now = Date.now();
    firstAt ??= now;
    clearTimeout(debounce);
    debounce = setTimeout(
      () => {
        refresh();
        clearTimeout(settle);
        settle = setTimeout(() => {
          settle = undefined;
          if (closed) return;
          state = read(state);
          emit();
        }, settleMs);
      },
      Math.max(0, Math.min(debounceMs, firstAt + maxWaitMs - now)),
    );
  };

  let follower: EventFollower | undefined;
  const onEvent = (event: TaskEvent) => {
    if (event.type === 'completed' && typeof event.task === 'number') completedSeq.set(event.task, event.seq);
    if (event.type === 'cleared') completedSeq.clear();
    events = [...events.slice(-(keepEvents - 1)), event];
    if (follower) {
      // Past the first read of the log: show the event now. The task files' own notifications redraw the
      // columns; reading the board once more is the fallback for a notification the file system dropped.
      state = { ...state, events };
      emit();
      schedule();
    }
  };
  follower = followEvents(store, { onEvent });
  state = { ...state, events };

  let watcher: FSWatcher | undefined;
  const ready = (async () => {
    const { watch } = await import('chokidar');
    if (closed) return;
    const ignored = (path: string) => path !== parent && !isWatchedPath(board, path);
    watcher = watch(parent, { ignored, ignoreInitial: true, depth: 3, persistent: true, atomic: false });
    watcher.on('all', () => schedule());
    // A watch error (out of inotify watches …) is shown like any other; the event log still redraws the board.
    watcher.on('error', (error) => {
      state = { ...state, error: `cannot watch ${board}: ${(error as Error).message}` };
      emit();
    });
    await new Promise<void>((done) => watcher!.once('ready', () => done()));
    // Whatever changed while the watch was being set up.
    if (!closed) refresh();
  })();

  return {
    get: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    refresh,
    ready,
    async close() {
      closed = true;
      clearTimeout(debounce);
      clearTimeout(settle);
      follower?.close();
      await ready.catch(() => undefined);
      await watcher?.close();
    },
  };
}
