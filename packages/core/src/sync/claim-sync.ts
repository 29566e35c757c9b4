/**
 * `tasks claim --sync` (and `worker --sync`): a claim that counts only once
 * the other machines can see it on the remote.
 *
 * By ref (the default, docs/protocol.md, "Claims across machines"): the
 * claim is made here, then its ref is created on the remote by a push that
 * fails if the ref exists (claim-refs.ts); the one whose push created it
 * holds the task, the others release it here and try the next task. The
 * board branch gets the claim with a sync after it (`publish: 'now'`, the
 * one-shot command) or with a later one (`'later'`, the worker, whose
 * outcomes go out batched), and nothing waits for that push.
 *
 * Through the board branch (`via: 'branch'`, how dotasks claimed before
 * claim refs): sync, claim here, sync again; the board after that sync says
 * who won.
 */
import { ClaimError } from '../errors.js';
import type { ClaimOptions, ClaimResult, TaskStore } from '../store.js';
import { boardLookup } from '../graph/hierarchy.js';
import { readyOrder } from '../graph/ready-order.js';
import { idFromFileName } from '../format/format.js';
import { syncBoard } from './sync-rounds.js';
import { processSyncMemory } from './sync-memory.js';
import { gitAsync } from './git-locks.js';
import { git, out } from './git-objects.js';
import { syncRefs } from './board-branch.js';
import { claimText, leaseSecondsOf, publishedClaimOf } from './published-claims.js';
import { listLeases } from '../runtime/leases.js';
import { readHighWaterMarkQuiet } from '../engine/board-index.js';
import { cloneIdOf, pushClaimRefs, readRefClaims, remoteClaimCommit, writeClaimCommits, type RefClaims } from './claim-refs.js';
import type { SyncOptions, SyncReport } from './sync-types.js';

/** claimWithSync does not sync before claiming when this process synced the board this recently (ms). */
const FRESH_MS = 1000;

/** With `publish: 'later'`, what this process changed goes out with the first claim at least this long after its last push (ms). */
export const OUTCOMES_EVERY_MS = 10_000;

/** A spread claim picks among at most this many equally ranked ready tasks. */
const SPREAD = 64;

/** A process that lost a race this recently spreads from its first try (ms): the fleet is claiming together. */
const CONTENDED_MS = 60_000;

/** When a claim of this process last lost a race, by board. */
const lastLost = new Map<string, number>();

export interface SyncClaimOptions extends ClaimOptions {
  sync?: SyncOptions;
  /** How machines agree on who holds a task: its claim ref (default), or the board branch alone (before claim refs). */
  via?: 'ref' | 'branch';
  /**
   * By ref: when the board branch gets the claim. 'now' (default): a sync
   * right after it. 'later': with the first claim of this process at least
   * OUTCOMES_EVERY_MS after its last push (a worker: its completions go out
   * batched), or the caller's own sync.
   */
  publish?: 'now' | 'later';
}

/** When each board was last pushed by a claim of this process (publish: 'later'). */
const lastPushed = new Map<string, number>();

/**
 * A claim that counts only once it is on the remote (`tasks claim --sync`).
 * `claim ID` fails as a lost race (`already_claimed`) when another machine
 * holds the task, `--next` tries the next ready task. When the claim cannot
 * be published (the remote is down), it is released here again and the error
 * says why: nobody works a task the other machines cannot see is taken.
 */
export function claimWithSync(store: TaskStore, id: number | undefined, options: SyncClaimOptions): Promise<ClaimResult & { sync: SyncReport }> {
  return (options.via ?? 'ref') === 'branch' ? claimOnBranch(store, id, options) : claimByRef(store, id, options);
}

