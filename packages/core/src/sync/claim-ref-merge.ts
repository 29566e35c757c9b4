/**
 * What a sync's merge does with the claim refs it fetched (claim-refs.ts),
 * inside its board transaction and without git:
 *
 * - a claim of this clone whose task another clone holds the ref of is
 *   withdrawn here (the ref decided; `released`, as a lost race);
 * - this clone's claims get their refs: created for a claim that has none
 *   (a plain `tasks claim` synced later), moved for a renewal;
 * - refs of this clone whose task it no longer holds (released, reaped,
 *   withdrawn) are deleted; the ref of a closed task becomes a marker
 *   (`closed: true`), deleted a minute later (CLOSED_MARKER_MS);
 * - another clone's ref of a task the board branch does not have in progress
 *   yet (its holder's sync has not caught the branch up) runs out as a
 *   published claim does: unchanged for its lease plus 2 s, by this clone's
 *   clock; the ref is then deleted, and the task is free again.
 *
 * Each of these goes out with the round's push, atomically with the board
 * branch, each ref under a lease on the commit this round saw.
 */
import { inReview, isClosed, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import type { Transaction } from '../engine/transaction.js';
import type { Lease } from '../runtime/leases.js';
import type { TaskStore } from '../store.js';
import { cloneIdOf, type RefClaim, type RefClaimRecord, type RefClaims } from './claim-refs.js';
import { claimRanOut, claimText, publishedClaimOf } from './published-claims.js';
import type { MergePlan, MergeSides } from './merge-types.js';

/**
 * How long a closed task's ref stays as a marker (ms): longer than a claim
 * takes from its look at the remote to its push, by far. A clone that
 * looked before the task was claimed and pushes after it was finished finds
 * the marker and loses the race; once it is gone, every clone's look shows
 * the task closed.
 */
export const CLOSED_MARKER_MS = 60_000;

/** The merged copy of a task, as the round's push will have it. */
function mergedTask(plan: MergePlan, id: number): Task | undefined {
  const name = taskFileName(id);
  const text = plan.files.get(name);
  return text === undefined ? undefined : parseTask(text, name);
}

/**
 * Whether a claim ref stands for its task's published claim: it is a claim
 * (not a closed task's marker), and the branch has the task in progress by
 * its owner or by nobody yet (the remote's copy, not the merged one). A branch that has it in progress by someone
 * else got an older clone's claim first, which wins (docs/decisions.md,
 * "Claims across machines by ref"): the branch's own claim is timed, and
 * settleClaimRefs deletes the ref.
 */
export function refCounts(onBranch: BranchTask, ref: RefClaim): boolean {
  if (ref.claim.closed) return false;
  const task = onBranch(ref.id);
  return !(task?.status === 'in_progress' && task.owner !== ref.claim.owner);
}

/** The remote's copy of a task, as fetched (undefined: none, or unreadable). */
export type BranchTask = (id: number) => Task | undefined;

/** Claims of this clone whose task's ref another clone holds: withdrawn (see the module comment). */
export function withdrawForRefs(tx: Transaction, plan: MergePlan, leases: Map<number, Lease>, refClaims: RefClaims | undefined, onBranch: BranchTask): void {
  if (!refClaims?.size) return;
  const lost: { lease: Lease; winner: string }[] = [];
  for (const [id, lease] of leases) {
    const ref = refClaims.get(id);
    // A reviewer's claim has no ref; a record this clone only adopted mirrors the other machine's claim.
    if (!ref || ref.mine || !refCounts(onBranch, ref) || lease.review || lease.adopted) continue;
    const task = mergedTask(plan, id);
    if (task?.status === 'in_progress' && task.owner === lease.owner && !inReview(task)) lost.push({ lease, winner: ref.claim.owner });
  }
  // Their locks at once (board-merge.ts, writeMerged), then each task back to pending.
  tx.need({ tasks: lost.map((l) => l.lease.task) });
  for (const { lease, winner } of lost) {
    const id = lease.task;
    const released = tx.edit(id);
    released.status = 'pending';
    released.owner = '';
    delete released.activeForm;
    tx.put(released);
    tx.dropLease(id);
    leases.delete(id);
    plan.files.set(taskFileName(id), serializeTask(released));
    plan.withdrawn.push({ id, owner: lease.owner, winner });
    const out = plan.outgoing.find((c) => c.id === id);
    if (out) out.what = 'released';
    tx.event({
      type: 'released',
      task: id,
      owner: lease.owner,
      previousOwner: lease.owner,
      reason: `claimed on the remote by ${winner || 'another machine'} first`,
    });
  }
}

/** The claim refs the round's push moves, and the refs that ran out (see the module comment). */
export function settleClaimRefs(store: TaskStore, tx: Transaction, plan: MergePlan, leases: Map<number, Lease>, sides: MergeSides, onBranch: BranchTask): void {
  if (!sides.refClaims) return;
  const clone = cloneIdOf(store.runtimeDir);
  const held = new Set<number>();
  for (const [id, lease] of leases) {
    if (lease.review || lease.adopted) continue;
    const task = mergedTask(plan, id);
    if (task?.status !== 'in_progress' || task.owner !== lease.owner || inReview(task)) continue;
    held.add(id);
    const record: RefClaimRecord = { ...publishedClaimOf(lease), clone };
    const text = claimText(record);
    const ref = sides.refClaims.get(id);
    if (!ref) plan.claimRefs.push({ id, expected: '', claim: { text, record } });
    else if (ref.mine && ref.text !== text) plan.claimRefs.push({ id, expected: ref.commit, claim: { text, record } });
  }
  const reaped = new Set(plan.reaped.map((r) => r.id));
  for (const [id, ref] of sides.refClaims) {
    if (held.has(id)) continue;
    const task = mergedTask(plan, id);
    const closed = task !== undefined && isClosed(task.status);
    if (ref.claim.closed) {
      // A marker goes once the task it marks has been closed for CLOSED_MARKER_MS on this clone's clock (or was reopened).
      const before = sides.seen.get(id);
      const since = before?.sha === ref.commit ? before.since : sides.now;
      plan.seen.set(id, { sha: ref.commit, since });
      if (!closed || (!sides.noReap && sides.now - since > CLOSED_MARKER_MS)) {
        plan.seen.delete(id);
        plan.claimRefs.push({ id, expected: ref.commit });
      }
      continue;
    }
    if (closed) {
      const record: RefClaimRecord = { ...ref.claim, task: id, closed: true };
      plan.claimRefs.push({ id, expected: ref.commit, claim: { text: claimText(record), record } });
      continue;
    }
    if (ref.mine || reaped.has(id) || !refCounts(onBranch, ref)) {
      plan.claimRefs.push({ id, expected: ref.commit });
      continue;
    }
    // In progress on the branch: publishClaims (board-merge.ts) timed it. Unknown here, or waiting for review: left alone.
    if (task?.status !== 'pending' || inReview(task)) continue;
    const { expired, seenSince } = claimRanOut(id, { claim: ref.claim, sha: ref.commit }, sides.seen, plan.seen, sides.now, store.config.leaseSeconds);
    if (!expired || sides.noReap) continue;
    plan.seen.delete(id);
    plan.claimRefs.push({ id, expected: ref.commit });
    const { owner, machine, expiresAt } = ref.claim;
    tx.event({
      type: 'reaped',
      task: id,
      previousOwner: owner,
      reason: `its claim on ${machine || 'another machine'} was not renewed for a whole lease (seen since ${new Date(seenSince).toISOString()})`,
    });
    plan.reaped.push({ id, owner, machine, expiredAt: expiresAt, seenSince: new Date(seenSince).toISOString() });
  }
}
