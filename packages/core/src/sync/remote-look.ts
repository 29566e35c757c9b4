/**
 * A round's look at the remote, and its judgement before anything is changed
 * here (docs/protocol.md, "A sync"): fetches the board branch and reads what
 * the round needs of it in one `git cat-file --batch`, then refuses a branch
 * that is not a board branch, retired, gone or rewritten (unless the options
 * say to go on) or says how the round merges and what its push carries.
 */
import { TasksError } from '../errors.js';
import { parseTask, taskFileName } from '../format/format.js';
import type { TaskStore } from '../store.js';
import { commitParents, commitTime, isAncestor, mergeBase, readBlobs, readObjects, treeOf, type GitObject, type TreeEntry } from './git-objects.js';
import { BOARD_FORMAT, CLAIMS_DIR, FORMAT1_MARKER_FILE, MARKER_FILE, claimEntriesOf, classifyTree, fetchBoardBranch } from './board-branch.js';
import { TASKS_DIR, learnTree, pathIn, readBoardTree, type BoardTree } from './board-tree.js';
import type { MergeSides } from './board-merge.js';
import { updateRefs } from './round-push.js';
import { claimNames, claimRefsOf, claimRefspec, cloneIdOf, listClaimRefs } from './claim-refs.js';
import { HIGHWATERMARK_FILE } from '../engine/transaction.js';
import type { RemoteState, RoundPlan, SyncContext } from './sync-types.js';

/** Why a sync stopped before changing anything (`E_REMOTE`), for people and for `--json`. */
export type RemoteRefusal = 'branch_gone' | 'rewritten' | 'foreign' | 'retired' | 'newer';

function refuse(reason: RemoteRefusal, message: string, details: Record<string, unknown>): TasksError {
  return new TasksError('E_REMOTE', message, { reason, ...details });
}

/**
 * Fetches the board branch and reads what the round needs of it; a push of
 * ours the remote took, by a sync that was stopped before it could record it
 * (`trustPushing`: no push was refused in this sync), becomes the base.
 */
export async function lookAtRemote(ctx: SyncContext, { trustPushing }: { trustPushing: boolean }): Promise<RemoteState> {
  const { cwd, refs } = ctx;
  const withRefs = ctx.options.claimRefs !== false;
  const fetch = await fetchBoardBranch(ctx.remote, ctx.branch, refs, ctx.run, withRefs ? [claimRefspec(ctx.remote, ctx.branch)] : []);
  const headRef = fetch.outcome === 'rewritten' ? refs.rewritten : fetch.outcome === 'fetched' ? refs.tracking : undefined;
  const names = [refs.synced, `${refs.synced}^{tree}`, refs.pushing, `${refs.pushing}^{tree}`];
  if (headRef)
    names.push(
      headRef,
      `${headRef}^{tree}`,
      `${headRef}:${CLAIMS_DIR}`,
      `${headRef}:${MARKER_FILE}`,
      `${headRef}:${FORMAT1_MARKER_FILE}`,
      `${headRef}:${TASKS_DIR}`,
    );
  if (headRef) names.push(`${headRef}:${HIGHWATERMARK_FILE}`);
  // The claim refs are listed first, so their claims not read before come out of the same cat-file as the branch.
  const listed = withRefs ? listClaimRefs(cwd, ctx.remote, ctx.branch) : [];
  const objects = readObjects(cwd, [...names, ...claimNames(listed)]);
  const head = headRef ? objects.get(headRef) : undefined;
  let synced = objects.get(refs.synced);
  let syncedTree = objects.get(`${refs.synced}^{tree}`);
  const pushing = objects.get(refs.pushing);
  if (trustPushing && pushing && head && pushing.id !== synced?.id && isAncestor(cwd, pushing.id, head.id)) {
    await updateRefs(ctx, [`update ${refs.synced} ${pushing.id}`, `delete ${refs.pushing}`]);
    synced = pushing;
    syncedTree = objects.get(`${refs.pushing}^{tree}`);
  }
  const headTree = headRef ? objects.get(`${headRef}^{tree}`) : undefined;
  // The shard folders are read when the round plans its merge (planRound), not for a sync that finds nothing to do.
  if (headRef) learnTree(objects.get(`${headRef}:${TASKS_DIR}`));
  // The claims folder too: the merge lists it (claimEntriesOf) without asking git again.
  if (headRef) learnTree(objects.get(`${headRef}:${CLAIMS_DIR}`));
  const refClaims = withRefs ? claimRefsOf(listed, objects, cloneIdOf(ctx.store.runtimeDir)) : undefined;
  const mark = headRef ? Number.parseInt(objects.get(`${headRef}:${HIGHWATERMARK_FILE}`)?.body.toString('utf8') ?? '', 10) : NaN;
  ctx.memory.sawRemote(ctx.store.dir, ctx.where, { refClaims, branchMark: Number.isSafeInteger(mark) ? mark : undefined });
  return {
    fetch,
    headRef,
    head,
    headTree,
    synced,
    syncedTree,
    pushing: objects.get(refs.pushing),
    markerText: headRef ? objects.get(`${headRef}:${MARKER_FILE}`)?.body.toString('utf8') : undefined,
    format1MarkerText: headRef ? objects.get(`${headRef}:${FORMAT1_MARKER_FILE}`)?.body.toString('utf8') : undefined,
    refClaims,
  };
}

