import type { BoardGraph, TaskStore, WatcherRecord } from '@dotasks/core/internal';
import type { ChangeDebouncer } from './change-debouncer.js';
import type { ProblemMemory } from './problem-memory.js';
import type { QuietMark } from './quiet-look.js';
import type { StaleSaveMemory } from './stale-saves.js';
import type { WatchEventSink } from './watch-events.js';

/** What the parts of one running watcher share: the board, its memories, and the state that changes as it runs. */
export interface WatchSession {
  /** The board folder (absolute). */
  readonly board: string;
  readonly store: TaskStore;
  /** The owner recorded on the watcher's events. */
  readonly actor: string;
  readonly events: WatchEventSink;
  readonly problems: ProblemMemory;
  readonly repairs: StaleSaveMemory;
  readonly changes: ChangeDebouncer;
  /** What the watcher is doing, for people. */
  notice(message: string): void;
  /** Watches the board folder's entries (again, when it was re-created). */
  attachBoard(): void;

  closed: boolean;
  /** The one-watcher-per-board record, once taken. */
  record: WatcherRecord | undefined;
  /** Undefined while the board is gone or not reconciled yet. */
  graph: BoardGraph | undefined;
  boardPresent: boolean;
  /**
   * Start, the board coming back, a burst: changes were not seen one by one,
   * so the next full reconcile also records claims made by hand.
   */
  adoptAll: boolean;
  /** What the last full reconcile left for the periodic pass to compare with; none while one is owed (quiet-look.ts). */
  quiet: QuietMark | undefined;
  /** Fixes and jobs that failed so far: a reconcile during which one failed leaves no mark, so the next pass retries. */
  failures: number;
  /** Told of each periodic pass that found nothing moved (`tasks watch` logs it under TASKS_DEBUG). */
  trace?: (what: 'idle') => void;
}

/**
 * Our commands change several files under the board lock (a new task and
 * its blockers, the two sides of an edge), one file after the other. A check
 * made while holding that lock never sees such a change half-done, so it
 * never reports a transient state as a problem. The lock is held only while
 * reading; fixes take it again themselves.
 */
export async function checkUnderBoardLock<T>(store: TaskStore, check: () => T): Promise<T> {
  return (await store.transact({ board: true }, check)).value;
}

/** Claims made by hand get a record, so single-in-progress counts them (see core adoptUntrackedClaims). */
export function noticeAdopted(session: WatchSession, ids: number[]): void {
  for (const id of ids) session.notice(`recorded the claim of #${id} by ${session.store.peekTask(id)?.owner ?? '?'} (set in progress by hand)`);
}
