/**
 * One sync (syncBoard): the sync lock, then fetch-merge-push rounds until
 * the remote takes the push. What each step does is in its own file: the
 * look at the remote (remote-look.ts), the merge (merge-facts.ts before the
 * board lock, board-merge.ts under it), the push (round-push.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { TasksError } from '../errors.js';
import { ensureFolder } from '../fs/fsio.js';
import { withLock } from '../fs/locks.js';
import type { TaskStore } from '../store.js';
import { gitPastLocks, type GitLockPolicy } from './git-locks.js';
import { syncRefs } from './board-branch.js';
import { mergeBoard, noOutcome, type MergePlan } from './board-merge.js';
import { readSeenClaims, writeSeenClaims } from './published-claims.js';
import { StaleLook, lookBeforeMerge } from './merge-facts.js';
import { renameBranch } from '../git/renumber.js';
import { checkBoardHome } from './board-home.js';
import { lookAtRemote, planRound } from './remote-look.js';
import { pushRound, pushingRef } from './round-push.js';
import { lookAtBoard, nothingCameIn, nothingToDo, recordSync, refsKey } from './quiet-sync.js';
import { processSyncMemory, type SyncMemory } from './sync-memory.js';
import { keepPacked } from './pack-upkeep.js';
import type { RoundPlan, SyncContext, SyncOptions, SyncReport } from './sync-types.js';

/** Serializes the syncs of one clone, in the board's runtime folder. */
export const SYNC_LOCK = 'sync.lock';

/**
 * Brings the remote's board in and this board out, until the push is
 * accepted (see the module comment).
 */
export async function syncBoard(store: TaskStore, options: SyncOptions = {}): Promise<SyncReport> {
  const cwd = store.dir;
  const remote = options.remote ?? store.config.syncRemote;
  const branch = options.branch ?? store.config.syncBranch;
  const memory = options.memory ?? processSyncMemory;
  memory.checkRemote(cwd, remote, branch);
  const report: SyncReport = {
    remote,
    branch,
    ...noOutcome(),
    notes: [],
    warnings: [],
    rounds: 0,
  };
  // One truth per board (docs/decisions.md, "Where a synced board lives"): refuses a board whose tasks git also tracks.
  report.notes.push(...checkBoardHome(store, { remote, branch }, { adopting: options.home !== undefined, checked: memory.homeChecked }));
  // A fresh clone, or a `.runtime/` someone removed: the folder the sync lock lives in is made here.
  ensureFolder(store.runtimeDir);
  // One sync at a time per clone (two workers of one clone share its refs); taken before any board lock.
  return withLock(join(store.runtimeDir, SYNC_LOCK), store.lockOptions, () => rounds(syncContext(store, options, memory, report)));
}

/** What the rounds of one sync share: where it syncs, its refs, and git run past its own locks. */
function syncContext(store: TaskStore, options: SyncOptions, memory: SyncMemory, report: SyncReport): SyncContext {
  const cwd = store.dir;
  const { remote, branch } = report;
  const refs = { ...syncRefs(remote, branch), pushing: pushingRef(remote, branch) };
  const { top, gitDir } = memory.repositoryOf(cwd);
  const policy: GitLockPolicy = {
    top,
    gitDir,
    ownRefs: [refs.tracking, refs.synced, refs.rewritten, refs.pushing, `refs/remotes/${remote}/${branch}`],
    timeoutMs: store.lockOptions.timeoutMs,
    onNote: (note) => report.notes.push(note),
  };
  return {
    store,
    cwd,
    options,
    memory,
    report,
    remote,
    branch,
    where: `${remote}/${branch}`,
    refs,
    run: (args, o) => gitPastLocks(cwd, args, policy, { input: o?.input }),
  };
}

/**
 * Fetch, merge, push, until the remote takes the push: each round looks at
 * the remote (remote-look.ts), merges under the board lock, and pushes
 * (round-push.ts); a refused push waits a little and starts the next.
 */