/**
 * Judges the remote before anything is changed here (docs/protocol.md, "A
 * sync"): a branch that is not a board branch, retired, gone or rewritten
 * stops the sync unless the options say to go on; otherwise says how the
 * round merges and what its push carries.
 */
export function planRound(ctx: SyncContext, state: RemoteState): RoundPlan {
  const { cwd, options, report, where, remote, branch } = ctx;
  const { head, synced, fetch } = state;
  const onto = boardOf(cwd, state.headTree);
  const theirs = onto.entries;
  const kind = classifyTree(onto.root, state.markerText, state.format1MarkerText);
  if (kind.kind === 'foreign')
    throw refuse(
      'foreign',
      `${where} is not a board branch: it holds ${listNames(kind.names)} and no ${MARKER_FILE} (a code branch of that name?); nothing was changed. Sync the board through another branch: set "syncBranch" in .tasks/config.json, or pass --branch NAME`,
      { remote, branch, names: kind.names.slice(0, 20) },
    );
  if (kind.kind === 'newer')
    throw refuse(
      'newer',
      `${where} was written by a newer dotasks (board format ${kind.format}; this one reads up to ${BOARD_FORMAT}); nothing was changed. Upgrade dotasks on this machine, then sync again`,
      { remote, branch, format: kind.format },
    );
  if (kind.kind === 'board' && kind.retired)
    throw refuse(
      'retired',
      `${where} no longer holds the board: it went back to the code branch on ${kind.retired.at} (${kind.retired.by}); nothing was changed. git pull brings it`,
      { remote, branch, retired: kind.retired },
    );
  if (head) warnOfClocks(ctx, head);
  // A first sync of a board being adopted merges against the committed task files it and the remote came from.
  const syncedBoard = state.syncedTree ? boardOf(cwd, state.syncedTree) : undefined;
  const syncedTree = syncedBoard ? syncedBoard.entries : (options.home?.adoptBase ?? new Map<string, TreeEntry>());
  const prefer: MergeSides['prefer'] = options.republish ? 'ours' : 'theirs';
  const mustPushAnyway = options.home?.retire !== undefined;
  const sides = (base: Map<string, TreeEntry>, theirsTree: Map<string, TreeEntry>): RoundPlan['sides'] => ({
    base,
    synced: syncedTree,
    theirs: theirsTree,
    claimEntries: claimEntriesOf(cwd, theirsTree),
    where,
    pathOf: (name) => pathIn(onto, name),
    prefer,
    republish: !!options.republish,
    refClaims: state.refClaims,
    noReap: !!options.keepOut || !!options.onePush,
  });

  if (fetch.outcome === 'missing' && synced) {
    if (!options.republish)
      throw refuse(
        'branch_gone',
        `${where} is gone from the remote (this clone last synced it at ${synced.id.slice(0, 10)}); nothing was changed here. If it was deleted by mistake, publish this board again: tasks sync --republish`,
        { remote, branch, synced: synced.id },
      );
    // As if the remote still held what this clone last synced: this board goes out whole, on top of it.
    report.resolved = 'republished';
    return { sides: sides(syncedTree, syncedTree), onto: syncedBoard ?? boardOf(cwd, undefined), parents: [synced.id], mustPush: true, gone: true };
  }
  const rewritten =
    synced !== undefined &&
    head !== undefined &&
    head.id !== synced.id &&
    (fetch.outcome === 'rewritten' ||
      // The fetch moved the tracking ref forward from this clone's base (the usual case), or the head's parent is
      // the base: a continuation. Only otherwise is git asked.
      !(
        (fetch.outcome === 'fetched' && fetch.from !== undefined && synced.id.startsWith(fetch.from)) ||
        commitParents(head).includes(synced.id) ||
        isAncestor(cwd, synced.id, head.id)
      ));
  if (rewritten) {
    if (!options.republish && !options.acceptRewrite) throw rewrittenRefusal(ctx.store, cwd, { remote, branch }, synced, head, theirs);
    // Republished: merged against what both histories share, and the old head stays a parent, so the clones that
    // synced either history see a continuation. Accepted: merged against the old base, on the new history alone.
    const common = options.republish ? mergeBase(cwd, synced.id, head.id) : synced.id;
    const base = common === synced.id ? syncedTree : common ? boardOf(cwd, readObjects(cwd, [`${common}^{tree}`]).get(`${common}^{tree}`)).entries : new Map();
    report.resolved = options.republish ? 'republished' : 'accepted';
    return { sides: sides(base, theirs), onto, parents: options.republish ? [head.id, synced.id] : [head.id], mustPush: true, gone: false };
  }
  const base = head && head.id === synced?.id ? theirs : syncedTree;
  return { sides: sides(base, theirs), onto, parents: head ? [head.id] : [], mustPush: mustPushAnyway, gone: false };
}

