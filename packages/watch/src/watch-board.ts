import { dirname, resolve } from 'node:path';
import type { FSWatcher } from 'chokidar';
import { TaskStore, claimWatcherRecord, releaseWatcherRecord, touchWatcherRecord, type WatcherRecord } from '@dotasks/core/internal';
import { boardExists } from './board-files.js';
import { classifyBoardEntry, createBoardFolderWatch, watchParentFolder, watcherReady } from './board-folder.js';
import { createChangeDebouncer } from './change-debouncer.js';
import { checkChangedFile, checkSettledFile } from './file-change.js';
import { createJobQueue } from './job-queue.js';
import { createProblemMemory } from './problem-memory.js';
import { reapExpiredLeases, startPeriodicJobs } from './reaper.js';
import { reconcileBoard, reconcileOnStart } from './reconcile-board.js';
import { createStaleSaveMemory } from './stale-saves.js';
import { createEventSink, type WatchEvent } from './watch-events.js';
import type { WatchSession } from './watch-session.js';

export type { WatchEvent } from './watch-events.js';

/** Options for watchBoard; every timing has a default that suits a board edited by people and agents. */
export interface WatchBoardOptions {
  /** Each event the watcher causes (`unblocked`, `repaired`, `invalid`, `reaped`, `watch.error`). */
  onEvent?: (event: WatchEvent) => void;
  /** What the watcher is doing, for people (board gone, reconciled N tasks …). */
  onNotice?: (message: string) => void;
  /** The owner recorded on the watcher's events (default `watcher`). */
  actor?: string;
  /** Quiet time after a file's last event before it is read, ms (default 30). */
  debounceMs?: number;
  /** A file that keeps changing is read at least this often, ms (default 500). */
  maxWaitMs?: number;
  /** A file is looked at once more this long after its last event, ms (default 300): file events of a burst can be dropped or merged. */
  settleMs?: number;
  /** Full reconcile period, ms (default 120000; 0 turns it off). */
  reconcileIntervalMs?: number;
  /** Lease reaping period, ms (default 15000; 0 turns it off). */
  reapIntervalMs?: number;
  /** More files than this pending at once (git checkout) → one full reconcile once quiet (default 64). */
  burstFiles?: number;
  /** Quiet time that ends a burst, ms (default 250). */
  burstQuietMs?: number;
  /** Take the one-watcher-per-board record (default true). */
  exclusive?: boolean;
}

/** A running watcher. */
export interface BoardWatcher {
  /** Resolves once the watch is set up and the board reconciled; rejects (and closes) if it cannot start. */
  ready: Promise<void>;
  /** Stops watching; waits for the operation in progress, releases the record. */
  close(): Promise<void>;
  /** The record naming this watcher, once ready. */
  readonly record: WatcherRecord | undefined;
}

/** How often the one-watcher-per-board record is touched, ms. */
const RECORD_TOUCH_MS = 30_000;

/**
 * Watches a board (`.tasks/`) and keeps it consistent when files change
 * outside our commands (docs/protocol.md, "Status, edges and readiness" and
 * "Events"): propagates completions, writes the
 * missing side of one-sided edges, reports what it cannot fix as `invalid`,
 * reaps expired leases. It watches the board's parent folder so a `.tasks/`
 * removed and re-created keeps being watched.
 *
 * This function wires the parts together: the job queue (one job at a
 * time), the debounced change queue, the full reconcile and the per-file
 * check, the folder watches and the periodic jobs.
 */
