/**
 * The board branch on the remote (docs/protocol.md, "The board branch"):
 * what its tree holds, how a sync tells a branch of ours from someone
 * else's, how it is fetched without trusting a rewrite, and how the tree of
 * a merged board is built and pushed.
 */
import { hostname } from 'node:os';
import { TasksError } from '../errors.js';
import { idFromFileName } from '../format/format.js';
import { HIGHWATERMARK_FILE } from '../engine/transaction.js';
import {
  blobId,
  commitEnv,
  git,
  knownTree,
  lastLine,
  objectId,
  out,
  readTree,
  rememberBlob,
  rememberTree,
  treeBody,
  writeObjects,
  type GitObject,
  type GitResult,
  type TreeEntry,
} from './git-objects.js';

/** The branch's folder of published claims: `claims/task_N.json`, one per task in progress with a lease. */
export const CLAIMS_DIR = 'claims';

/**
 * The file that makes a branch a board branch: written into the tree of
 * every commit a sync makes, so a branch of that name that is not ours (a
 * code branch called `tasks`) is recognised by one look at its tree.
 */
export const MARKER_FILE = '.dotasks-board';

/** What the marker holds; `retired` once the board went back to the code branch (`tasks sync --retire`). */
export interface BoardMarker {
  board: 'dotasks';
  format: 1;
  about: string;
  retired?: { at: string; by: string; note: string };
}

export const MARKER: BoardMarker = {
  board: 'dotasks',
  format: 1,
  about: 'A dotasks task board: one task_N.json per task, .highwatermark, and claims/ for leases. Written by `tasks sync`; do not commit code here.',
};

export function markerText(marker: BoardMarker = MARKER): string {
  return JSON.stringify(marker, null, 2) + '\n';
}

/** What a branch's tree is, for a sync. */
export type BranchKind = { kind: 'board'; retired?: BoardMarker['retired'] } | { kind: 'legacy' } | { kind: 'foreign'; names: string[] };

/**
 * Tells a board branch from a branch someone else made under that name. A
 * tree with the marker is a board; one without it is a board an earlier
 * dotasks wrote when it holds nothing but board files (it gets the marker
 * with the next push); anything else (a README, a src/ folder) is not ours.
 */
export function classifyTree(tree: Map<string, TreeEntry>, markerText: string | undefined): BranchKind {
  if (tree.has(MARKER_FILE)) {
    let marker: Partial<BoardMarker> | undefined;
    try {
      marker = JSON.parse(markerText ?? '') as Partial<BoardMarker>;
    } catch {
      marker = undefined;
    }
    return { kind: 'board', retired: marker?.retired };
  }
  const names = [...tree.keys()];
  if (names.every((name) => name === HIGHWATERMARK_FILE || name === CLAIMS_DIR || idFromFileName(name) !== undefined)) return { kind: 'legacy' };
  return { kind: 'foreign', names: names.filter((n) => n !== HIGHWATERMARK_FILE && n !== CLAIMS_DIR && idFromFileName(n) === undefined).sort() };
}

/** The refs a sync keeps for one remote branch, outside refs/heads and refs/remotes so no user command moves them. */
export interface SyncRefs {
  /** The remote's head as last fetched (only ever moved forward by a fetch). */
  tracking: string;
  /** The last commit of the branch this clone merged: the base of the next merge. */
  synced: string;
  /** Where a rewritten head is fetched to be looked at. */
  rewritten: string;
}

export function syncRefs(remote: string, branch: string): SyncRefs {
  return {
    tracking: `refs/dotasks/remote/${remote}/${branch}`,
    synced: `refs/dotasks/synced/${remote}/${branch}`,
    rewritten: `refs/dotasks/rewritten/${remote}/${branch}`,
  };
}

/**
 * How a fetch of the board branch went; `from` is where a fast-forward moved
 * the tracking ref from (git's abbreviated id), so a sync knows without
 * asking git again that the head follows what it fetched before.
 */
export type FetchOutcome = { outcome: 'fetched'; from?: string } | { outcome: 'missing' } | { outcome: 'rewritten' };

/**
 * Fetches the board branch into the tracking ref, which a fetch may only
 * move forward: a remote head that is not a descendant of what this clone
 * fetched before (a force-push, a branch deleted and made again) is not
 * taken in but fetched to the `rewritten` ref, for the sync to refuse or,
 * when asked, to build on.
 */