/** A commit's tree as the flat view a merge works with (board-tree.ts). */
function boardOf(cwd: string, tree: GitObject | undefined): BoardTree {
  return readBoardTree(cwd, tree?.id, tree ? treeOf(tree) : new Map());
}

/** A remote commit dated this far past this machine's clock says the clocks disagree (ms). */
const CLOCK_SKEW_WARN_MS = 5 * 60_000;

/**
 * Says so when the remote's head is dated well after this machine's clock:
 * one of the two clocks is off. Only a warning: no decision of a sync reads
 * another machine's clock (leases are timed by each clone's own observation,
 * published-claims.ts), and one commit cannot tell which clock is wrong.
 */
function warnOfClocks(ctx: SyncContext, head: GitObject): void {
  const dated = commitTime(head);
  if (dated === undefined || dated - Date.now() < CLOCK_SKEW_WARN_MS || !ctx.memory.firstClockWarning(ctx.cwd)) return;
  const minutes = Math.round((dated - Date.now()) / 60_000);
  ctx.report.warnings.push(
    `the remote's last board commit is dated ${minutes} minutes after this machine's clock: one of the two clocks is off (leases do not depend on it, but notes and events will be dated oddly)`,
  );
}

/** `README.md, src/ and 3 more`. */
function listNames(names: string[]): string {
  const shown = names.slice(0, 3).join(', ');
  return names.length > 3 ? `${shown} and ${names.length - 3} more` : shown;
}

/**
 * A rewritten branch, refused with what it would have done here: the tasks
 * this board has that the rewrite lacks, and those it would reopen.
 */
function rewrittenRefusal(
  store: TaskStore,
  cwd: string,
  { remote, branch }: { remote: string; branch: string },
  synced: GitObject,
  head: GitObject,
  theirs: Map<string, TreeEntry>,
): TasksError {
  const localIds = store.listIds();
  const missing = localIds.filter((id) => !theirs.has(taskFileName(id)));
  const differing = localIds.filter((id) => theirs.get(taskFileName(id))?.type === 'blob');
  const blobs = readBlobs(
    cwd,
    differing.map((id) => theirs.get(taskFileName(id))!.sha),
  );
  const reopened: number[] = [];
  for (const id of differing) {
    const here = store.peekTask(id);
    if (!here || (here.status !== 'completed' && here.status !== 'deleted')) continue;
    try {
      const there = parseTask(blobs.get(theirs.get(taskFileName(id))!.sha) ?? '', taskFileName(id));
      if (there.status !== 'completed' && there.status !== 'deleted') reopened.push(id);
    } catch {
      // unreadable there: counted by the sync that goes on, not here
    }
  }
  const ids = (list: number[]) =>
    list
      .slice(0, 5)
      .map((id) => `#${id}`)
      .join(', ') + (list.length > 5 ? ` and ${list.length - 5} more` : '');
  const effects = [
    missing.length ? `it lacks ${missing.length} task(s) this board has (${ids(missing)})` : '',
    reopened.length ? `it has ${reopened.length} task(s) open that are closed here (${ids(reopened)})` : '',
  ].filter(Boolean);
  return refuse(
    'rewritten',
    `${remote}/${branch} was rewritten: its head ${head.id.slice(0, 10)} does not follow ${synced.id.slice(0, 10)}, which this clone last synced (a force-push?)${effects.length ? `; ${effects.join('; ')}` : ''}; nothing was changed here. To publish this board over it, keeping every task of both: tasks sync --republish (or, to build on the rewritten history: tasks sync --accept-rewrite)`,
    { remote, branch, head: head.id, synced: synced.id, missing, reopened },
  );
}
