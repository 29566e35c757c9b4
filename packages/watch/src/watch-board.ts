import { dirname, resolve } from 'node:path';
import type { FSWatcher } from 'chokidar';
import { TaskStore, claimWatcherRecord, releaseWatcherRecord, touchWatcherRecord, type WatcherRecord } from '@dotasks/core/internal';
import { boardExists } from './board-files.js';
import { classifyBoardEntry, createBoardFolderWatch, watchParentFolder, watcherReady, type BoardFolderWatch } from './board-folder.js';
import { createChangeDebouncer } from './change-debouncer.js';
import { checkChangedFile, checkSettledFile } from './file-change.js';
import { createJobQueue, type JobQueue } from './job-queue.js';
import { watchMergedWork, type MergedWorkWatch } from './merged-work.js';
import { createProblemMemory } from './problem-memory.js';
import { reapExpiredLeases, startPeriodicJobs } from './reaper.js';
import { periodicPass, reconcileBoard, reconcileOnStart } from './reconcile-board.js';
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
  /**
   * The periodic safety pass, ms (default 120000; 0 turns it off): a full
   * reconcile when something moved since the last one, else a few stats.
   */
  reconcileIntervalMs?: number;
  /** Lease reaping period, ms (default 15000; 0 turns it off). */
  reapIntervalMs?: number;
  /** More files than this pending at once (git checkout) → one full reconcile once quiet (default 64). */
  burstFiles?: number;
  /** Quiet time that ends a burst, ms (default 250). */
  burstQuietMs?: number;
  /** Take the one-watcher-per-board record (default true). */
  exclusive?: boolean;
  /** Told of each periodic pass that found nothing moved and read nothing (`tasks watch` logs it under TASKS_DEBUG). */
  trace?: (what: 'idle') => void;
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

/** One running watcher: its session and the parts that start and stop with it, passed to each step. */
interface RunningWatcher {
  readonly options: WatchBoardOptions;
  readonly session: WatchSession;
  readonly jobs: JobQueue;
  readonly folder: BoardFolderWatch;
  /** The board checked in full, as one job. */
  reconcile(): void;
  /** chokidar on the parent folder: `.tasks/` coming and going. */
  parentWatch: FSWatcher | undefined;
  stopPeriodicJobs: () => void;
  /** The merge target's ref, followed with "mergedMeansDone" (merged-work.ts). */
  mergedWork?: MergedWorkWatch;
}

/**
 * Watches a board (`.tasks/`) and keeps it consistent when files change
 * outside our commands (docs/protocol.md, "Status, edges and readiness" and
 * "Events"): propagates completions, writes the
 * missing side of one-sided edges, reports what it cannot fix as `invalid`,
 * reaps expired leases. It watches the board's parent folder so a `.tasks/`
 * removed and re-created keeps being watched.
 *
 * The steps below wire the parts together: the job queue (one job at a
 * time), the debounced change queue, the full reconcile and the per-file
 * check, the folder watches and the periodic jobs.
 */
export function watchBoard(dir: string, options: WatchBoardOptions = {}): BoardWatcher {
  const watcher = createWatcher(resolve(dir), options);
  const ready = startWatcher(watcher);
  const close = () => closeWatcher(watcher);
  ready.catch(() => close());
  return {
    ready,
    close,
    get record() {
      return watcher.session.record;
    },
  };
}

/** The parts of a watcher, wired to one session; nothing runs until startWatcher. */
function createWatcher(board: string, options: WatchBoardOptions): RunningWatcher {
  const store = new TaskStore(board);
  const actor = options.actor ?? 'watcher';
  const notice = (message: string) => options.onNotice?.(message);
  // The parts call back into the session, made last: none of them runs before it exists.
  const isClosed = () => session.closed;
  const sink = createEventSink({ store, actor, onEvent: options.onEvent, boardExists: () => boardExists(board) });
  // A failure owes a full reconcile: the next periodic pass retries what failed.
  const events = {
    ...sink,
    reportFailure: (action: string, error: unknown, task?: number) => {
      session.failures++;
      session.quiet = undefined;
      return sink.reportFailure(action, error, task);
    },
  };
  const jobs = createJobQueue({ isClosed, onError: events.reportFailure });
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
    isClosed,
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
    quiet: undefined,
    failures: 0,
    trace: options.trace,
  };
  return { options, session, jobs, folder, reconcile, parentWatch: undefined, stopPeriodicJobs: () => {} };
}

/** Takes the board's watcher record, watches the parent folder, reconciles once, then starts the periodic jobs. */
async function startWatcher(watcher: RunningWatcher): Promise<void> {
  const { session, options } = watcher;
  if (options.exclusive !== false) {
    const claimed = await claimWatcherRecord(session.store);
    if (session.closed) return releaseWatcherRecord(session.store, claimed); // closed while starting
    session.record = claimed;
  }
  const { watch } = await import('chokidar');
  if (session.closed) return;
  watcher.parentWatch = watchBoardParent(watcher, watch);
  await watcherReady(watcher.parentWatch);
  if (session.closed) return;
  watcher.folder.attach();
  await reconcileOnStart(session, watcher.jobs);
  if (session.closed) return; // closed during the first reconcile: start no timers that nothing would stop
  watcher.stopPeriodicJobs = startWatcherJobs(watcher);
  watcher.mergedWork = watchMergedWork(session, watcher.jobs, options.reconcileIntervalMs ?? 120_000);
}

/** The board's parent folder, watched so a `.tasks/` removed and re-created keeps being watched. */
function watchBoardParent(watcher: RunningWatcher, watch: typeof import('chokidar').watch): FSWatcher {
  const { session, folder } = watcher;
  const { board } = session;
  return watchParentFolder(watch, dirname(board), board, {
    onVanished: () => {
      folder.detach();
      watcher.reconcile();
    },
    onAppeared: () => {
      session.notice(`the board ${board} appeared; reconciling once it is quiet`);
      folder.attach();
      session.changes.startBurst();
    },
    notice: session.notice,
    reportFailure: session.events.reportFailure,
  });
}

/** The periodic pass (a full reconcile when something moved), lease reaping and the record's touch, each on its period; the first reap runs now. Returns their stop. */
function startWatcherJobs(watcher: RunningWatcher): () => void {
  const { session, options, jobs } = watcher;
  const { store, board, actor } = session;
  const reap = () => jobs.enqueue('reap', () => reapExpiredLeases(store, board, actor, session.events.deliver));
  const periodic = () => jobs.enqueue('reconcile:periodic', () => periodicPass(session));
  const stop = startPeriodicJobs([
    { periodMs: options.reconcileIntervalMs ?? 120_000, run: periodic },
    { periodMs: options.reapIntervalMs ?? 15_000, run: reap },
    {
      periodMs: options.exclusive === false ? 0 : RECORD_TOUCH_MS,
      run: () => {
        if (session.record && boardExists(board)) touchWatcherRecord(store, session.record);
      },
    },
  ]);
  reap();
  return stop;
}

/** Stops watching; waits for the operation in progress, releases the record. */
async function closeWatcher(watcher: RunningWatcher): Promise<void> {
  const { session } = watcher;
  if (session.closed) return;
  session.closed = true;
  watcher.stopPeriodicJobs();
  watcher.mergedWork?.close();
  session.changes.stop();
  watcher.folder.detach();
  await watcher.parentWatch?.close();
  await watcher.jobs.drained(); // the operation in progress finishes and releases its locks
  if (session.record) {
    try {
      releaseWatcherRecord(session.store, session.record);
    } catch {
      // the board may be gone; nothing to release then
    }
  }
}
