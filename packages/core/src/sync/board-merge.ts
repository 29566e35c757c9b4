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
import { MAX_TASK_FILE_BYTES, idFromFileName, isClosed, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { HIGHWATERMARK_FILE, parseHighWaterMark, type Transaction } from '../engine/transaction.js';
import { listLeases, type Lease } from '../runtime/leases.js';
import type { TaskStore } from '../store.js';
import { mergeTaskTextResolved, type MergeConflict } from '../git/merge.js';
import { blobId, readBlobs, type TreeEntry } from './git-objects.js';
import { recordMoves } from '../runtime/moved-tasks.js';
import { moveEdges, moveMentions, renameBranch, taskBranch } from '../git/renumber.js';
import { claimRanOut, claimText, parseClaims, publishedClaimOf, type SeenClaims } from './published-claims.js';

/** One task that came in or went out. */
export interface SyncChange {
  id: number;
  /** What happened, for people: `claimed by agent-1`, `completed`, `created`, `updated` … */
  what: string;
}

/** An entry that was not synced, and why. */
export interface SkippedEntry {
  /** Where it is: `origin/tasks:task_9.json` for the remote's, the file's path for this board's. */
  entry: string;
  id?: number;
  side: 'remote' | 'local';
  problem: string;
}

/** A task of this clone moved to a free id. */
export interface Renumbered {
  from: number;
  to: number;
  /** Who held it in progress when it moved. */
  owner?: string;
  /** Its worktree's branch, renamed with it. */
  branch?: { from: string; to: string };
}

/** A claim this clone held that the remote gives to someone else, or released. */
export interface WithdrawnClaim {
  id: number;
  owner: string;
  /** Who holds it now ('' when the remote released it). */
  winner: string;
}

/** A task released because another machine's claim was not renewed for a whole lease, as this clone saw it. */
export interface ReapedClaim {
  id: number;
  owner: string;
  machine: string;
  /** The claim's expiry as its holder published it, by the holder's clock (for people; expiry is not decided by it). */
  expiredAt: string | null;
  /** Since when this clone saw the claim unrenewed, by its own clock. */
  seenSince: string;
}

/** What the two sides and the base are, for one round. */
export interface MergeSides {
  /** The tree merged against: what both sides last agreed on. */
  base: Map<string, TreeEntry>;
  /** The last tree this clone synced: a task not in it was created here (for renumbering). */
  synced: Map<string, TreeEntry>;
  theirs: Map<string, TreeEntry>;
  /** The entries of the remote's claims folder. */
  claimEntries: Map<string, TreeEntry>;
  /** How the remote is named in findings: `origin/tasks`. */
  where: string;
  /** Which side a field both changed differently takes. */
  prefer: 'ours' | 'theirs';
  /** `tasks sync --republish`: an unreadable remote entry is replaced by this board's copy (or left out). */
  republish: boolean;
  /** The other machines' claims this clone saw before this round (published-claims.ts). */
  seen: SeenClaims;
  now: number;
}

/** What a merge did, as a sync reports it (SyncReport carries these fields). */
export interface MergeOutcome {
  /** Changes from the remote written to this board. */
  incoming: SyncChange[];
  /** Changes of this board that are now on the remote. */
  outgoing: SyncChange[];
  /** Tasks of this clone moved to a free id because the remote had given theirs to another task. */
  renumbered: Renumbered[];
  /** Fields both sides changed differently; the remote's value was kept (this board's with --republish). */
  conflicts: (MergeConflict & { id: number })[];
  /** Claims this clone held that the remote gives to someone else, or released: withdrawn here. */
  withdrawn: WithdrawnClaim[];
  /** Tasks released because another machine's claim was not renewed for a whole lease, as this clone saw it. */
  reaped: ReapedClaim[];
  /** Entries that were not synced because they cannot be read (on the remote or here); everything else was. */
  skipped: SkippedEntry[];
}

/** An outcome with nothing in it yet. */
export function noOutcome(): MergeOutcome {
  return { incoming: [], outgoing: [], renumbered: [], conflicts: [], withdrawn: [], reaped: [], skipped: [] };
}

/** One round's merge: what the report says about it, the merged board and the claims to publish. */
export interface MergePlan extends MergeOutcome {
  /** Entries of the pushed tree: name → text, or undefined to leave the name out; a name not here keeps the remote's entry. */
  files: Map<string, string | undefined>;
  /** The claims to publish (`claims/task_N.json` → text). */
  claims: Map<string, string>;
  /** The seen claims this round leaves. */
  seen: SeenClaims;
}

/**
 * One side's copy of a task file: its bytes, and the task they hold or why
 * they cannot be read, judged when first asked: a sync of a board where
 * little changed parses only what changed.
 */
class Copy {
  private judged?: { task: Task } | { bad: string };

  constructor(
    readonly text: string,
    readonly sha: string,
    private readonly parse: () => Task,
  ) {}

  /** A copy that could not even be read as text (a folder under a task's name, a file over the limit). */
  static unreadable(problem: string): Copy {
    const copy = new Copy('', '', () => {
      throw new Error(problem);
    });
    copy.judged = { bad: problem };
    return copy;
  }

  /** A copy of a task this sync made (moved, or its edges moved). */
  static of(task: Task): Copy {
    const text = serializeTask(task);
    return new Copy(text, blobId(text), () => task);
  }

  private judge(): { task: Task } | { bad: string } {
    if (!this.judged) {
      try {
        this.judged = { task: this.parse() };
      } catch (error) {
        if (!(error instanceof TasksError) || error.code !== 'E_CORRUPT') throw error;
        this.judged = { bad: problemOf(error) };
      }
    }
    return this.judged;
  }

  get bad(): string | undefined {
    const judged = this.judge();
    return 'bad' in judged ? judged.bad : undefined;
  }

  get task(): Task {
    const judged = this.judge();
    if ('bad' in judged) throw new Error(`internal: the task of an unreadable copy (${judged.bad})`);
    return judged.task;
  }
}
const good = (c: Copy | undefined): c is Copy => c !== undefined && c.bad === undefined;

/** What changed from `before` to `after`, in a few words. */
export function describeChange(before: Task | undefined, after: Task | undefined): string {
  if (!after) return 'removed';
  if (!before) return after.status === 'in_progress' && after.owner ? `created, in progress by ${after.owner}` : 'created';
  if (before.status !== after.status) {
    if (after.status === 'in_progress') return after.owner ? `claimed by ${after.owner}` : 'started';
    if (after.status === 'pending' && before.status === 'in_progress') return 'released';
    return after.status;
  }
  if (before.owner !== after.owner) return after.owner ? `assigned to ${after.owner}` : 'unassigned';
  return 'updated';
}

/** The problem of a text that does not parse as task `name`, without the file's path (it is not a file here). */
function problemOf(error: unknown): string {
  const e = error as { details?: { line?: number; column?: number; problem?: string }; message?: string };
  if (e.details?.problem) return `line ${e.details.line}, column ${e.details.column}: ${e.details.problem}`;
  return e.message ?? String(error);
}

/** A remote tree entry as a copy of a task file (judged when asked). */
function remoteCopy(entry: TreeEntry | undefined, name: string, blobs: Map<string, string>): Copy | undefined {
  if (!entry) return undefined;
  if (entry.type === 'tree') return Copy.unreadable('is a folder, not a file');
  if (entry.type !== 'blob' || entry.mode === '120000') return Copy.unreadable(`is not a plain file (git mode ${entry.mode})`);
  const text = blobs.get(entry.sha);
  if (text === undefined) return Copy.unreadable('could not be read from git');
  if (Buffer.byteLength(text) > MAX_TASK_FILE_BYTES) return Copy.unreadable(`is over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task`);
  return new Copy(text, entry.sha, () => parseTask(text, name));
}

/**
 * A merged task must not be open when either side closed it: completed and
 * deleted are final (docs/protocol.md, "Life cycle"), whatever a rewritten or
 * hand-edited remote says.
 */
function keepClosed(merged: Task, ours: Task, theirs: Task): boolean {
  if (isClosed(merged.status)) return false;
  const closed = [ours, theirs].filter((t) => isClosed(t.status));
  if (closed.length === 0) return false;
  const final = closed.find((t) => t.status === 'deleted') ?? closed[0];
  merged.status = final.status;
  merged.owner = final.owner;
  delete merged.activeForm;
  return true;
}

/**
 * Merges the board with the remote inside one board transaction: writes what
 * came in, moves clashing new tasks to free ids, releases claims that ran
 * out, and returns the merged board for the push.
 */
export async function mergeBoard(store: TaskStore, tx: Transaction, cwd: string, sides: MergeSides): Promise<MergePlan> {
  const plan: MergePlan = { ...noOutcome(), files: new Map(), claims: new Map(), seen: new Map() };
  const names = new Set<string>();
  for (const tree of [sides.base, sides.theirs]) for (const name of tree.keys()) if (idFromFileName(name) !== undefined) names.add(name);
  for (const id of store.listIds()) names.add(taskFileName(id));

  // This board's files as they are on disk: under the task's lock once this transaction holds it (a locked read
  // is what a write is decided on). `ours` is this side of the merge, after the moves below.
  const disk = new Map<string, string | undefined>();
  const ours = new Map<string, Copy | undefined>();
  for (const name of names) {
    const id = idFromFileName(name)!;
    let text: string | undefined;
    try {
      text = tx.holds(id) ? tx.readText(id) : store.readTaskText(id);
    } catch (error) {
      if (!(error instanceof TasksError) || error.code !== 'E_CORRUPT') throw error;
      ours.set(name, Copy.unreadable(problemOf(error)));
      continue;
    }
    disk.set(name, text);
    if (text !== undefined) ours.set(name, new Copy(text, blobId(text), () => store.parseTaskText(id, text)));
  }

  // Blobs needed: the remote's and the base's where they differ from ours (and what this clone last synced, for
  // the mentions of a moved task), the claims, the mark.
  const needed: string[] = [];
  for (const name of names) {
    const oSha = ours.get(name)?.sha;
    for (const tree of [sides.base, sides.theirs, sides.synced]) {
      const entry = tree.get(name);
      if (entry?.type === 'blob' && entry.sha !== oSha) needed.push(entry.sha);
    }
  }
  const theirsHwm = sides.theirs.get(HIGHWATERMARK_FILE);
  if (theirsHwm?.type === 'blob') needed.push(theirsHwm.sha);
  for (const entry of sides.claimEntries.values()) if (entry.type === 'blob') needed.push(entry.sha);
  const blobs = readBlobs(cwd, needed);
  // A remote entry equal to this board's file was not read: its text is the file's.
  for (const o of ours.values()) if (o?.sha && !blobs.has(o.sha)) blobs.set(o.sha, o.text);
  const theirsClaims = parseClaims(sides.claimEntries, blobs);
  const where = (name: string) => `${sides.where}:${name}`;

  const theirs = new Map<string, Copy | undefined>();
  const base = new Map<string, Copy | undefined>();
  for (const name of names) {
    theirs.set(name, remoteCopy(sides.theirs.get(name), name, blobs));
    base.set(name, remoteCopy(sides.base.get(name), name, blobs));
  }
  const syncedTask = (name: string) => {
    const s = remoteCopy(sides.synced.get(name), name, blobs);
    return good(s) ? s.task : undefined;
  };

  // The remote's high-water mark counts only as far as the tasks the branch holds: a mark above every one of
  // them (9007199254740991 pushed once) would stop id allocation in every clone, so it is refused on the way in.
  const remoteIds = [...sides.theirs.keys()].map(idFromFileName).filter((id): id is number => id !== undefined);
  const highest = (ids: Iterable<number>) => [...ids].reduce((a, b) => Math.max(a, b), 0);
  const remoteTop = highest(remoteIds);
  let remoteHwm = 0;
  if (theirsHwm) {
    try {
      remoteHwm = parseHighWaterMark(theirsHwm.type === 'blob' ? blobs.get(theirsHwm.sha) : undefined, where(HIGHWATERMARK_FILE));
    } catch (error) {
      plan.skipped.push({ entry: where(HIGHWATERMARK_FILE), side: 'remote', problem: `${(error as Error).message.split(';')[0]}; ignored` });
    }
    if (remoteHwm > remoteTop) {
      plan.skipped.push({
        entry: where(HIGHWATERMARK_FILE),
        side: 'remote',
        problem: `says ${remoteHwm}, above every task on the branch (the highest is #${remoteTop}), where no id may follow it; taken as ${remoteTop}`,
      });
      remoteHwm = remoteTop;
    }
  }
  const localHwm = tx.readHighWaterMark();
  let next = Math.max(localHwm, remoteHwm, highest([...names].map((n) => idFromFileName(n)!))) + 1;

  // Clashes: a task this clone created (not in what it last synced) under an id the remote has another task under.
  const clashes: number[] = [];
  for (const name of names) {
    const o = ours.get(name);
    const t = theirs.get(name);
    if (o && t && o.sha !== t.sha && !sides.synced.has(name) && good(o) && good(t)) clashes.push(idFromFileName(name)!);
  }
  clashes.sort((a, b) => a - b);
  const moves = new Map<number, number>();
  for (const id of clashes) moves.set(id, next++);
  const leases = new Map(listLeases(store.runtimeDir).map((l) => [l.task, l]));
  if (moves.size) {
    await moveClashes(store, tx, cwd, { ours, names, moves, leases, plan, sides, syncedTask });
    // Before the move is committed, so no reader sees the task gone from its old id without it (a record of a move
    // that does not commit points at a task nobody holds, and is ignored).
    recordMoves(store.runtimeDir, plan.renumbered, sides.where);
  }

  const writes: { id: number; merged: string; after: Task; came: boolean }[] = [];
  for (const name of names) {
    const id = idFromFileName(name)!;
    const oCopy = ours.get(name);
    const tCopy = theirs.get(name);
    // The same bytes on both sides: nothing to merge, nothing to judge (a file bad on both is doctor's business).
    if (oCopy && tCopy && oCopy.sha !== '' && oCopy.sha === tCopy.sha) {
      plan.files.set(name, oCopy.text);
      if (oCopy.text !== disk.get(name)) writes.push({ id, merged: oCopy.text, after: oCopy.task, came: false });
      continue;
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
      continue;
    }
    const o = oCopy;
    if (tCopy?.bad !== undefined) {
      const what = sides.republish
        ? o
          ? "replaced by this board's copy"
          : 'left out of the branch (its history keeps it)'
        : `this board's #${id} stays as it is and does not go out (tasks sync --republish replaces it)`;
      plan.skipped.push({ entry: where(name), id, side: 'remote', problem: `${tCopy.bad}; ${what}` });
      if (sides.republish) plan.files.set(name, o ? o.text : undefined);
      continue;
    }
    const t = tCopy;
    if (!o && !t) continue;
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
    if (merged.text !== disk.get(name)) writes.push({ id, merged: merged.text, after: merged.task, came: merged.text !== o?.text });
    if (blobId(merged.text) !== t?.sha) plan.outgoing.push({ id, what: describeChange(b?.task, merged.task) });
  }

  // Every lock the writes need, asked for at once: a transaction that asks one lock at a time starts over
  // once per lock, and a sync that brings in a hundred changes would give up.
  tx.need({ tasks: writes.filter((w) => disk.get(taskFileName(w.id)) !== undefined).map((w) => w.id) });
  for (const { id, merged, after, came } of writes) {
    if (!tx.holds(id)) await tx.lockNewTask(id);
    tx.putText(id, merged);
    if (!came) continue; // a task of this clone moved to a new id
    const o = ours.get(taskFileName(id));
    plan.incoming.push({ id, what: describeChange(good(o) ? o.task : undefined, after) });
    // A claim of this clone that the merged task no longer bears: withdrawn when another holder won it (and
    // perhaps finished it already) or the remote released it; dropped quietly when its own owner closed it on
    // another machine, or when this clone had only adopted it.
    const lease = leases.get(id);
    if (!lease || (after.status === 'in_progress' && after.owner === lease.owner)) continue;
    tx.dropLease(id);
    leases.delete(id);
    if ((isClosed(after.status) && after.owner === lease.owner) || lease.adopted) continue;
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
  publishClaims(store, tx, plan, leases, theirsClaims, sides);
  for (const { from, to } of plan.renumbered) tx.event({ type: 'renumbered', task: to, from, reason: `#${from} was taken on the remote` });
  for (const change of plan.incoming) tx.event({ type: 'synced', task: change.id, what: change.what });

  const hwm = Math.max(next - 1, localHwm);
  if (hwm > localHwm) tx.setHighWaterMark(hwm);
  // Out, too, the mark goes only as far as the tasks the branch will hold (a clone may still have a damaged one).
  const pushed = [...plan.files].filter(([, text]) => text !== undefined).map(([name]) => idFromFileName(name)!);
  plan.files.set(HIGHWATERMARK_FILE, `${Math.min(hwm, highest([...remoteIds, ...pushed]))}\n`);
  plan.incoming.sort((a, b) => a.id - b.id);
  plan.outgoing.sort((a, b) => a.id - b.id);
  return plan;
}

/**
 * Moves this clone's clashing tasks to their new ids (docs/protocol.md, "Ids
 * across machines"): the task with its claim record and its worktree's
 * branch; in this clone's changes (the files that differ from what it last
 * synced, the only places that can name its task) the edges, and the `#N`
 * mentions of the text this clone wrote.
 */
async function moveClashes(
  store: TaskStore,
  tx: Transaction,
  cwd: string,
  state: {
    ours: Map<string, Copy | undefined>;
    names: Set<string>;
    moves: Map<number, number>;
    leases: Map<number, Lease>;
    plan: MergePlan;
    sides: MergeSides;
    syncedTask: (name: string) => Task | undefined;
  },
): Promise<void> {
  const { ours, names, moves, leases, plan, sides } = state;
  const pattern = (n: number) => taskBranch(store.config.branchPattern, n);
  for (const [name, o] of [...ours]) {
    if (!good(o) || o.sha === sides.synced.get(name)?.sha) continue;
    const id = idFromFileName(name)!;
    const task: Task = { ...o.task, blockedBy: [...o.task.blockedBy], blocks: [...o.task.blocks] };
    const to = moves.get(id);
    let changed = moveEdges(task, moves);
    changed = moveMentions(task, to === undefined ? state.syncedTask(name) : undefined, moves) || changed;
    if (to === undefined) {
      if (changed) ours.set(name, Copy.of(task));
      continue;
    }
    task.id = to;
    const renumbered: Renumbered = { from: id, to };
    if (task.status === 'in_progress' && task.owner) renumbered.owner = task.owner;
    const branch = typeof task.metadata?.branch === 'string' ? task.metadata.branch : undefined;
    if (branch !== undefined && branch === pattern(id) && renameBranch(cwd, branch, pattern(to))) {
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
    if (task.status !== 'in_progress') continue;
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
    if (ranOut) expired.push({ id, owner: published.claim.owner, machine: published.claim.machine, since: seenSince, expiresAt: published.claim.expiresAt });
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
