/**
 * One sync round's merge of this board with the remote's (docs/protocol.md,
 * "A sync"), inside one board transaction: file by file, three ways, with
 * the rules a shared board needs from a remote that people and other tools
 * can also write to:
 *
 * - a task file never gets a conflict marker: a field both sides changed
 *   differently takes one side's value (the remote's: it was published
 *   first) and is reported;
 * - a closed task is never reopened by a merge, and a task file absent on
 *   one side is never removed from the other (deletions travel only as
 *   tombstones, `status: deleted`, that a command wrote);
 * - an entry that cannot be read, on either side, is skipped with a finding:
 *   the other side's copy is left as it is, and every other entry syncs;
 * - a task this clone created under an id the remote gave to another task
 *   moves to a free id, with its claim record, its worktree's branch, the
 *   edges of this clone's changes and the `#N` mentions of its own text.
 */
import { TasksError } from '../errors.js';
import { idFromFileName, inReview, isClosed, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { Copy, describeChange, good, keepClosed, problemOf, remoteCopy } from './merge-copies.js';
import { HIGHWATERMARK_FILE, parseHighWaterMark, type Transaction } from '../engine/transaction.js';
import { listLeases, type Lease } from '../runtime/leases.js';
import type { TaskStore } from '../store.js';
import { mergeTaskTextResolved } from '../git/merge.js';
import { blobId } from './git-objects.js';
import { taskTextReader } from './file-texts.js';
import { StaleLook, type MergeFacts } from './merge-facts.js';
import { recordMoves } from '../runtime/moved-tasks.js';
import { moveEdges, moveMentions, taskBranch } from '../git/renumber.js';
import { claimRanOut, claimText, parseClaims, publishedClaimOf } from './published-claims.js';
import { noOutcome, type MergePlan, type MergeSides, type Renumbered } from './merge-types.js';
import { refCounts, settleClaimRefs, withdrawForRefs } from './claim-ref-merge.js';

export {
  noOutcome,
  type MergeOutcome,
  type MergePlan,
  type MergeSides,
  type ReapedClaim,
  type Renumbered,
  type SkippedEntry,
  type SyncChange,
  type WithdrawnClaim,
} from './merge-types.js';

/** One merge in progress: what its steps below read and add to. */
interface MergeRun {
  store: TaskStore;
  tx: Transaction;
  sides: MergeSides;
  plan: MergePlan;
  /** Every task file name of the three sides (and the new ids of moved tasks, once moved). */
  names: Set<string>;
  /** This board's files as they are on disk: under the task's lock once this transaction holds it. */
  disk: Map<string, string | undefined>;
  /** This side of the merge, after the moves. */
  ours: Map<string, Copy | undefined>;
  theirs: Map<string, Copy | undefined>;
  base: Map<string, Copy | undefined>;
  /** Blob texts by id, from before the lock (merge-facts.ts) and this board's files. */
  blobs: Map<string, string>;
  /** This clone's claim records, by task (moved with their tasks). */
  leases: Map<number, Lease>;
}

/** A merged file to write to this board. */
interface MergedWrite {
  id: number;
  merged: string;
  after: Task;
  /** It came from the remote (false: a task of this clone that moved to a new id). */
  came: boolean;
}

const highest = (ids: Iterable<number>) => [...ids].reduce((a, b) => Math.max(a, b), 0);
const remoteEntry = (sides: MergeSides, name: string) => `${sides.where}:${sides.pathOf?.(name) ?? name}`;

/**
 * Merges the board with the remote inside one board transaction: writes what
 * came in, moves clashing new tasks to free ids, releases claims that ran
 * out, and returns the merged board for the push. It runs no git: what it
 * needs of git was read before the lock (merge-facts.ts), and the branches of
 * moved tasks are renamed after it (`renumbered[].branch`).
 */
export async function mergeBoard(store: TaskStore, tx: Transaction, sides: MergeSides, facts: MergeFacts): Promise<MergePlan> {
  const run = openMerge(store, tx, sides, facts);
  const { plan, names } = run;
  const remote = remoteMark(run);
  const localHwm = tx.readHighWaterMark();
  let next = Math.max(localHwm, remote.mark, highest([...names].map((n) => idFromFileName(n)!))) + 1;
  const moves = new Map<number, number>();
  for (const id of findClashes(run)) moves.set(id, next++);
  if (moves.size) {
    await moveClashes(run, moves, facts.branches);
    // Before the move is committed, so no reader sees the task gone from its old id without it (a record of a move
    // that does not commit points at a task nobody holds, and is ignored).
    recordMoves(store.runtimeDir, plan.renumbered, sides.where);
  }
  await writeMerged(run, mergeFiles(run));
  // A claim ref comes before the branch's copy of a claim: it is newer, and it is what decided who holds the task.
  const onBranch = (id: number) => {
    const copy = run.theirs.get(taskFileName(id));
    return good(copy) ? copy.task : undefined;
  };
  withdrawForRefs(tx, plan, run.leases, sides.refClaims, onBranch);
  const published = parseClaims(sides.claimEntries, run.blobs);
  for (const [id, ref] of sides.refClaims ?? []) if (refCounts(onBranch, ref)) published.set(id, { claim: ref.claim, sha: ref.commit, text: ref.text });
  publishClaims(store, tx, plan, run.leases, published, sides);
  settleClaimRefs(store, tx, plan, run.leases, sides, onBranch);
  for (const { from, to } of plan.renumbered) tx.event({ type: 'renumbered', task: to, from, reason: `#${from} was taken on the remote` });
  for (const change of plan.incoming) tx.event({ type: 'synced', task: change.id, what: change.what });
  settleMark(run, Math.max(next - 1, localHwm), localHwm, remote.ids);
  plan.incoming.sort((a, b) => a.id - b.id);
  plan.outgoing.sort((a, b) => a.id - b.id);
  return plan;
}

/** The names of the merge, this board's copies as they are on disk, and the remote's and the base's copies. */
function openMerge(store: TaskStore, tx: Transaction, sides: MergeSides, facts: MergeFacts): MergeRun {
  const run: MergeRun = {
    store,
    tx,
    sides,
    plan: { ...noOutcome(), files: new Map(), claims: new Map(), seen: new Map(), claimRefs: [] },
    names: new Set(),
    disk: new Map(),
    ours: new Map(),
    theirs: new Map(),
    base: new Map(),
    // The blobs were read before the lock: the remote's and the base's (and what this clone last synced, for the
    // mentions of a moved task), the claims, the mark.
    blobs: new Map(facts.blobs),
    leases: new Map(),
  };
  for (const tree of [sides.base, sides.theirs]) for (const name of tree.keys()) if (idFromFileName(name) !== undefined) run.names.add(name);
  for (const id of store.listIds()) run.names.add(taskFileName(id));
  readOurs(run);
  // A remote entry equal to this board's file was not read: its text is the file's.
  for (const o of run.ours.values()) if (o?.sha && !run.blobs.has(o.sha)) run.blobs.set(o.sha, o.text);
  for (const name of run.names) {
    run.theirs.set(name, remoteCopy(sides.theirs.get(name), name, run.blobs));
    run.base.set(name, remoteCopy(sides.base.get(name), name, run.blobs));
  }
  run.leases = new Map(listLeases(store.runtimeDir).map((l) => [l.task, l]));
  return run;
}

/** This board's files as they are on disk, under the task's lock once the transaction holds it (a locked read is what a write is decided on). */
function readOurs({ store, tx, names, disk, ours }: MergeRun): void {
  const read = taskTextReader(store);
  for (const name of names) {
    const id = idFromFileName(name)!;
    let text: string | undefined;
    try {
      text = tx.holds(id) ? tx.readText(id) : read(id);
    } catch (error) {
      if (!(error instanceof TasksError) || error.code !== 'E_CORRUPT') throw error;
      ours.set(name, Copy.unreadable(problemOf(error)));
      continue;
    }
    disk.set(name, text);
    if (text !== undefined) ours.set(name, new Copy(text, blobId(text), () => store.parseTaskText(id, text)));
  }
}

/**
 * The remote's high-water mark, which counts only as far as the tasks the
 * branch holds: a mark above every one of them (9007199254740991 pushed
 * once) would stop id allocation in every clone, so it is refused on the way in.
 */
function remoteMark({ sides, blobs, plan }: MergeRun): { mark: number; ids: number[] } {
  const ids = [...sides.theirs.keys()].map(idFromFileName).filter((id): id is number => id !== undefined);
  const entry = sides.theirs.get(HIGHWATERMARK_FILE);
  if (!entry) return { mark: 0, ids };
  const where = remoteEntry(sides, HIGHWATERMARK_FILE);
  let mark = 0;
  try {
    mark = parseHighWaterMark(entry.type === 'blob' ? blobs.get(entry.sha) : undefined, where);
  } catch (error) {
    plan.skipped.push({ entry: where, side: 'remote', problem: `${(error as Error).message.split(';')[0]}; ignored` });
  }
  const top = highest(ids);
  if (mark > top) {
    plan.skipped.push({
      entry: where,
      side: 'remote',
      problem: `says ${mark}, above every task on the branch (the highest is #${top}), where no id may follow it; taken as ${top}`,
    });
    mark = top;
  }
  return { mark, ids };
}

/** Clashes: tasks this clone created (not in what it last synced) under an id the remote has another task under, in id order. */
function findClashes({ names, ours, theirs, sides }: MergeRun): number[] {
  const clashes: number[] = [];
  for (const name of names) {
    const o = ours.get(name);
    const t = theirs.get(name);
    if (o && t && o.sha !== t.sha && !sides.synced.has(name) && good(o) && good(t)) clashes.push(idFromFileName(name)!);
  }
  return clashes.sort((a, b) => a - b);
}

/** Merges every task file three ways; returns what this board's files become. */
function mergeFiles(run: MergeRun): MergedWrite[] {
  const writes: MergedWrite[] = [];
  for (const name of run.names) {
    const write = mergeFile(run, name);
    if (write) writes.push(write);
  }
  return writes;
}

/** One task file's merge: into the plan (what goes out, what was skipped), and the write it needs here, if any. */
function mergeFile({ store, sides, plan, disk, ours, theirs, base }: MergeRun, name: string): MergedWrite | undefined {
  const id = idFromFileName(name)!;
  const oCopy = ours.get(name);
  const tCopy = theirs.get(name);
  // The same bytes on both sides: nothing to merge, nothing to judge (a file bad on both is doctor's business).
  if (oCopy && tCopy && oCopy.sha !== '' && oCopy.sha === tCopy.sha) {
    plan.files.set(name, oCopy.text);
    return oCopy.text !== disk.get(name) ? { id, merged: oCopy.text, after: oCopy.task, came: false } : undefined;
  }
  // An unreadable base is no base: both sides count as changed.
  const bCopy = base.get(name);
  const b = good(bCopy) ? bCopy : undefined;
  if (oCopy?.bad !== undefined) {
    plan.skipped.push({
      entry: store.taskPath(id),
      id,
      side: 'local',
      problem: `${oCopy.bad}; it was neither updated from the remote nor sent out (repair it: tasks doctor)`,
    });
    return undefined;
  }
  const o = oCopy;
  if (tCopy?.bad !== undefined) {
    const what = sides.republish
      ? o
        ? "replaced by this board's copy"
        : 'left out of the branch (its history keeps it)'
      : `this board's #${id} stays as it is and does not go out (tasks sync --republish replaces it)`;
    plan.skipped.push({ entry: remoteEntry(sides, name), id, side: 'remote', problem: `${tCopy.bad}; ${what}` });
    if (sides.republish) plan.files.set(name, o ? o.text : undefined);
    return undefined;
  }
  const t = tCopy;
  if (!o && !t) return undefined;
  let merged: { text: string; task: Task };
  if (!o || !t)
    merged = (o ?? t)!; // absent on one side: never a removal (deletions travel as tombstones)
  else if (t.sha === bCopy?.sha) merged = o;
  else if (o.sha === bCopy?.sha) merged = t;
  else {
    const result = mergeTaskTextResolved(b?.text ?? '', o.text, t.text, sides.prefer, store.taskPath(id));
    merged = { text: result.text, task: store.parseTaskText(id, result.text) };
    for (const c of result.conflicts) plan.conflicts.push({ id, ...c });
  }
  if (o && t) {
    const task = { ...merged.task };
    if (keepClosed(task, o.task, t.task)) merged = { text: serializeTask(task), task };
  }
  plan.files.set(name, merged.text);
  if (blobId(merged.text) !== t?.sha) plan.outgoing.push({ id, what: describeChange(b?.task, merged.task) });
  return merged.text !== disk.get(name) ? { id, merged: merged.text, after: merged.task, came: merged.text !== o?.text } : undefined;
}

/** Writes the merged files here, and says what came in; a claim of this clone the merged task no longer bears is withdrawn. */
async function writeMerged({ tx, plan, disk, ours, leases }: MergeRun, writes: MergedWrite[]): Promise<void> {
  // Every lock the writes need, asked for at once: a transaction that asks one lock at a time starts over
  // once per lock, and a sync that brings in a hundred changes would give up.
  tx.need({ tasks: writes.filter((w) => disk.get(taskFileName(w.id)) !== undefined).map((w) => w.id) });
  for (const { id, merged, after, came } of writes) {
    if (!tx.holds(id)) await tx.lockNewTask(id);
    tx.putText(id, merged);
    if (!came) continue; // a task of this clone moved to a new id
    const o = ours.get(taskFileName(id));
    plan.incoming.push({ id, what: describeChange(good(o) ? o.task : undefined, after) });
    withdrawClaim(tx, plan, leases, id, after);
  }
}

/**
 * A claim of this clone that the merged task no longer bears: withdrawn when
 * another holder won it (and perhaps finished it already) or the remote
 * released it; dropped quietly when its own owner closed it on another
 * machine, or when this clone had only adopted it.
 */
function withdrawClaim(tx: Transaction, plan: MergePlan, leases: Map<number, Lease>, id: number, after: Task): void {
  const lease = leases.get(id);
  if (!lease || (after.status === 'in_progress' && after.owner === lease.owner)) return;
  // A reviewer's claim stays this clone's while the task still waits for review (review claims are not published).
  if (lease.review && inReview(after)) return;
  tx.dropLease(id);
  leases.delete(id);
  if ((isClosed(after.status) && after.owner === lease.owner) || lease.adopted) return;
  const winner = after.status === 'pending' ? '' : after.owner;
  plan.withdrawn.push({ id, owner: lease.owner, winner });
  tx.event({
    type: 'released',
    task: id,
    owner: lease.owner,
    previousOwner: lease.owner,
    reason: winner ? `claimed on the remote by ${winner} first` : 'released on the remote',
  });
}

/** Raises this board's mark to the ids handed out; out, the mark goes only as far as the tasks the branch will hold (a clone may still have a damaged one). */
function settleMark({ tx, plan }: MergeRun, hwm: number, localHwm: number, remoteIds: number[]): void {
  if (hwm > localHwm) tx.setHighWaterMark(hwm);
  const pushed = [...plan.files].filter(([, text]) => text !== undefined).map(([name]) => idFromFileName(name)!);
  plan.files.set(HIGHWATERMARK_FILE, `${Math.min(hwm, highest([...remoteIds, ...pushed]))}\n`);
}

/** This clone's last synced version of a task (for the mentions of a moved task's text). */
function syncedTask({ sides, blobs }: MergeRun, name: string): Task | undefined {
  const s = remoteCopy(sides.synced.get(name), name, blobs);
  return good(s) ? s.task : undefined;
}

/**
 * Moves this clone's clashing tasks to their new ids (docs/protocol.md, "Ids
 * across machines"): the task with its claim record and its worktree's
 * branch; in this clone's changes (the files that differ from what it last
 * synced, the only places that can name its task) the edges, and the `#N`
 * mentions of the text this clone wrote. `branches`: the local branches,
 * looked up before the lock (undefined: not looked up, no clash was expected).
 */
async function moveClashes(run: MergeRun, moves: Map<number, number>, branches: Set<string> | undefined): Promise<void> {
  const { store, tx, ours, names, leases, plan, sides } = run;
  const pattern = (n: number) => taskBranch(store.config.branchPattern, n);
  for (const [name, o] of [...ours]) {
    if (!good(o) || o.sha === sides.synced.get(name)?.sha) continue;
    const id = idFromFileName(name)!;
    const task: Task = { ...o.task, blockedBy: [...o.task.blockedBy], blocks: [...o.task.blocks] };
    const to = moves.get(id);
    let changed = moveEdges(task, moves);
    changed = moveMentions(task, to === undefined ? syncedTask(run, name) : undefined, moves) || changed;
    if (to === undefined) {
      if (changed) ours.set(name, Copy.of(task));
      continue;
    }
    task.id = to;
    const renumbered: Renumbered = { from: id, to };
    if (task.status === 'in_progress' && task.owner) renumbered.owner = task.owner;
    const branch = typeof task.metadata?.branch === 'string' ? task.metadata.branch : undefined;
    if (branch !== undefined && branch === pattern(id) && branchMoves(branches, branch, pattern(to))) {
      task.metadata = { ...task.metadata, branch: pattern(to) };
      renumbered.branch = { from: branch, to: pattern(to) };
    }
    plan.renumbered.push(renumbered);
    ours.set(taskFileName(to), Copy.of(task));
    names.add(taskFileName(to));
    ours.delete(name); // the id now belongs to the remote's task
    // The claim goes with the task: its record moves to the new id.
    const lease = tx.readLease(id);
    if (lease) {
      await tx.lockNewTask(to);
      tx.dropLease(id);
      tx.putLease({ ...lease, task: to });
      leases.delete(id);
      leases.set(to, { ...lease, task: to });
    }
  }
}

/**
 * Whether a moved task's branch goes with it (renamed after the merge, by
 * sync.ts): it exists and its new name is free, or it was renamed already.
 */
function branchMoves(branches: Set<string> | undefined, from: string, to: string): boolean {
  if (!branches) throw new StaleLook(); // a clash the look before the lock did not see coming
  return branches.has(from) ? !branches.has(to) : branches.has(to);
}

/**
 * The claims to publish: this clone's claim records of tasks it still holds,
 * and the remote's for the rest of the tasks in progress. A published claim
 * that ran out for this clone (published-claims.ts) is reaped here: the task
 * goes back to pending, as `tasks reap` does with a local one, in this
 * board's file and in what goes out.
 */
function publishClaims(
  store: TaskStore,
  tx: Transaction,
  plan: MergePlan,
  leases: Map<number, Lease>,
  theirsClaims: ReturnType<typeof parseClaims>,
  sides: MergeSides,
): void {
  const expired: { id: number; owner: string; machine: string; since: number; expiresAt: string | null }[] = [];
  for (const id of new Set([...leases.keys(), ...theirsClaims.keys()])) {
    const name = taskFileName(id);
    const text = plan.files.get(name);
    if (text === undefined) continue;
    const task = parseTask(text, name);
    // A task waiting for review is claimed by nobody: a claim published for it before it entered review is not reaped.
    if (task.status !== 'in_progress' || inReview(task)) continue;
    const mine = leases.get(id);
    const theirs = theirsClaims.get(id);
    const published = theirs && theirs.claim.owner === task.owner ? theirs : undefined;
    // A record of this clone's own claim goes out; one it only adopted (the watcher found the task in progress,
    // brought in by a sync) gives way to the claim another machine published for it.
    if (mine && mine.owner === task.owner && !(mine.adopted && published)) {
      plan.claims.set(name, claimText(publishedClaimOf(mine)));
      continue;
    }
    if (!published) continue;
    const { expired: ranOut, seenSince } = claimRanOut(id, published, sides.seen, plan.seen, sides.now, store.config.leaseSeconds);
    if (ranOut && !sides.noReap)
      expired.push({ id, owner: published.claim.owner, machine: published.claim.machine, since: seenSince, expiresAt: published.claim.expiresAt });
    else plan.claims.set(name, published.text);
  }
  // Their locks at once (see mergeBoard), then each task back to pending.
  tx.need({ tasks: expired.map((c) => c.id) });
  for (const claim of expired) {
    const released = tx.edit(claim.id);
    released.status = 'pending';
    released.owner = '';
    delete released.activeForm;
    tx.put(released);
    if (leases.has(claim.id)) tx.dropLease(claim.id); // a record this clone only adopted
    plan.files.set(taskFileName(claim.id), serializeTask(released));
    plan.seen.delete(claim.id);
    tx.event({
      type: 'reaped',
      task: claim.id,
      previousOwner: claim.owner,
      reason: `its lease on ${claim.machine} was not renewed for a whole lease (seen since ${new Date(claim.since).toISOString()})`,
    });
    plan.reaped.push({ id: claim.id, owner: claim.owner, machine: claim.machine, expiredAt: claim.expiresAt, seenSince: new Date(claim.since).toISOString() });
    const out = plan.outgoing.find((c) => c.id === claim.id);
    if (out) out.what = 'reaped';
    else plan.outgoing.push({ id: claim.id, what: 'reaped' });
  }
}
