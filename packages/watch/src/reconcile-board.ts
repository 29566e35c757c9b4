import { TasksError, checkBoard, touchWatcherRecord } from '@dotasks/core/internal';
import { applyFindings } from './apply-findings.js';
import { boardExists } from './board-files.js';
import { newlyCompleted, recordHandCompletions } from './hand-completions.js';
import type { JobQueue } from './job-queue.js';
import { fileSystemClock, nothingMoved, quietMark } from './quiet-look.js';
import type { InvalidFinding } from './watch-events.js';
import { checkUnderBoardLock, noticeAdopted, type WatchSession } from './watch-session.js';

/** The board folder is gone: forget what was known of it and wait for it to come back. */
export function boardGone(session: WatchSession): void {
  if (!session.boardPresent) return;
  session.boardPresent = false;
  session.graph = undefined; // let the memory go; a full reconcile rebuilds it
  session.quiet = undefined;
  session.adoptAll = true;
  session.changes.clearFiles();
  session.problems.forget();
  session.notice(`the board ${session.board} is gone; waiting for it to come back`);
}

/**
 * The full reconcile (at start, after a burst, when the board comes back, and
 * periodically): reads the whole board under the board lock, reports its new
 * problems, makes its fixes, and records claims made by hand when changes
 * were not seen one by one.
 */
export async function reconcileBoard(session: WatchSession): Promise<void> {
  const { board, store } = session;
  if (session.closed) return;
  if (!boardExists(board)) return boardGone(session);
  const started = Date.now();
  session.quiet = undefined;
  const failures = session.failures;
  // Before the read: a file whose ctime is not older may have changed after it.
  const since = fileSystemClock(store.runtimeDir);
  let check;
  const previous = session.graph;
  try {
    check = await checkUnderBoardLock(store, () => checkBoard(store, { previous }));
  } catch (error) {
    if (error instanceof TasksError && (error.code === 'E_NO_BOARD' || (error.code === 'E_IO' && !boardExists(board)))) return boardGone(session);
    throw error;
  }
  if (!session.boardPresent) session.notice(`the board ${board} is back`);
  session.boardPresent = true;
  session.attachBoard();
  session.graph = check.graph;
  if (session.record) touchWatcherRecord(store, session.record);
  const invalid = check.findings.filter((f): f is InvalidFinding => f.kind === 'invalid');
  await session.problems.reportWholeBoard(invalid);
  // Only with an earlier graph: at start nobody knows what a completed task was before.
  if (previous)
    await recordHandCompletions(
      session,
      newlyCompleted((id) => previous.get(id)?.status, check.graph, check.graph.ids()),
    );
  await applyFindings(session, check.findings);
  const fixes = check.findings.length - invalid.length;
  if (session.adoptAll) {
    session.adoptAll = false;
    // The board as the check read it, unless its fixes wrote to it; each task is looked at again under its lock anyway.
    noticeAdopted(session, await store.adoptUntrackedClaims(fixes === 0 ? check.snapshot : undefined));
  }
  // Stamped after its own locks and fixes; a fix that failed is retried by the next pass's reconcile. Said after
  // the stamp: a change anyone makes once they read the line moves the folder past it.
  if (since !== undefined && session.failures === failures && !session.closed) session.quiet = quietMark(board, since, check);
  session.notice(
    `reconciled ${check.tasks} task file${check.tasks === 1 ? '' : 's'} in ${Date.now() - started} ms (${fixes} fix${fixes === 1 ? '' : 'es'}, ${invalid.length} problem${invalid.length === 1 ? '' : 's'})`,
  );
}

/**
 * The periodic safety pass: the full reconcile when something moved since
 * the last one (or one is owed), else nothing but a few stats (quiet-look.ts).
 */
export async function periodicPass(session: WatchSession): Promise<void> {
  if (session.closed) return;
  if (session.quiet && session.graph && nothingMoved(session.board, session.quiet)) return session.trace?.('idle');
  await reconcileBoard(session);
}

/** The reconcile-on-start: queued like any other job; resolves once it ran, rejects with its failure. */
export function reconcileOnStart(session: WatchSession, jobs: JobQueue): Promise<void> {
  return new Promise<void>((resolveDone, rejectDone) => {
    jobs.enqueue('reconcile', async () => {
      try {
        await reconcileBoard(session);
        resolveDone();
      } catch (error) {
        rejectDone(error);
      }
    });
  });
}
