import { CorruptTaskError, checkChangedTask, isClosed, taskFileName, type BoardFinding } from '@dotasks/core/internal';
import { applyFindings } from './apply-findings.js';
import { boardExists, fileSignature } from './board-files.js';
import type { PendingFile } from './change-debouncer.js';
import { newlyCompleted, recordHandCompletions } from './hand-completions.js';
import { boardGone } from './reconcile-board.js';
import type { InvalidFinding } from './watch-events.js';
import { checkUnderBoardLock, noticeAdopted, type WatchSession } from './watch-session.js';

/**
 * The per-file change handler: reads task `id` once (under the board lock)
 * and decides. An old buffer saved over a repair gets the repair again; a
 * parse failure is held back until the file has settled (`final`), since an
 * editor may be half-way through a write; anything else is judged against the
 * graph, its new problems reported and its fixes made.
 */
export async function checkChangedFile(session: WatchSession, id: number, final: boolean): Promise<void> {
  const { store, repairs } = session;
  if (session.closed || !session.graph) return;
  if (!boardExists(session.board)) return boardGone(session);
  const path = store.taskPath(id);
  const state = session.changes.pending(id);
  if (state) state.seen = fileSignature(path);
  const current = session.graph;
  const before = current.get(id)?.status;
  // One reading of the file decides: an old buffer saved over a repair, or a change to judge.
  const looked = await checkUnderBoardLock(store, (): { stale?: { finding: BoardFinding }; findings: BoardFinding[] } => {
    let text: string | undefined;
    try {
      text = store.readTaskText(id);
    } catch (error) {
      if (!(error instanceof CorruptTaskError)) throw error;
      return { findings: checkChangedTask(store, current, id) };
    }
    const stale = repairs.staleRepair(id, text);
    return stale ? { stale, findings: [] } : { findings: checkChangedTask(store, current, id, { text }) };
  });
  if (looked.stale) {
    const before = repairs.last(id);
    await applyFindings(session, [looked.stale.finding]);
    if (repairs.last(id) !== before) session.notice(`${taskFileName(id)} was saved from an old copy that undid a repair; repaired it again`);
    return;
  }
  const findings = looked.findings;
  const file = taskFileName(id);
  const corrupt = findings.some((f) => f.kind === 'invalid' && f.file === file && f.line !== undefined);
  if (corrupt && !final) {
    // Maybe an editor half-way through a write: look again once the file has settled.
    if (state) state.heldCorrupt = true;
    return;
  }
  if (state) state.heldCorrupt = false;
  const invalid = findings.filter((f): f is InvalidFinding => f.kind === 'invalid');
  await session.problems.reportNew(invalid, [file]);
  // Logged before the propagation it causes, so the log reads in causal order.
  await recordHandCompletions(
    session,
    newlyCompleted(() => before, current, [id]),
  );
  await applyFindings(session, findings);
  const task = store.peekTask(id);
  if (task) noticeAdopted(session, await store.adoptUntrackedClaims({ tasks: [task], byId: new Map([[id, task]]), problems: [] }));
  // A closed task changed by hand: a board whose history is folded looks at it only now and then (core open-view.ts);
  // an exact pass of the board index lets `tasks list` see it at once.
  if (before !== undefined && isClosed(before)) refreshIndexSoon(session);
}

const refreshing = new WeakSet<WatchSession>();

/** One exact pass of the board index after a burst of such changes, not one a file. */
function refreshIndexSoon(session: WatchSession): void {
  if (refreshing.has(session)) return;
  refreshing.add(session);
  setImmediate(() => {
    refreshing.delete(session);
    if (session.closed) return;
    try {
      session.store.loadBoard();
    } catch {
      // only a cache: the next reader makes the pass
    }
  });
}

/**
 * The look once a file has settled: file events of a burst can be merged or
 * dropped, so look once more if the file moved on since it was read (or its
 * parse failure was held back).
 */
export async function checkSettledFile(session: WatchSession, id: number, file: PendingFile): Promise<void> {
  session.changes.forgetIfDone(id, file);
  if (file.heldCorrupt || file.seen !== fileSignature(session.store.taskPath(id))) await checkChangedFile(session, id, true);
}