/** By ref (see the module comment). */
async function claimByRef(store: TaskStore, id: number | undefined, options: SyncClaimOptions): Promise<ClaimResult & { sync: SyncReport }> {
  const sync = options.sync ?? {};
  const remote = sync.remote ?? store.config.syncRemote;
  const branch = sync.branch ?? store.config.syncBranch;
  const later = options.publish === 'later';
  const memory = sync.memory ?? processSyncMemory;
  const clone = cloneIdOf(store.runtimeDir);
  // What the remote holds, brought in; this clone's own changes go out only when they are due (or right after the
  // claim). A due push is tried once: refused (another clone pushed first), the outcomes wait for the next claim.
  const due = later && Date.now() - (lastPushed.get(store.dir) ?? 0) >= OUTCOMES_EVERY_MS;
  let report = await syncBoard(store, due ? { ...sync, onePush: true } : { ...sync, keepOut: true });
  if (due && !report.deferred) lastPushed.set(store.dir, Date.now());
  // The claim refs and the branch's mark as that sync's look found them (no git to read them again).
  const seen = memory.lastSeen(store.dir, `${report.remote}/${report.branch}`);
  // An outcome must reach the branch before its claim ref runs out for the other machines: such a push is not
  // tried once. And an id is provisional until it is on the remote: a task created here goes out first (it may
  // move to a free id).
  const urgent = later && (report.deferred || !due) && outcomeUrgent(store, seen?.refClaims ?? new Map());
  if (urgent || hasProvisional(store, report, seen?.branchMark)) {
    report = await syncBoard(store, sync);
    lastPushed.set(store.dir, Date.now());
    id = report.renumbered.find((r) => r.from === id)?.to ?? id;
  }
  const refs = memory.lastSeen(store.dir, `${report.remote}/${report.branch}`)?.refClaims ?? readRefClaims(store.dir, remote, branch, clone);
  // Every ref but a live claim of this clone's: another's claim, or the marker of a closed task.
  const taken = new Set([...refs.values()].filter((r) => !r.mine || r.claim.closed).map((r) => r.id));
  if (id !== undefined && taken.has(id)) throw lostTo(id, refs.get(id)!.claim.owner);
  const lost = new Set<number>();
  const run = (args: string[]) => gitAsync(store.dir, args);
  for (let attempt = 0; attempt < 20; attempt++) {
    const result =
      id !== undefined
        ? await store.claimTask(id, options)
        : await store.claimNext({ ...options, exclude: [...(options.exclude ?? []), ...taken, ...lost, ...spread(store, options.owner, taken, lost)] });
    const mine = refs.get(result.task.id);
    if (!(result.alreadyHeld && mine?.mine)) {
      const claim = { ...publishedClaimOf(result.lease), clone };
      const [commit] = writeClaimCommits(store.dir, [{ id: result.task.id, text: claimText(claim), claim }]);
      let pushed: 'accepted' | 'refused' | 'taken';
      try {
        pushed = await pushClaimRefs(run, remote, branch, [{ id: result.task.id, to: commit, expected: '' }]);
        // Refused by the remote itself: another clone's ref, or this clone's own (a sync of another process here
        // published the claim between the remote's listing and the push). `taken` needs no look: the listing had
        // another commit there (this clone's own would have been up to date).
        if (pushed === 'refused' && (await remoteClaimCommit(run, remote, branch, result.task.id)) === commit) pushed = 'accepted';
      } catch (error) {
        if (!result.alreadyHeld) await releaseHere(store, result.task.id, options.owner, 'the claim could not be published to the remote');
        throw error;
      }
      if (pushed !== 'accepted') {
        await releaseHere(store, result.task.id, options.owner, 'claimed on the remote by another machine first');
        lastLost.set(store.dir, Date.now());
        if (id !== undefined) throw lostTo(id, '');
        lost.add(result.task.id);
        continue;
      }
    }
    if (!later) {
      // The claim stands (its ref is on the remote); this sync puts it on the board branch for every other look.
      report = await syncBoard(store, sync).catch((error: Error) => ({
        ...report,
        warnings: [...report.warnings, `claimed; the board branch gets it with the next sync (${error.message})`],
      }));
    }
    // A clone that knows only the branch may have put its claim there first, and that sync withdrew this one.
    const now = store.getTask(result.task.id);
    if (now.status === 'in_progress' && now.owner === options.owner) return { ...result, task: now, sync: report };
    if (id !== undefined) throw lostTo(id, now.owner);
    lost.add(result.task.id);
  }
  throw new ClaimError('nothing_ready', 'every ready task was claimed on another machine first; try again', {});
}

/**
 * Whether a task this clone finished (or let go) here still has its live
 * claim ref on the remote, unrenewed for a third of its lease: the other
 * machines would reap it, and work it again, before a batched push got its
 * outcome to the branch. The age is read on this clone's clock, which wrote it.
 */
function outcomeUrgent(store: TaskStore, refs: RefClaims): boolean {
  const held = new Set(listLeases(store.runtimeDir).map((l) => l.task));
  for (const ref of refs.values()) {
    if (!ref.mine || ref.claim.closed || held.has(ref.id)) continue;
    const seconds = leaseSecondsOf(ref.claim);
    if (seconds === null) continue;
    const age = Date.now() - Date.parse(ref.claim.renewedAt ?? ref.claim.claimedAt);
    if (!(age < ((seconds ?? store.config.leaseSeconds) * 1000) / 3)) return true;
  }
  return false;
}

