/**
 * `tasks sync`: one board across clones, through a branch of a git remote
 * (docs/decisions.md, "Several machines: the board branch"; the rules are in
 * docs/protocol.md, "Several machines").
 *
 * The board travels on its own branch (default `tasks`), written with git
 * plumbing only: blobs, a tree, a commit, a push. The user's HEAD, index,
 * code branches and uncommitted work are never touched. A push that is not
 * a fast-forward is refused by the remote: that refusal is the
 * compare-and-swap. A round fetches the branch, merges it three ways with
 * the board's files (board-merge.ts; the base is the last commit this clone
 * merged, kept as `refs/dotasks/synced/<remote>/<branch>`), writes what came
 * in through one board transaction, and pushes what goes out; a refused
 * push starts the next round.
 *
 * The remote is never trusted to mean "delete everything": a branch that is
 * gone, rewritten (not a descendant of what this clone last synced) or not a
 * board branch at all stops the sync before anything is changed here, with
 * the one command that goes on on purpose (`--republish`, `--accept-rewrite`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isAbsolute, join } from 'node:path';
import { ClaimError, TasksError } from '../errors.js';
import { idFromFileName, parseTask, taskFileName } from '../format/format.js';
import { ensureFolder } from '../fs/fsio.js';
import { withLock } from '../fs/locks.js';
import { EVENTS_FILE, readLastSeq } from '../events/events.js';
import type { ClaimOptions, ClaimResult, TaskStore } from '../store.js';
import { commitParents, commitTime, git, isAncestor, mergeBase, out, readBlobs, readObjects, treeOf, type GitObject, type TreeEntry } from './git-objects.js';
import { gitPastLocks, type GitLockPolicy } from './git-locks.js';
import {
  CLAIMS_DIR,
  MARKER_FILE,
  buildTree,
  claimEntriesOf,
  classifyTree,
  commitMessage,
  fetchBoardBranch,
  markerText,
  pushCommit,
  syncRefs,
  writeCommit,
  MARKER,
  type BoardMarker,
  type FetchOutcome,
  type GitRunner,
  type SyncRefs,
} from './board-branch.js';
import {
  mergeBoard,
  noOutcome,
  type MergeOutcome,
  type MergePlan,
  type MergeSides,
  type ReapedClaim,
  type Renumbered,
  type SkippedEntry,
  type SyncChange,
  type WithdrawnClaim,
} from './board-merge.js';
import { readSeenClaims, writeSeenClaims } from './published-claims.js';
import { checkBoardHome } from './board-home.js';

export type { SyncChange, SkippedEntry, Renumbered, ReapedClaim, WithdrawnClaim };
export { SYNC_CLOCK_GRACE_MS, type PublishedClaim } from './published-claims.js';

export interface SyncOptions {
  /** The git remote (default: `syncRemote` of config.json, else `origin`). */
  remote?: string;
  /** The branch of the remote that holds the board (default `syncBranch`, else `tasks`). */
  branch?: string;
  /** Rounds before giving up when other clones keep pushing first (default 50). */
  maxRounds?: number;
  /**
   * Publish this board on purpose over a remote branch that is gone or was
   * rewritten, keeping every task of both sides (this board's value wins a
   * field both changed), and replace entries of the branch that cannot be read.
   */
  republish?: boolean;
  /** Build on a rewritten remote branch: merge this board into its history as into any other change. */
  acceptRewrite?: boolean;
  /** A move between the board's two homes (board-moves.ts), not for other callers. */
  home?: {
    /** `tasks sync --adopt`: the committed task files, the base of a first sync. */
    adoptBase?: Map<string, TreeEntry>;
    /** `tasks sync --retire`: the board branch is marked retired by this sync's push. */
    retire?: BoardMarker['retired'];
  };
}

export interface SyncReport extends MergeOutcome {
  remote: string;
  branch: string;
  /** What the sync did besides the board: locks left by a killed git, a board it set up, its first sync. */
  notes: string[];
  /** Things a person should know. */
  warnings: string[];
  /** The commit now at the head of the remote branch (undefined: the branch is still empty). */
  head?: string;
  /** How this sync went on over a branch it would otherwise have refused (`--republish`, `--accept-rewrite`). */
  resolved?: 'republished' | 'accepted';
  /** Fetch-merge-push rounds it took. */
  rounds: number;
}

