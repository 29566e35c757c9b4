/**
 * A worker with nothing to claim (worker.ts, review-worker.ts): whether
 * anything in progress can still make work for it (else it stops, drained),
 * and a wait for the board's event log to move.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { boardLookup, isClosed, isReady, readLastSeq, readLeases, searchPath, type Task, type TaskStore } from '@dotasks/core/internal';

/**
 * The in-progress tasks worth waiting for, or undefined when waiting is
 * pointless: nothing in progress can still make a task ready for `owner`.
 * A task in progress counts when it (transitively) blocks a pending task
 * this owner could take, or when its claim can lapse (a lease that expires
 * or a process that can die) so that the task itself comes back.
 */
export function waitingOn(store: TaskStore, owner: string, excluded: ReadonlySet<number> = new Set()): number[] | undefined {
  const snapshot = store.loadBoard();
  const { tasks } = snapshot;
  // Knows the open children: a parent waiting for them is not a task to wait for.
  const lookup = boardLookup(snapshot);
  const wanted = (t: Task) => t.status === 'pending' && (t.owner === '' || t.owner === owner) && !excluded.has(t.id);
  const leases = new Map(readLeases(store).map((l) => [l.task, l]));
  const inProgress = tasks.filter((t) => t.status === 'in_progress');
  const useful: number[] = [];
  for (const task of inProgress) {
    const lease = leases.get(task.id);
    // (Not one this worker left to others: its coming back is of no use here.)
    if (task.owner !== owner && lease && (lease.expiresAt !== null || lease.pid !== undefined) && !excluded.has(task.id)) {
      useful.push(task.id);
      continue;
    }
    // Does finishing it lead, through open tasks, to a pending task we could take?
    const path = searchPath(
      task.id,
      (id) => {
        const t = lookup(id);
        return t !== undefined && wanted(t);
      },
      {
        frontier: 'stack',
        next: (id) => {
          const t = lookup(id);
          return t && !isClosed(t.status) ? t.blocks : [];
        },
      },
    );
    if (path) useful.push(task.id);
  }
  // A ready task we did not get (a lost race) is also worth another look.
  const readyLeft = tasks.some((t) => wanted(t) && isReady(t, lookup, owner));
  if (useful.length === 0 && !readyLeft) return undefined;
  return useful;
}

/** Sleeps until the event log moves past `seq`, at most about a second (leases also lapse by time). */
export async function waitForChange(eventsFile: string, seq: number, pollMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + Math.max(1000, pollMs);
  while (Date.now() < deadline && !signal?.aborted) {
    try {
      await sleep(pollMs / 2 + Math.random() * pollMs, undefined, { signal });
    } catch {
      return; // aborted
    }
    if (readLastSeq(eventsFile) !== seq) return;
  }
}
