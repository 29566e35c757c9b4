import { statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { followEvents, isErrnoException, LEASES_DIR, type EventFollower, type TaskStore } from '@dotasks/core/internal';
import { readBoardState } from './board-state.js';
import type { WebEvent, WebState } from './wire.js';

/** What the feed tells its subscribers: a new board state (as JSON), or events appended to the log. */
export type FeedMessage = { kind: 'state'; json: string } | { kind: 'events'; events: WebEvent[] };

/** The board as it changes, for every page that is open. */
export interface BoardFeed {
  /** The latest state, as JSON. */
  stateJson(): string;
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
  /** Fallback poll, ms (default 2000): fs.watch misses changes on some file systems. */
  pollMs?: number;
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

/** A state's JSON without its leading `"now"` field (compared to see whether anything changed). */
function withoutClock(json: string): string {
  return json.replace(/^\{"now":"[^"]*",/, '');
}

/**
 * Follows the board for the page: file-system notifications of the board
 * folder and the claim records, and the event log's tail (the core's
 * followEvents, as `tasks events --follow` reads it). A burst of
 * notifications becomes one read of the board; a state identical to the last
 * one is not sent again.
 */
export function createBoardFeed(store: TaskStore, options: BoardFeedOptions): BoardFeed {
  const keep = options.keepEvents ?? 300;
  const listeners = new Set<(message: FeedMessage) => void>();
  const completedSeq = new Map<number, number>();
  let events: WebEvent[] = [];
  let pending: WebEvent[] = [];
  let current = '';
  let last = '';
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const send = (message: FeedMessage) => {
    for (const listener of listeners) listener(message);
  };
  const read = (): string => {
    try {
      return JSON.stringify(readBoardState(store, options.actor, completedSeq));
    } catch (error) {
      // The board folder gone or unreadable for a moment (a checkout): say so on the page, keep following.
      const state: WebState = {
        now: new Date().toISOString(),
        board: store.dir,
        actor: options.actor,
        tasks: [],
        edges: [],
        criticalPath: [],
        problems: [{ file: store.dir, message: `cannot read the board: ${(error as Error).message}` }],
      };
      return JSON.stringify(state);
    }
  };
  const refresh = () => {
    if (closed) return;
    // The log first: a write this refresh answers has appended its events by now, and a state read
    // before its `completed` event is seen puts the task at the bottom of Done (no seq yet).
    follower.catchUp();
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.length) {
      const batch = pending;
      pending = [];
      send({ kind: 'events', events: batch });
    }
    const json = read();
    // `now` changes on every read; compare without it.
    const key = withoutClock(json);
    if (key === last) return;
    last = key;
    current = json;
    send({ kind: 'state', json });
  };
  const soon = () => {
    if (!closed && !timer) timer = setTimeout(refresh, options.settleMs ?? 15);
  };

  const onEvent = (event: WebEvent) => {
    if (event.type === 'completed' && typeof event.task === 'number') completedSeq.set(event.task, event.seq);
    events.push(event);
    if (events.length > keep * 2) events = events.slice(-keep);
    pending.push(event);
    soon();
  };
  const follower: EventFollower = followEvents(store, { onEvent: (e) => onEvent(e as WebEvent), pollMs: options.pollMs ?? 2000 });
  pending = []; // the log as it was at the start is served by recentEvents(), not pushed
  current = read();
  last = withoutClock(current);

  const folders = [folderWatch(store.dir, soon), folderWatch(join(store.runtimeDir, LEASES_DIR), soon)];
  for (const f of folders) f.attach();
  const poll = setInterval(() => {
    for (const f of folders) f.attach();
    refresh();
  }, options.pollMs ?? 2000);
  poll.unref();

  return {
    stateJson: () => `{"now":${JSON.stringify(new Date().toISOString())},${withoutClock(current)}`,
    recentEvents: () => events.slice(-keep),
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    refresh,
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      clearInterval(poll);
      follower.close();
      for (const f of folders) f.close();
      listeners.clear();
    },
  };
}