/** Remotes (and boards) this process already checked. */
const checkedRemotes = new Set<string>();
/** When this process last finished a sync of each board (ms). */
const lastSynced = new Map<string, number>();
/** claimWithSync does not sync before claiming when this process synced the board this recently (ms). */
const FRESH_MS = 1000;
/** Serializes the syncs of one clone, in the board's runtime folder. */
export const SYNC_LOCK = 'sync.lock';
/** The commit a sync is pushing, recorded before the push: a sync killed after the remote took it finds it there. */
const pushingRef = (remote: string, branch: string) => `refs/dotasks/pushing/${remote}/${branch}`;

/** Why a sync stopped before changing anything (`E_REMOTE`), for people and for `--json`. */
export type RemoteRefusal = 'branch_gone' | 'rewritten' | 'foreign' | 'retired';

function refuse(reason: RemoteRefusal, message: string, details: Record<string, unknown>): TasksError {
  return new TasksError('E_REMOTE', message, { reason, ...details });
}

/** Checks what cannot change while a process syncs again and again (a worker): looked up once. */
function checkRemote(cwd: string, remote: string, branch: string): void {
  const checked = `${cwd}\0${remote}`;
  if (!checkedRemotes.has(checked)) {
    const url = git(cwd, ['remote', 'get-url', remote], { allowFail: true });
    if (url.status !== 0) {
      if (/not a git repository/i.test(url.stderr))
        throw new TasksError('E_INVALID', `the board ${cwd} is not in a git repository; sync needs one with a remote`);
      throw new TasksError('E_INVALID', `no git remote named '${remote}'; add one (git remote add ${remote} URL) or pass --remote`, { remote });
    }
    checkedRemotes.add(checked);
  }
  const branchChecked = `${checked}\0${branch}`;
  if (!checkedRemotes.has(branchChecked)) {
    if (git(cwd, ['check-ref-format', `refs/heads/${branch}`], { allowFail: true }).status !== 0 || branch.startsWith('-'))
      throw new TasksError('E_USAGE', `not a usable branch name: '${branch}'`, { branch });
    checkedRemotes.add(branchChecked);
  }
}