export async function fetchBoardBranch(remote: string, branch: string, refs: SyncRefs, run: GitRunner, also: string[] = []): Promise<FetchOutcome> {
  // Not --quiet: git says a refused update (` ! [rejected] … (non-fast-forward)`) only without it.
  const base = ['fetch', '--no-tags', '--no-write-fetch-head', '--no-progress', '--refmap=', remote];
  // `also`: more refspecs in the same fetch (the claim refs, claim-refs.ts), pruned: what the remote deleted goes here too.
  const r = await run([...base.slice(0, -1), ...(also.length ? ['--prune'] : []), remote, `refs/heads/${branch}:${refs.tracking}`, ...also]);
  const said = r.stdout.toString('utf8') + r.stderr;
  if (r.status === 0) {
    // `   1a2b3c4..5d6e7f8  tasks      -> refs/dotasks/remote/origin/tasks`
    const moved = new RegExp(`^\\s+([0-9a-f]+)\\.\\.[0-9a-f]+\\s+\\S+\\s+->\\s+${refs.tracking.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`, 'm').exec(said);
    return { outcome: 'fetched', from: moved?.[1] };
  }
  if (/couldn't find remote ref|could not find remote ref/i.test(said)) return { outcome: 'missing' };
  if (/\[rejected\].*non-fast-forward/i.test(said)) {
    const forced = await run([...base, `+refs/heads/${branch}:${refs.rewritten}`]);
    if (forced.status !== 0) throw new TasksError('E_GIT', `git fetch ${remote} failed: ${lastLine(forced)}`, { remote, stderr: forced.stderr });
    return { outcome: 'rewritten' };
  }
  throw new TasksError('E_GIT', `git fetch ${remote} failed: ${lastLine(r)}`, { remote, stderr: r.stderr });
}

/** Runs git asynchronously in the board's repository, past git's own locks (git-locks.ts); never throws on a status. */
export type GitRunner = (args: string[], options?: { input?: string }) => Promise<GitResult>;

/** How a push went: accepted, or refused because another clone pushed first. */
export async function pushCommit(remote: string, branch: string, commit: string, run: GitRunner): Promise<'accepted' | 'refused'> {
  const push = await run(['push', '--porcelain', '--quiet', remote, `${commit}:refs/heads/${branch}`]);
  const said = push.stdout.toString('utf8') + push.stderr;
  // `<flag>\t<from>:<to>\t<summary>`: ' ' fast-forward, '*' new branch, '=' up to date, '!' refused. git may exit 1
  // after the remote took the push when only updating its own remote-tracking ref failed: the remote's word counts.
  const line = said.split('\n').find((l) => l.includes(`\t${commit}:refs/heads/${branch}\t`));
  const flag = line?.[0];
  if (flag === ' ' || flag === '*' || flag === '=' || flag === '+') return 'accepted';
  if (flag === '!' || /rejected|non-fast-forward|fetch first|stale info|failed to update ref|failed to lock/i.test(said)) return 'refused';
  if (push.status === 0) return 'accepted';
  throw new TasksError('E_GIT', `git push to ${remote} failed: ${lastLine(push)}`, { remote, branch, stderr: push.stderr });
}

/** The commit message: what went out, one line each, under a summary line. */
export function commitMessage(lines: string[]): string {
  const summary = lines.length <= 3 ? lines.join(', ') : `${lines.slice(0, 2).join(', ')} and ${lines.length - 2} more`;
  return `${summary || 'board'} (${hostname()})\n\n${lines.join('\n')}\n`;
}

/** Writes a commit of `tree` with `parents`; its entries are remembered under the commit's id too. */
export function writeCommit(cwd: string, tree: string, parents: string[], message: string): string {
  const commit = out(git(cwd, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])], { input: message, env: commitEnv(cwd) }));
  const entries = knownTree(tree);
  if (entries) rememberTree(commit, entries);
  return commit;
}

/** The entries of a commit's claims folder (none without one). */
export function claimEntriesOf(cwd: string, tree: Map<string, TreeEntry>): Map<string, TreeEntry> {
  const folder = tree.get(CLAIMS_DIR);
  return folder?.type === 'tree' ? readTree(cwd, folder.sha) : new Map();
}

/**
 * Builds the tree of the merged board on top of `theirs` (two git
 * processes: the blobs, then the claims folder's tree and the top tree);
 * undefined when it equals theirs. `files` maps a name to its new text, or
 * to undefined to leave the name out; names not in it keep theirs' entry.
 */
export function buildTree(
  cwd: string,
  theirs: Map<string, TreeEntry>,
  files: Map<string, string | undefined>,
  claims: Map<string, string>,
  marker: string,
): string | undefined {
  const entries = new Map(theirs);
  const changed: [string, string][] = [];
  for (const [name, text] of [...files, [MARKER_FILE, marker] as [string, string]]) {
    if (text === undefined) entries.delete(name);
    else if (entries.get(name)?.sha !== blobId(text) || entries.get(name)?.type !== 'blob') changed.push([name, text]);
  }
  const claimFiles = [...claims];
  const claimBlobs = claimFiles.map(([name, text]): [string, TreeEntry] => [name, { mode: '100644', type: 'blob', sha: blobId(text) }]);
  const claimsBody = claimFiles.length ? treeBody(claimBlobs) : undefined;
  const claimsTree = claimsBody && objectId('tree', claimsBody);
  if (claimsTree) entries.set(CLAIMS_DIR, { mode: '040000', type: 'tree', sha: claimsTree });
  else entries.delete(CLAIMS_DIR);
  const claimsChanged = theirs.get(CLAIMS_DIR)?.sha !== claimsTree;
  const removed = [...theirs.keys()].some((name) => !entries.has(name));
  if (changed.length === 0 && !removed && !claimsChanged) return undefined;
  for (const [name, text] of changed) entries.set(name, { mode: '100644', type: 'blob', sha: blobId(text) });
  // Only what the remote does not have yet is written: the claims when they changed, and the changed files.
  const written = [...(claimsChanged ? claimFiles : []), ...changed];
  writeObjects(
    cwd,
    'blob',
    written.map(([, text]) => Buffer.from(text, 'utf8')),
  );
  for (const [, text] of written) rememberBlob(text);
  if (claimsTree) rememberTree(claimsTree, new Map(claimBlobs));
  const top = treeBody(entries);
  const [tree] = writeObjects(cwd, 'tree', claimsBody && claimsChanged ? [claimsBody, top] : [top]).slice(-1);
  // The next round's base is this tree's commit: its entries are known without asking git.
  rememberTree(tree, entries);
  return tree;
}

/** A commit object's id, if it is one. */
export function commitId(object: GitObject | undefined): string | undefined {
  return object?.type === 'commit' ? object.id : undefined;
}
