import { statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import {
  createBranchStatusReader,
  followEvents,
  isErrnoException,
  LEASES_DIR,
  type BranchStatusReader,
  type EventFollower,
  type TaskStore,
} from '@dotasks/core/internal';
import { readBoard, type BoardHistory } from './board-state.js';
import type { WebEvent, WebState } from './wire.js';

/** What the feed tells its subscribers: a new board state (as JSON), or events appended to the log. */
export type FeedMessage = { kind: 'state'; json: string } | { kind: 'events'; events: WebEvent[] };

/** The board as it changes, for every page that is open. */
export interface BoardFeed {
  /** The latest state, as JSON. */
  stateJson(): string;
  /** The history of the latest read, for the page to ask for (`/api/history`, `/api/task/ID`). */
  history(): BoardHistory;
  /** A branch status reader of its own for the history's pages, so what they ask does not change what the poll looks at. */
  readonly historyBranches: BranchStatusReader;
  /** The last events of the log, oldest first. */
  recentEvents(): WebEvent[];
  /** Calls `listener` on every change until the returned function is called. */
  subscribe(listener: (message: FeedMessage) => void): () => void;
  /** Reads the board again now (after a write of ours, so its answer and the page agree). */
  refresh(): void;
  close(): void;
}

export interface BoardFeedOptions {
  actor: string;
  /** How many events a page gets when it connects (default 300). */
  keepEvents?: number;
  /**
   * The safety poll, ms (default 2000): fs.watch misses changes on some file
   * systems. It stats the folders and reads the branch refs; the board is read
   * again only when one of them moved.
   */
  pollMs?: number;
  /** Told of every read of the board and every poll that found nothing moved (`tasks serve` logs them under TASKS_DEBUG). */
  trace?: (what: 'read' | 'idle') => void;
  /** How long to gather file notifications before reading the board, ms (default 15). */
  settleMs?: number;
}

/**
 * Watches one folder with fs.watch and re-attaches when it appears, or is
 * removed and made again (a board re-created, `.runtime/leases` made by the
 * first claim); the caller's poll calls `attach` again.
 */
function folderWatch(dir: string, onChange: () => void): { attach(): void; close(): void } {
  let watcher: FSWatcher | undefined;
  let ino: number | undefined;
  const detach = () => {
    watcher?.close();
    watcher = undefined;
  };
  return {
    attach() {
      let now: number | undefined;
      try {
        now = statSync(dir).ino;
      } catch (error) {
        if (!isErrnoException(error, 'ENOENT') && !isErrnoException(error, 'ENOTDIR')) throw error;
      }
      if (now === ino && (watcher || now === undefined)) return;
      detach();
      ino = now;
      if (now === undefined) return;
      try {
        watcher = watch(dir, { persistent: false }, () => onChange());
        watcher.on('error', detach);
      } catch {
        watcher = undefined; // out of inotify watches: the poll still sees every change, later
      }
    },
    close: detach,
  };
}

/** The folders' identity and times: a file made, renamed into place or removed in one changes its folder's. */
function folderStamp(dirs: readonly string[]): string {
  return dirs
    .map((dir) => {
      try {
        const s = statSync(dir);
        return `${s.ino}:${s.mtimeMs}:${s.ctimeMs}`;
      } catch (error) {
        if (!isErrnoException(error, 'ENOENT') && !isErrnoException(error, 'ENOTDIR')) throw error;
        return '-';
      }
    })
    .join(' ');
}

/** A state's JSON without its leading `"now"` field (compared to see whether anything changed). */
function withoutClock(json: string): string {
  return json.replace(/^\{"now":"[^"]*",/, '');
}

/** The board state the page shows while the board cannot be read (a checkout under way), with the reason. */
function unreadableState(store: TaskStore, actor: string, error: unknown): WebState {
  return {
    now: new Date().toISOString(),
    board: store.dir,
    actor,
    tasks: [],
    refs: [],
    history: { completed: 0, shown: 0, deleted: 0 },
    edges: [],
    links: [],
    criticalPath: [],
    problems: [{ file: store.dir, message: `cannot read the board: ${(error as Error).message}` }],
    reviewLane: false,
  };
}

/** The history while the board cannot be read: nothing. */
const EMPTY_HISTORY: BoardHistory = { page: () => ({ tasks: [], refs: [], more: false }), task: () => undefined };

/**
 * Follows the board for the page: file-system notifications of the board
 * folder and the claim records, and the event log's tail (the core's
 * followEvents, as `tasks events --follow` reads it). A burst of
 * notifications becomes one read of the board; a state identical to the last
 * one is not sent again.
 */
export function createBoardFeed(store: TaskStore, options: BoardFeedOptions): BoardFeed {
  return new LiveBoardFeed(store, options);
}

/** The feed's state lives in its fields, and each step of following the board is a method. */
class LiveBoardFeed implements BoardFeed {
  private readonly keep: number;
  private readonly listeners = new Set<(message: FeedMessage) => void>();
  /** Each completed task's `completed` event, to order Done by. */
  private readonly completedSeq = new Map<number, number>();
  /** The log's last events, up to twice `keep` before they are trimmed. */
  private events: WebEvent[] = [];
  /** Events not sent to the pages yet. */
  private pending: WebEvent[] = [];
  /** The latest state's JSON, and the same without its clock to compare with the next. */
  private current = '';
  private last = '';
  /** The history of the read that gave `current`. */
  private latest: BoardHistory = EMPTY_HISTORY;
  /** A read of the board gathered from a burst of notifications. */
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly follower: EventFollower;
  private readonly folders: { attach(): void; close(): void }[];
  private readonly poll: NodeJS.Timeout;
  /** The folders the poll stats, and their stamp when the board was last read. */
  private readonly stamped: string[];
  private stamp = '';
  /** Branch statuses, asking git only about branches or a target that moved (the poll brings new commits in). */
  private readonly branches: BranchStatusReader;
  readonly historyBranches: BranchStatusReader;

  constructor(
    private readonly store: TaskStore,
    private readonly options: BoardFeedOptions,
  ) {
    this.keep = options.keepEvents ?? 300;
    this.branches = createBranchStatusReader(store.dir, () => store.config);
    this.historyBranches = createBranchStatusReader(store.dir, () => store.config);
    this.follower = followEvents(store, { onEvent: (e) => this.onEvent(e as WebEvent), pollMs: options.pollMs ?? 2000 });
    this.pending = []; // the log as it was at the start is served by recentEvents(), not pushed
    this.stamped = [store.dir, join(store.runtimeDir, LEASES_DIR)];
    const first = this.read();
    this.current = first.json;
    this.latest = first.history;
    this.last = withoutClock(this.current);
    this.folders = [folderWatch(store.dir, this.soon), folderWatch(join(store.runtimeDir, LEASES_DIR), this.soon)];
    for (const f of this.folders) f.attach();
    this.poll = setInterval(this.check, options.pollMs ?? 2000);
    this.poll.unref();
  }

  stateJson(): string {
    return `{"now":${JSON.stringify(new Date().toISOString())},${withoutClock(this.current)}`;
  }

  history(): BoardHistory {
    return this.latest;
  }

  recentEvents(): WebEvent[] {
    return this.events.slice(-this.keep);
  }

  subscribe(listener: (message: FeedMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An arrow, so a timer can call it. */
  readonly refresh = (): void => {
    if (this.closed) return;
    // The log first: a write this refresh answers has appended its events by now, and a state read
    // before its `completed` event is seen puts the task at the bottom of Done (no seq yet).
    this.follower.catchUp();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length) {
      const batch = this.pending;
      this.pending = [];
      this.send({ kind: 'events', events: batch });
    }
    const { json, history } = this.read();
    // The history answers from the latest read even when the state did not change (a note on an old task).
    this.latest = history;
    // `now` changes on every read; compare without it.
    const key = withoutClock(json);
    if (key === this.last) return;
    this.last = key;
    this.current = json;
    this.send({ kind: 'state', json });
  };

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    clearInterval(this.poll);
    this.follower.close();
    for (const f of this.folders) f.close();
    this.listeners.clear();
  }

  private send(message: FeedMessage): void {
    for (const listener of this.listeners) listener(message);
  }

  /** The poll: the board is read again only when a folder or a branch moved (an idle board costs a few stats). */
  private readonly check = (): void => {
    for (const f of this.folders) f.attach();
    if (folderStamp(this.stamped) !== this.stamp || this.branches.moved()) this.refresh();
    else this.options.trace?.('idle');
  };

  private read(): { json: string; history: BoardHistory } {
    // Stamped before reading: a change made during the read moves the stamp, and the next poll reads again.
    this.stamp = folderStamp(this.stamped);
    this.options.trace?.('read');
    try {
      const { state, history } = readBoard(this.store, this.options.actor, this.completedSeq, this.branches);
      return { json: JSON.stringify(state), history };
    } catch (error) {
      // The board folder gone or unreadable for a moment (a checkout): say so on the page, keep following.
      return { json: JSON.stringify(unreadableState(this.store, this.options.actor, error)), history: EMPTY_HISTORY };
    }
  }

  /** A read of the board shortly, gathering the notifications of a burst (an arrow: the folder watches call it). */
  private readonly soon = (): void => {
    if (!this.closed && !this.timer) this.timer = setTimeout(this.refresh, this.options.settleMs ?? 15);
  };

  private onEvent(event: WebEvent): void {
    if (event.type === 'completed' && typeof event.task === 'number') this.completedSeq.set(event.task, event.seq);
    this.events.push(event);
    if (this.events.length > this.keep * 2) this.events = this.events.slice(-this.keep);
    this.pending.push(event);
    this.soon();
  }
}