/** The top of the checkout and its common git folder, per board (they do not change while a process runs). */
const repositories = new Map<string, { top: string; gitDir: string }>();
function repositoryOf(cwd: string): { top: string; gitDir: string } {
  let known = repositories.get(cwd);
  if (!known) {
    const [top, common] = out(git(cwd, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'])).split('\n');
    known = { top, gitDir: isAbsolute(common) ? common : join(cwd, common) };
    repositories.set(cwd, known);
  }
  return known;
}

/**
 * Brings the remote's board in and this board out, until the push is
 * accepted (see the module comment).
 */
export async function syncBoard(store: TaskStore, options: SyncOptions = {}): Promise<SyncReport> {
  const cwd = store.dir;
  const remote = options.remote ?? store.config.syncRemote;
  const branch = options.branch ?? store.config.syncBranch;
  checkRemote(cwd, remote, branch);
  const report: SyncReport = {
    remote,
    branch,
    ...noOutcome(),
    notes: [],
    warnings: [],
    rounds: 0,
  };
  // One truth per board (docs/decisions.md, "Where a synced board lives"): refuses a board whose tasks git also tracks.
  report.notes.push(...checkBoardHome(store, { remote, branch }, { adopting: options.home !== undefined }));
  // A fresh clone, or a `.runtime/` someone removed: the folder the sync lock lives in is made here.
  ensureFolder(store.runtimeDir);
  // One sync at a time per clone (two workers of one clone share its refs); taken before any board lock.
  return withLock(join(store.runtimeDir, SYNC_LOCK), store.lockOptions, () => rounds(store, options, report));
}

/** What one sync needs all along its rounds. */
interface SyncContext {
  store: TaskStore;
  cwd: string;
  options: SyncOptions;
  report: SyncReport;
  remote: string;
  branch: string;
  /** `origin/tasks`, for messages. */
  where: string;
  refs: SyncRefs & { pushing: string };
  /** git past its own locks (git-locks.ts). */
  run: GitRunner;
}

/** What a round found on the remote, read in one `git cat-file --batch` after the fetch. */
interface RemoteState {
  fetch: FetchOutcome;
  /** The ref the remote's head was fetched into (none when the branch is missing). */
  headRef?: string;
  head?: GitObject;
  headTree?: GitObject;
  theirs: Map<string, TreeEntry>;
  /** The last commit this clone merged, and its tree. */
  synced?: GitObject;
  syncedTree?: GitObject;
  markerText?: string;
}

/** How a round merges and what its push must carry. */
interface RoundPlan {
  sides: Omit<MergeSides, 'seen' | 'now'>;
  /** The parents of the commit it pushes. */
  parents: string[];
  /** Push even when the tree did not change (a republished branch, a retired one). */
  mustPush: boolean;
  /** The branch was gone: the tree to push when nothing changed is the last synced one. */
  gone: boolean;
}

async function updateRefs(ctx: SyncContext, lines: string[]): Promise<void> {
  const r = await ctx.run(['update-ref', '--stdin'], { input: lines.join('\n') + '\n' });
  if (r.status !== 0) throw new TasksError('E_GIT', `git update-ref failed: ${r.stderr.trim().split('\n').pop()}`, { stderr: r.stderr });
}

async function rounds(store: TaskStore, options: SyncOptions, report: SyncReport): Promise<SyncReport> {
  const cwd = store.dir;
  const { remote, branch } = report;
  const refs = { ...syncRefs(remote, branch), pushing: pushingRef(remote, branch) };
  const { top, gitDir } = repositoryOf(cwd);
  const policy: GitLockPolicy = {
    top,
    gitDir,
    ownRefs: [refs.tracking, refs.synced, refs.rewritten, refs.pushing, `refs/remotes/${remote}/${branch}`],
    timeoutMs: store.lockOptions.timeoutMs,
    onNote: (note) => report.notes.push(note),
  };
  const ctx: SyncContext = {
    store,
    cwd,
    options,
    report,
    remote,
    branch,
    where: `${remote}/${branch}`,
    refs,
    run: (args, o) => gitPastLocks(cwd, args, policy, { input: o?.input }),
  };
  const maxRounds = options.maxRounds ?? 50;
  /** Commits the next push must also have as parents, so every clone's last synced commit stays an ancestor of the branch. */
  let keep: string[] = [];
  let pushRefused = false;
  for (let round = 1; round <= maxRounds; round++) {
    report.rounds = round;
    const state = await lookAtRemote(ctx, { trustPushing: !pushRefused });
    const plan = planRound(ctx, state);
    if (options.republish && plan.parents.length > 1) keep = plan.parents.slice(1);
    const seen = readSeenClaims(store.runtimeDir, ctx.where);
    const now = Date.now();
    const { value: merged } = await store.transact({ board: true }, (tx) => mergeBoard(store, tx, cwd, { ...plan.sides, seen, now }));
    if (!sameSeen(seen, merged.seen)) writeSeenClaims(store.runtimeDir, ctx.where, merged.seen);
    mergeInto(report, merged);
    if ((await pushRound(ctx, state, plan, merged, keep)) === 'done') {
      lastSynced.set(store.dir, Date.now());
      return report;
    }
    pushRefused = true;
    // Another clone pushed first: fetch what it pushed and merge again, after a short random wait that
    // grows with the rounds, so clones that keep colliding spread out instead of colliding again.
    await sleep(Math.random() * Math.min(500, 10 * 2 ** Math.min(round, 6)));
  }
  throw new TasksError('E_GIT', `sync gave up after ${maxRounds} rounds: other clones kept pushing to ${ctx.where} first; run it again`, { remote, branch });
}

/**
 * Fetches the board branch and reads what the round needs of it; a push of
 * ours the remote took, by a sync that was stopped before it could record it
 * (`trustPushing`: no push was refused in this sync), becomes the base.
 */
async function lookAtRemote(ctx: SyncContext, { trustPushing }: { trustPushing: boolean }): Promise<RemoteState> {
  const { cwd, refs } = ctx;
  const fetch = await fetchBoardBranch(ctx.remote, ctx.branch, refs, ctx.run);
  const headRef = fetch.outcome === 'rewritten' ? refs.rewritten : fetch.outcome === 'fetched' ? refs.tracking : undefined;
  const names = [refs.synced, `${refs.synced}^{tree}`, refs.pushing, `${refs.pushing}^{tree}`];
  if (headRef) names.push(headRef, `${headRef}^{tree}`, `${headRef}:${CLAIMS_DIR}`, `${headRef}:${MARKER_FILE}`);
  const objects = readObjects(cwd, names);
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
  return {
    fetch,
    headRef,
    head,
    headTree,
    theirs: headTree ? treeOf(headTree) : new Map(),
    synced,
    syncedTree,
    markerText: headRef ? objects.get(`${headRef}:${MARKER_FILE}`)?.body.toString('utf8') : undefined,
  };
}

/**
 * Judges the remote before anything is changed here (docs/protocol.md, "A
 * sync"): a branch that is not a board branch, retired, gone or rewritten
 * stops the sync unless the options say to go on; otherwise says how the
 * round merges and what its push carries.
 */
function planRound(ctx: SyncContext, state: RemoteState): RoundPlan {
  const { cwd, options, report, where, remote, branch } = ctx;
  const { head, synced, theirs, fetch } = state;
  const kind = classifyTree(theirs, state.markerText);
  if (kind.kind === 'foreign')
    throw refuse(
      'foreign',
      `${where} is not a board branch: it holds ${listNames(kind.names)} and no ${MARKER_FILE} (a code branch of that name?); nothing was changed. Sync the board through another branch: set "syncBranch" in .tasks/config.json, or pass --branch NAME`,
      { remote, branch, names: kind.names.slice(0, 20) },
    );
  if (kind.kind === 'board' && kind.retired)
    throw refuse(
      'retired',
      `${where} no longer holds the board: it went back to the code branch on ${kind.retired.at} (${kind.retired.by}); nothing was changed. git pull brings it`,
      { remote, branch, retired: kind.retired },
    );
  if (head) warnOfClocks(report, head, cwd);
  // A first sync of a board being adopted merges against the committed task files it and the remote came from.
  const syncedTree = state.syncedTree ? treeOf(state.syncedTree) : (options.home?.adoptBase ?? new Map<string, TreeEntry>());
  const prefer: MergeSides['prefer'] = options.republish ? 'ours' : 'theirs';
  const mustPushAnyway = options.home?.retire !== undefined;
  const sides = (base: Map<string, TreeEntry>, theirsTree: Map<string, TreeEntry>): RoundPlan['sides'] => ({
    base,
    synced: syncedTree,
    theirs: theirsTree,
    claimEntries: claimEntriesOf(cwd, theirsTree),
    where,
    prefer,
    republish: !!options.republish,
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
    return { sides: sides(syncedTree, syncedTree), parents: [synced.id], mustPush: true, gone: true };
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
    const base = common === synced.id ? syncedTree : common ? treeOf(readObjects(cwd, [`${common}^{tree}`]).get(`${common}^{tree}`)!) : new Map();
    report.resolved = options.republish ? 'republished' : 'accepted';
    return { sides: sides(base, theirs), parents: options.republish ? [head.id, synced.id] : [head.id], mustPush: true, gone: false };
  }
  const base = head && head.id === synced?.id ? theirs : syncedTree;
  return { sides: sides(base, theirs), parents: head ? [head.id] : [], mustPush: mustPushAnyway, gone: false };
}

/**
 * Records what came in (the remote's head is the base of whatever this clone
 * changes next) and pushes what goes out: `done` when the remote has it (or
 * nothing went out), `refused` when another clone pushed first.
 */
async function pushRound(ctx: SyncContext, state: RemoteState, plan: RoundPlan, merged: MergePlan, keep: string[]): Promise<'done' | 'refused'> {
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
  const marker = markerText(options.home?.retire ? { ...MARKER, retired: options.home.retire } : MARKER);
  const treeId = buildTree(cwd, plan.sides.theirs, merged.files, merged.claims, marker) ?? (plan.gone ? state.syncedTree!.id : state.headTree?.id);
  if (!plan.mustPush && keep.length === 0 && (treeId === undefined || treeId === state.headTree?.id)) {
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
  if ((await pushCommit(ctx.remote, ctx.branch, commit, ctx.run)) === 'refused') return 'refused';
  await updateRefs(ctx, [`update ${syncedRef} ${commit}`, `update ${refs.tracking} ${commit}`, `delete ${refs.pushing}`]);
  report.head = commit;
  return 'done';
}

/** Boards whose clock this process already warned about. */
const clockWarned = new Set<string>();
/** A remote commit dated this far past this machine's clock says the clocks disagree (ms). */
const CLOCK_SKEW_WARN_MS = 5 * 60_000;

/**
 * Says so when the remote's head is dated well after this machine's clock:
 * one of the two clocks is off. Only a warning: no decision of a sync reads
 * another machine's clock (leases are timed by each clone's own observation,
 * published-claims.ts), and one commit cannot tell which clock is wrong.
 */
function warnOfClocks(report: SyncReport, head: GitObject, cwd: string): void {
  const dated = commitTime(head);
  if (dated === undefined || clockWarned.has(cwd) || dated - Date.now() < CLOCK_SKEW_WARN_MS) return;
  clockWarned.add(cwd);
  const minutes = Math.round((dated - Date.now()) / 60_000);
  report.warnings.push(
    `the remote's last board commit is dated ${minutes} minutes after this machine's clock: one of the two clocks is off (leases do not depend on it, but notes and events will be dated oddly)`,
  );
}

function sameSeen(a: Map<number, { sha: string; since: number }>, b: Map<number, { sha: string; since: number }>): boolean {
  if (a.size !== b.size) return false;
  for (const [id, s] of a) if (b.get(id)?.sha !== s.sha || b.get(id)?.since !== s.since) return false;
  return true;
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

/**
 * A claim that counts only once it is on the remote (`tasks claim --sync`):
 * syncs to see the other machines' claims, claims here, syncs again. When
 * the remote gave the task to another machine meanwhile, the sync withdraws
 * this claim: `claim ID` then fails as a lost race, `--next` tries the next
 * ready task. When the claim cannot be published (the remote is down), it is
 * released here again and the error says why: nobody works a task the other
 * machines cannot see is taken.
 */
export async function claimWithSync(
  store: TaskStore,
  id: number | undefined,
  options: ClaimOptions & { sync?: SyncOptions },
): Promise<ClaimResult & { sync: SyncReport }> {
  // See the other machines' claims first, unless this process just did (a worker's sync after its last task).
  if (!(Date.now() - (lastSynced.get(store.dir) ?? 0) < FRESH_MS)) await syncBoard(store, options.sync);
  for (let attempt = 0; attempt < 20; attempt++) {
    const result = id !== undefined ? await store.claimTask(id, options) : await store.claimNext(options);
    let report: SyncReport;
    try {
      report = await syncBoard(store, options.sync);
    } catch (error) {
      if (!result.alreadyHeld)
        await store
          .releaseTask(result.task.id, { actor: options.owner, heldBy: options.owner, reason: 'the claim could not be published to the remote' })
          .catch(() => undefined);
      throw error;
    }
    // The claimed task may have moved to a free id in that sync (it was created here, and the remote had its id).
    const claimed = report.renumbered.find((r) => r.from === result.task.id)?.to ?? result.task.id;
    // What the board says after the sync decides, not this sync's report: another process of this
    // clone may have synced in between and withdrawn the claim already.
    const now = store.getTask(claimed);
    if (now.status === 'in_progress' && now.owner === options.owner) return { ...result, task: now, sync: report };
    if (id !== undefined)
      throw new ClaimError('already_claimed', `#${id} was claimed on another machine by ${now.owner || 'someone'} first`, { task: id, owner: now.owner });
  }
  throw new ClaimError('nothing_ready', 'every ready task was claimed on another machine first; try again', {});
}

export interface SyncLoopOptions extends SyncOptions {
  /** Sync at least this often, to see the other machines' work (ms, default 10,000). */
  intervalMs?: number;
  /** How often to look for local changes (the event log's last sequence number), ms (default 500). */
  checkMs?: number;
  onReport?: (report: SyncReport) => void;
  onError?: (error: unknown) => void;
}

/**
 * Keeps a board synced (`tasks watch --sync`): at once when this board
 * changed (its event log moved on; reading its last line is all a look
 * costs) and every `intervalMs` otherwise, one sync at a time.
 */
export function startSyncLoop(store: TaskStore, options: SyncLoopOptions = {}): { close(): Promise<void> } {
  const eventsFile = join(store.runtimeDir, EVENTS_FILE);
  const intervalMs = options.intervalMs ?? 10_000;
  let seenSeq = -1;
  let lastSync = 0;
  let running: Promise<void> | undefined;
  let closed = false;
  const tick = () => {
    if (running || closed) return;
    const seq = readLastSeq(eventsFile);
    if (seq === seenSeq && Date.now() - lastSync < intervalMs) return;
    // A change made while this sync runs moves the log on past `seq`: the next look syncs again (so does
    // what this sync logs itself, once; that second sync finds nothing and logs nothing).
    running = syncBoard(store, options)
      .then((report) => {
        seenSeq = seq;
        options.onReport?.(report);
      }, options.onError)
      .finally(() => {
        lastSync = Date.now();
        running = undefined;
      });
  };
  const timer = setInterval(tick, options.checkMs ?? 500);
  tick();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
