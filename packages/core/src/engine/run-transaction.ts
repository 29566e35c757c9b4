// Runs a transaction (transaction.ts) to its end: takes its locks
// (tx-locks.ts), runs the change, commits it, and starts over when the change
// asks for more locks or a lock race is seen; finishes a change whose locks
// were taken over after its commit point; and makes the one exact pass over
// the board a change asked for (Transaction.refreshIndexOnCommit), before its
// locks go for a change of parent (Transaction.movesParents).
import { basename } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { TasksError } from '../errors.js';
import { readTxEvents, type TaskEvent } from '../events/events.js';
import type { Task } from '../format/format.js';
import { pausePoint } from '../fs/fsio.js';
import { acquireLock, releaseLocks, type AcquiredLock } from '../fs/locks.js';
import { noteClosedWritten } from './index-write-back.js';
import { loadOpenSnapshot } from './open-view.js';
import { listJournals, readJournal } from './journal.js';
import { CommittedChange, ConcurrentChange, LockLost, Transaction } from './transaction.js';
import { GATE, NeedLocks, mergeScope, recoverBoardJournal, recoverTaskJournals, takeLocks, takeTaskCover, type TxHost, type TxScope } from './tx-locks.js';

const MAX_ATTEMPTS = 8;

/** How runTransaction takes its locks. */
export interface TxOptions {
  /** Wait for no task lock (claimNext's first pass): a held one fails with E_LOCKED at once. */
  noWaitTasks?: boolean;
}

/**
 * Runs `fn` in a transaction holding the locks of `scope` and commits what
 * it staged. Starts over when `fn` asks for more locks (NeedLocks) or a lock
 * race is detected (ConcurrentChange). A change to more than one task always
 * holds the board lock.
 */
export async function runTransaction<T>(
  host: TxHost,
  initial: Partial<TxScope>,
  fn: (tx: Transaction) => T | Promise<T>,
  options: TxOptions = {},
): Promise<{ value: T; written: Task[]; events: TaskEvent[] }> {
  let scope = mergeScope({ owners: [], board: false, tasks: [] }, initial);
  let value: T | undefined;
  let txId: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const taken: AcquiredLock[] = [];
    try {
      const taskOptions = options.noWaitTasks && attempt === 1 ? { ...host.lockOptions, timeoutMs: 0 } : host.lockOptions;
      const { ownerLocks, boardLock, cover } = await takeLocks(host, scope, taskOptions, taken);
      pausePoint('locked');
      value = undefined;
      const tx = new Transaction(host, scope, cover, boardLock, ownerLocks, async (id) => {
        const t = await acquireLock(host.taskLockPath(id), host.lockOptions, GATE);
        taken.push(t);
        return t.lock;
      });
      txId = tx.id;
      value = await fn(tx);
      const { written, events } = await tx.commit();
      // A closed task's file changed (a note, a merged field): the index's open view looks at it again (open-view.ts).
      noteClosedWrittenQuiet(host.dir, written);
      // A parent's children are looked for in the index (parents.ts): a new parent is there before anyone can act on it.
      const refreshed = written.length > 0 && tx.movesParents();
      if (refreshed) refreshBoardIndex(host.dir);
      await releaseLocks(taken);
      if (!refreshed && tx.refreshesIndex && written.length > 0) refreshBoardIndex(host.dir);
      return { value, written, events };
    } catch (error) {
      await releaseLocks(taken).catch(() => undefined);
      if (error instanceof NeedLocks && attempt < MAX_ATTEMPTS * 4) {
        scope = mergeScope(scope, error.scope);
        continue;
      }
      if ((error instanceof ConcurrentChange || error instanceof LockLost) && attempt < MAX_ATTEMPTS) {
        await yieldToLoop();
        continue;
      }
      if (error instanceof LockLost) throw error.lost;
      if (error instanceof CommittedChange) return finishCommitted(host, scope, error, value!, txId!);
      if (error instanceof ConcurrentChange || error instanceof NeedLocks)
        throw new TasksError('E_LOCKED', 'another process kept changing the same task files; run the command again');
      throw error;
    }
  }
}

/** noteClosedWritten, whose failure costs only a cache. */
function noteClosedWrittenQuiet(dir: string, written: readonly Task[]): void {
  try {
    noteClosedWritten(dir, written);
  } catch {
    // the sweep or the next exact pass sees it
  }
}

/**
 * A pass over the board that rewrites its index (see refreshIndexOnCommit):
 * exact, or on a board whose history is folded the read of the open work
 * that claims trust as one (open-view.ts). Only a cache is at stake: a
 * failure is ignored.
 */
function refreshBoardIndex(dir: string): void {
  try {
    loadOpenSnapshot(dir, { verify: true });
  } catch {
    // the next reader rebuilds it
  }
}

/**
 * Our change is committed but our locks were taken over before we finished
 * it (we stalled). Taking the same locks again finishes it: whoever holds
 * them first rolls every journal forward, so once we hold them the change is
 * on disk, and its events are in the log under our transaction's id.
 */
async function finishCommitted<T>(
  host: TxHost,
  scope: TxScope,
  committed: CommittedChange,
  value: T,
  tx: string,
): Promise<{ value: T; written: Task[]; events: TaskEvent[] }> {
  const taken: AcquiredLock[] = [];
  try {
    for (const owner of scope.owners) taken.push(await acquireLock(host.ownerLockPath(owner), host.lockOptions));
    if (scope.board) {
      const t = await acquireLock(host.boardLockPath(), host.lockOptions, GATE);
      taken.push(t);
      await recoverBoardJournal(host, t.lock);
    }
    // (the board lock, when taken, is the last of `taken` here)
    const boardLock = scope.board ? taken.at(-1)!.lock : undefined;
    const cover = await takeTaskCover(host, scope.tasks, boardLock, host.lockOptions, taken);
    await recoverTaskJournals(host, scope, cover);
  } finally {
    await releaseLocks(taken).catch(() => undefined);
  }
  if (listJournals(host.runtimeDir).includes(basename(committed.journalPath)) && readJournal(host.runtimeDir, basename(committed.journalPath))?.tx === tx)
    throw new TasksError(
      'E_COMPROMISED',
      `lost a lock while writing (the process stalled); the change is committed and is finished from ${committed.journalPath} by the next command that takes its locks: do not run it again`,
      { journal: committed.journalPath },
      { cause: committed.lost },
    );
  return { value, written: committed.written, events: readTxEvents(host.runtimeDir, tx) };
}