function lostTo(id: number, owner: string): ClaimError {
  return new ClaimError('already_claimed', `#${id} was claimed on another machine by ${owner || 'someone'} first`, { task: id, owner });
}

/** Releases a claim made here that the remote did not take. */
async function releaseHere(store: TaskStore, id: number, owner: string, reason: string): Promise<void> {
  await store.releaseTask(id, { actor: owner, heldBy: owner, reason }).catch(() => undefined);
}

/**
 * Whether this board has a task the board branch does not (yet): a
 * provisional id. The ids this clone hands out go above the high-water mark
 * it last merged, which the branch has: with its own mark not above the
 * branch's, none is provisional, and no git is asked.
 */
function hasProvisional(store: TaskStore, report: SyncReport, branchMark: number | undefined): boolean {
  const mark = readHighWaterMarkQuiet(store.dir);
  if (branchMark !== undefined && mark !== null && mark <= branchMark) return false;
  const synced = syncRefs(report.remote, report.branch).synced;
  const r = git(store.dir, ['ls-tree', '-r', '--full-tree', '--name-only', synced], { allowFail: true });
  const published = new Set(
    r.status === 0
      ? out(r)
          .split('\n')
          .map((path) => idFromFileName(path.slice(path.lastIndexOf('/') + 1)))
      : [],
  );
  return store.listIds().some((n) => !published.has(n));
}

/**
 * After a lost race (other machines are claiming the same tasks right now),
 * the ready tasks of the best rank to leave out of the next try: all before
 * one picked at random among the first SPREAD of them, so clones that claim
 * together spread over the tasks instead of racing for the first again
 * (each lost race costs its clone a push). Also for the first try of a
 * claim within CONTENDED_MS of a lost race of this process: a worker of a
 * busy fleet would otherwise lose a race to start nearly every claim. None
 * otherwise: a claim takes the first ready task, as a claim here does.
 */
function spread(store: TaskStore, owner: string, taken: Set<number>, lost: Set<number>): number[] {
  if (lost.size === 0 && !(Date.now() - (lastLost.get(store.dir) ?? -Infinity) < CONTENDED_MS)) return [];
  // The open work is all a ready order needs (a big board's history is not read for it).
  const board = store.loadOpenWork();
  const ranks = readyOrder(board.tasks, boardLookup(board), owner).filter((r) => !taken.has(r.id) && !lost.has(r.id));
  const best = ranks[0];
  if (!best) return [];
  const tier = ranks.filter((r) => r.priority === best.priority && r.unblocks === best.unblocks).slice(0, SPREAD);
  return tier.slice(0, Math.floor(Math.random() * tier.length)).map((r) => r.id);
}

/** Through the board branch (see the module comment). */
async function claimOnBranch(store: TaskStore, id: number | undefined, options: SyncClaimOptions): Promise<ClaimResult & { sync: SyncReport }> {
  const sync = { ...options.sync, claimRefs: false };
  // See the other machines' claims first, unless this process just did (a worker's sync after its last task).
  if (!(options.sync?.memory ?? processSyncMemory).syncedWithin(store.dir, FRESH_MS)) await syncBoard(store, sync);
  for (let attempt = 0; attempt < 20; attempt++) {
    const result = id !== undefined ? await store.claimTask(id, options) : await store.claimNext(options);
    let report: SyncReport;
    try {
      report = await syncBoard(store, sync);
    } catch (error) {
      if (!result.alreadyHeld) await releaseHere(store, result.task.id, options.owner, 'the claim could not be published to the remote');
      throw error;
    }
    // The claimed task may have moved to a free id in that sync (it was created here, and the remote had its id).
    const claimed = report.renumbered.find((r) => r.from === result.task.id)?.to ?? result.task.id;
    // What the board says after the sync decides, not this sync's report: another process of this
    // clone may have synced in between and withdrawn the claim already.
    const now = store.getTask(claimed);
    if (now.status === 'in_progress' && now.owner === options.owner) return { ...result, task: now, sync: report };
    if (id !== undefined) throw lostTo(id, now.owner);
  }
  throw new ClaimError('nothing_ready', 'every ready task was claimed on another machine first; try again', {});
}
