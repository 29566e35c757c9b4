/**
 * A round's way out: records what came in (the remote's head is the base of
 * whatever this clone changes next), writes the merged board's commit and
 * pushes it, with the claim refs the merge moved (claim-ref-merge.ts) in the
 * same atomic push. The push is the compare-and-swap: the remote refuses one
 * that is not a fast-forward or whose ref leases are stale, and the round
 * loop (sync.ts) starts the next round.
 */
import { TasksError } from '../errors.js';
import { MARKER, buildTree, commitMessage, markerText, pushCommit, writeCommit } from './board-branch.js';
import type { MergePlan } from './board-merge.js';
import type { PlannedClaimRef } from './merge-types.js';
import { pushClaimRefs, writeClaimCommits, type ClaimRefUpdate } from './claim-refs.js';
import type { RemoteState, RoundPlan, SyncContext } from './sync-types.js';

/** The commit a sync is pushing, recorded before the push: a sync killed after the remote took it finds it there. */
export const pushingRef = (remote: string, branch: string) => `refs/dotasks/pushing/${remote}/${branch}`;

/** The claim ref updates of a round, with the commits of the claims they create or renew written here. */
function claimRefUpdates(cwd: string, planned: PlannedClaimRef[]): ClaimRefUpdate[] {
  const writing = planned.filter((p) => p.claim);
  const commits = writeClaimCommits(
    cwd,
    writing.map((p) => ({ id: p.id, text: p.claim!.text, claim: p.claim!.record })),
  );
  const to = new Map(writing.map((p, i) => [p.id, commits[i]]));
  return planned.map((p) => ({ id: p.id, expected: p.expected, to: to.get(p.id) }));
}

/** Moves this clone's refs of the sync in one `git update-ref --stdin`. */
export async function updateRefs(ctx: SyncContext, lines: string[]): Promise<void> {
  const r = await ctx.run(['update-ref', '--stdin'], { input: lines.join('\n') + '\n' });
  if (r.status !== 0) throw new TasksError('E_GIT', `git update-ref failed: ${r.stderr.trim().split('\n').pop()}`, { stderr: r.stderr });
}

/**
 * Records what came in (the remote's head is the base of whatever this clone
 * changes next) and pushes what goes out: `done` when the remote has it (or
 * nothing went out), `refused` when another clone pushed first.
 */
export async function pushRound(ctx: SyncContext, state: RemoteState, plan: RoundPlan, merged: MergePlan, keep: string[]): Promise<'done' | 'refused'> {
  const {
    cwd,
    options,
    report,
    refs,
    refs: { synced: syncedRef },
  } = ctx;
  const { head } = state;
  // Moved with the ref update of the push (one git process with the record of the push about to be made).
  const cameIn =
    head && head.id !== state.synced?.id
      ? [`update ${syncedRef} ${head.id}`, ...(state.headRef !== refs.tracking ? [`update ${refs.tracking} ${head.id}`] : [])]
      : [];
  // A claim's look before it claims: what came in is recorded, nothing goes out.
  if (options.keepOut) {
    if (cameIn.length) await updateRefs(ctx, cameIn);
    report.head = head?.id;
    return 'done';
  }
  const marker = markerText(options.home?.retire ? { ...MARKER, retired: options.home.retire } : MARKER);
  const treeId = buildTree(cwd, plan.onto, merged.files, merged.claims, marker) ?? (plan.gone ? state.syncedTree!.id : state.headTree?.id);
  const claimRefs = claimRefUpdates(cwd, merged.claimRefs);
  if (!plan.mustPush && keep.length === 0 && (treeId === undefined || treeId === state.headTree?.id)) {
    // Only claim refs move (a renewal the branch already has, a ref of a task closed on the branch): no commit for them.
    if (claimRefs.length && (await pushClaimRefs(ctx.run, ctx.remote, ctx.branch, claimRefs)) !== 'accepted') return 'refused';
    if (cameIn.length) await updateRefs(ctx, cameIn);
    report.head = head?.id;
    return 'done';
  }
  const lines = [...merged.outgoing.map((c) => `${c.what} #${c.id}`), ...merged.renumbered.map((r) => `renumbered #${r.from} → #${r.to}`)];
  if (options.home?.retire) lines.push(`retired the board branch: ${options.home.retire.note}`);
  if (report.resolved === 'republished')
    lines.push(plan.gone ? 'republished the board (the branch was gone)' : `republished the board over ${head!.id.slice(0, 10)}`);
  const commit = writeCommit(cwd, treeId!, [...new Set([...plan.parents, ...keep])], commitMessage(lines));
  await updateRefs(ctx, [...cameIn, `update ${refs.pushing} ${commit}`]);
  // With claim refs to move, one atomic push: the branch and every ref, or nothing.
  const pushed = claimRefs.length
    ? await pushClaimRefs(ctx.run, ctx.remote, ctx.branch, claimRefs, commit)
    : await pushCommit(ctx.remote, ctx.branch, commit, ctx.run);
  if (pushed !== 'accepted') return 'refused';
  await updateRefs(ctx, [`update ${syncedRef} ${commit}`, `update ${refs.tracking} ${commit}`, `delete ${refs.pushing}`]);
  report.head = commit;
  return 'done';
}