async function rounds(ctx: SyncContext): Promise<SyncReport> {
  const { options, report } = ctx;
  const maxRounds = options.maxRounds ?? 50;
  /** Commits the next push must also have as parents, so every clone's last synced commit stays an ancestor of the branch. */
  let keep: string[] = [];
  let pushRefused = false;
  for (let round = 1; round <= maxRounds; round++) {
    report.rounds = round;
    const state = await lookAtRemote(ctx, { trustPushing: !pushRefused });
    // Nothing came in and nothing changed here since the last sync (quiet-sync.ts): no merge, no push.
    const idle = nothingToDo(ctx, state);
    if (idle.quiet) {
      report.head = state.head!.id;
      ctx.memory.synced(ctx.store.dir);
      return report;
    }
    // A claim's look that finds nothing new on the branch: no merge, no board lock (quiet-sync.ts).
    if (nothingCameIn(ctx, state)) {
      report.head = state.head!.id;
      ctx.memory.synced(ctx.store.dir);
      await keepPacked(ctx.cwd, ctx.run);
      return report;
    }
    const look = idle.look ?? lookAtBoard(ctx.store);
    const plan = planRound(ctx, state);
    if (options.republish && plan.parents.length > 1) keep = plan.parents.slice(1);
    const merged = await mergeRound(ctx, plan);
    if (!merged) continue; // the board changed between the look before the lock and the lock: look again
    if ((await pushRound(ctx, state, plan, merged, keep)) === 'done') {
      recordSync(ctx.store, ctx.where, report.head, look, merged, { refs: refsKey(state.refClaims), keptOut: !!options.keepOut });
      ctx.memory.synced(ctx.store.dir);
      // What this sync pushed and fetched, packed once there is enough of it (pack-upkeep.ts).
      await keepPacked(ctx.cwd, ctx.run);
      return report;
    }
    pushRefused = true;
    if (options.onePush) {
      report.deferred = true;
      return report;
    }
    await backOff(round);
  }
  throw new TasksError('E_GIT', `sync gave up after ${maxRounds} rounds: other clones kept pushing to ${ctx.where} first; run it again`, {
    remote: ctx.remote,
    branch: ctx.branch,
  });
}

/**
 * A round's merge: git before the board lock (merge-facts.ts), the merge
 * under it with none (docs/decisions.md, "No git inside a board
 * transaction"), the moved tasks' branches after it; then the seen claims
 * and the report. Undefined: the look before the lock was stale.
 */
async function mergeRound(ctx: SyncContext, plan: RoundPlan): Promise<MergePlan | undefined> {
  const { store, cwd, report } = ctx;
  const seen = readSeenClaims(store.runtimeDir, ctx.where);
  const now = Date.now();
  const facts = lookBeforeMerge(store, cwd, plan.sides);
  let merged: MergePlan;
  try {
    merged = (await store.transact({ board: true }, (tx) => mergeBoard(store, tx, { ...plan.sides, seen, now }, facts))).value;
  } catch (error) {
    if (error instanceof StaleLook) return undefined;
    throw error;
  }
  renameMovedBranches(cwd, merged, report);
  if (!sameSeen(seen, merged.seen)) writeSeenClaims(store.runtimeDir, ctx.where, merged.seen);
  mergeInto(report, merged);
  return merged;
}

/**
 * Another clone pushed first: before fetching what it pushed and merging
 * again, a short random wait that grows with the rounds, so clones that keep
 * colliding spread out instead of colliding again.
 */
function backOff(round: number): Promise<void> {
  return sleep(Math.random() * Math.min(500, 10 * 2 ** Math.min(round, 6)));
}

/**
 * Renames the branches of the tasks the merge moved to a free id, after its
 * transaction: the task files already name the new branch. A branch that
 * cannot be renamed now (taken or removed since the look) is said.
 */
function renameMovedBranches(cwd: string, merged: MergePlan, report: SyncReport): void {
  for (const { to, branch } of merged.renumbered)
    if (branch && !renameBranch(cwd, branch.from, branch.to))
      report.warnings.push(
        `could not rename the branch ${branch.from} of #${to} (moved to a free id) to ${branch.to}: rename it by hand (git branch -m ${branch.from} ${branch.to})`,
      );
}

function sameSeen(a: Map<number, { sha: string; since: number }>, b: Map<number, { sha: string; since: number }>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, s] of a) if (b.get(id)?.sha !== s.sha || b.get(id)?.since !== s.since) return false;
  return true;
}

/** Folds a round's plan into the report (later rounds only add what they newly brought in). */
function mergeInto(report: SyncReport, plan: MergePlan): void {
  const add = <T>(list: T[], items: T[], key: (x: T) => string) => {
    const seen = new Set(list.map(key));
    for (const item of items) if (!seen.has(key(item))) list.push(item);
  };
  add(report.incoming, plan.incoming, (c) => `${c.id}:${c.what}`);
  add(report.renumbered, plan.renumbered, (r) => `${r.from}`);
  add(report.conflicts, plan.conflicts, (c) => `${c.id}:${c.field}`);
  add(report.withdrawn, plan.withdrawn, (w) => `${w.id}`);
  add(report.reaped, plan.reaped, (r) => `${r.id}`);
  // What goes out and what was skipped are the last round's (earlier rounds' pushes were refused).
  report.outgoing = plan.outgoing;
  report.skipped = plan.skipped;
}