export function watchBoard(dir: string, options: WatchBoardOptions = {}): BoardWatcher {
  const board = resolve(dir);
  const parent = dirname(board);
  const store = new TaskStore(board);
  const actor = options.actor ?? 'watcher';
  const notice = (message: string) => options.onNotice?.(message);

  const events = createEventSink({ store, actor, onEvent: options.onEvent, boardExists: () => boardExists(board) });
  const jobs = createJobQueue({ isClosed: () => session.closed, onError: events.reportFailure });
  const reconcile = () => jobs.enqueue('reconcile', () => reconcileBoard(session));
  const changes = createChangeDebouncer({
    debounceMs: options.debounceMs ?? 30,
    maxWaitMs: options.maxWaitMs ?? 500,
    settleMs: options.settleMs ?? 300,
    burstFiles: options.burstFiles ?? 64,
    burstQuietMs: options.burstQuietMs ?? 250,
    canJudgeFiles: () => session.graph !== undefined,
    onQuiet: (id) => jobs.enqueue(`check:${id}`, () => checkChangedFile(session, id, false), id),
    onSettled: (id, file) => jobs.enqueue(`settle:${id}`, () => checkSettledFile(session, id, file), id),
    onBurst: () => (session.adoptAll = true),
    onBurstQuiet: reconcile,
  });
  const folder = createBoardFolderWatch(board, {
    isClosed: () => session.closed,
    onEntry: (name) => {
      if (session.closed) return;
      const entry = classifyBoardEntry(name);
      if (entry.kind === 'unknown')
        changes.startBurst(); // the platform did not say which file: look at all of them once quiet
      else if (entry.kind === 'task') changes.fileChanged(entry.id);
      else if (entry.kind === 'misnamed') reconcile(); // the full check reports it
    },
    onLost: reconcile,
    notice,
    reportFailure: events.reportFailure,
  });
  const session: WatchSession = {
    board,
    store,
    actor,
    events,
    problems: createProblemMemory(events.reportInvalid),
    repairs: createStaleSaveMemory(),
    changes,
    notice,
    attachBoard: folder.attach,
    closed: false,
    record: undefined,
    graph: undefined,
    boardPresent: true,
    adoptAll: true,
  };

  /** chokidar on the parent folder: `.tasks/` coming and going. */
  let parentWatch: FSWatcher | undefined;
  let stopPeriodicJobs = () => {};

  const start = async () => {
    if (options.exclusive !== false) {
      const claimed = await claimWatcherRecord(store);
      if (session.closed) return releaseWatcherRecord(store, claimed); // closed while starting
      session.record = claimed;
    }
    const { watch } = await import('chokidar');
    if (session.closed) return;
    const w = watchParentFolder(watch, parent, board, {
      onVanished: () => {
        folder.detach();
        reconcile();
      },
      onAppeared: () => {
        notice(`the board ${board} appeared; reconciling once it is quiet`);
        folder.attach();
        changes.startBurst();
      },
      notice,
      reportFailure: events.reportFailure,
    });
    parentWatch = w;
    await watcherReady(w);
    if (session.closed) return;
    folder.attach();
    await reconcileOnStart(session, jobs);
    if (session.closed) return; // closed during the first reconcile: start no timers that nothing would stop
    stopPeriodicJobs = startPeriodicJobs([
      { periodMs: options.reconcileIntervalMs ?? 120_000, run: reconcile },
      { periodMs: options.reapIntervalMs ?? 15_000, run: () => jobs.enqueue('reap', () => reapExpiredLeases(store, board, actor, events.deliver)) },
      {
        periodMs: options.exclusive === false ? 0 : RECORD_TOUCH_MS,
        run: () => {
          if (session.record && boardExists(board)) touchWatcherRecord(store, session.record);
        },
      },
    ]);
    jobs.enqueue('reap', () => reapExpiredLeases(store, board, actor, events.deliver));
  };

  const close = async () => {
    if (session.closed) return;
    session.closed = true;
    stopPeriodicJobs();
    changes.stop();
    folder.detach();
    await parentWatch?.close();
    await jobs.drained(); // the operation in progress finishes and releases its locks
    if (session.record) {
      try {
        releaseWatcherRecord(store, session.record);
      } catch {
        // the board may be gone; nothing to release then
      }
    }
  };

  const ready = start();
  ready.catch(() => close());
  return {
    ready,
    close,
    get record() {
      return session.record;
    },
  };
}
