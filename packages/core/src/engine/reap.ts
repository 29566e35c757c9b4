// Claims that ended without their owner: reaping expired or orphaned leases,
// dropping records left behind, adopting tasks in progress that have none;
// TaskStore (store.ts) and the watcher call these.
import { CorruptTaskError } from '../errors.js';
import { inReview, type Task } from '../format/format.js';
import { createLease, leaseExpiry, listLeases, readLease, type Lease } from '../runtime/leases.js';
import type { BoardFiles } from './board-files.js';
import { loadBoardSnapshot } from './board-index.js';
import type { ActorOptions, BoardSnapshot, ReapedTask } from './store-types.js';

/** Releases every task whose lease expired or whose process is gone. */
export async function reap(board: BoardFiles, options: ActorOptions & { dryRun?: boolean; now?: number } = {}): Promise<ReapedTask[]> {
  const out: ReapedTask[] = [];
  for (const lease of listLeases(board.runtimeDir)) {
    const reason = leaseExpiry(lease, options.now);
    if (!reason) continue;
    const task = board.peekTask(lease.task);
    if (!task || task.status !== 'in_progress' || task.owner !== lease.owner) {
      // A record left behind by a claim that ended: remove it under the task's lock.
      if (!options.dryRun) await dropStaleLease(board, lease);
      continue;
    }
    if (!options.dryRun) {
      const reaped = await reapOne(board, lease, reason, options, options.now);
      if (!reaped) continue;
    }
    out.push({ task: lease.task, owner: lease.owner, reason, lease });
  }
  return out;
}

async function reapOne(board: BoardFiles, lease: Lease, reason: string, options: ActorOptions, now?: number): Promise<boolean> {
  const result = await board.transact({ tasks: [lease.task] }, (tx) => {
    // Re-check under the lock: a heartbeat may have renewed it meanwhile.
    const fresh = tx.readLease(lease.task);
    const task = tx.edit(lease.task);
    if (!fresh || fresh.claimedAt !== lease.claimedAt || !leaseExpiry(fresh, now) || task.status !== 'in_progress' || task.owner !== lease.owner) return false;
    tx.refreshIndexOnCommit();
    task.status = 'pending';
    task.owner = '';
    tx.put(task);
    tx.dropLease(lease.task);
    tx.event({ type: 'reaped', task: lease.task, owner: options.actor, previousOwner: lease.owner, reason });
    return true;
  });
  return result.value;
}

/** Removes a claim record whose task is no longer held by its owner (checked under the task's lock). */
export async function dropStaleLease(board: BoardFiles, lease: Lease): Promise<boolean> {
  const result = await board.transact({ tasks: [lease.task] }, (tx) => {
    const fresh = tx.readLease(lease.task);
    if (!fresh || fresh.claimedAt !== lease.claimedAt || fresh.owner !== lease.owner) return false;
    const task = tx.tryRead(lease.task);
    if (task && task.status === 'in_progress' && task.owner === fresh.owner) return false;
    tx.dropLease(lease.task);
    return true;
  });
  return result.value;
}

/**
 * Writes a claim record (without expiry) for every task that is in progress
 * with an owner but has none, e.g. set by hand or pulled through git, so the
 * single-in-progress rule sees it. Each under its task's lock. Returns the
 * adopted ids.
 */
export async function adoptUntrackedClaims(board: BoardFiles, snapshot?: BoardSnapshot): Promise<number[]> {
  const adopted: number[] = [];
  const held = (task: Task | undefined): task is Task => !!task && task.status === 'in_progress' && task.owner !== '' && !inReview(task);
  const untracked = (task: Task | undefined, lease: Lease | undefined): task is Task => held(task) && (!lease || lease.owner !== task.owner);
  for (const seen of (snapshot ?? loadBoardSnapshot(board.dir)).tasks) {
    // Only a task someone holds can lack its record: the others' records are not read (a board's history is most of it).
    if (!held(seen) || !untracked(seen, readLease(board.runtimeDir, seen.id))) continue;
    // Under the task's lock a claim in flight has either written its record already or not yet changed the file: look again.
    const result = await board.transact({ tasks: [seen.id] }, (tx) => {
      let task: Task | undefined;
      try {
        task = tx.tryRead(seen.id);
      } catch (error) {
        if (error instanceof CorruptTaskError) return false;
        throw error;
      }
      if (!untracked(task, tx.readLease(seen.id))) return false;
      tx.putLease({ ...createLease(task.id, task.owner, null, board.config.leaseSeconds), adopted: true });
      return true;
    });
    if (result.value) adopted.push(seen.id);
  }
  return adopted;
}
