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
  type GitObject,
  type GitResult,
  type TreeEntry,
} from './git-objects.js';
import { writeBoardTree, type BoardTree } from './board-tree.js';

/** The branch's folder of published claims: `claims/task_N.json`, one per task in progress with a lease. */
export const CLAIMS_DIR = 'claims';

/**
 * The file that makes a branch a board branch: written into the tree of
 * every commit a sync makes, so a branch of that name that is not ours (a
 * code branch called `tasks`) is recognised by one look at its tree. Format
 * 2 (task files in shard folders) has a marker of its own name: a dotasks
 * that knows only format 1 finds no `.dotasks-board` and names it not a board
 * branch (`foreign`), changing nothing, instead of reading a board with no
 * task files on it.
 */
export const MARKER_FILE = '.dotasks-board-v2';

/** The marker of a format 1 branch (task files flat at the root): read, and replaced by the next push. */
export const FORMAT1_MARKER_FILE = '.dotasks-board';

/** The format this dotasks writes; a branch of a later one is refused (written by a newer dotasks). */
export const BOARD_FORMAT = 2;

/** What the marker holds; `retired` once the board went back to the code branch (`tasks sync --retire`). */
export interface BoardMarker {
  board: 'dotasks';
  format: number;
  about: string;
  retired?: { at: string; by: string; note: string };
}

export const MARKER: BoardMarker = {
  board: 'dotasks',
  format: BOARD_FORMAT,
  about:
    'A dotasks task board: tasks/<N div 100>/task_N.json per task, .highwatermark, and claims/ for leases. Written by `tasks sync` (format 2; a dotasks that knows only format 1 refuses it); do not commit code here.',
};

export function markerText(marker: BoardMarker = MARKER): string {
  return JSON.stringify(marker, null, 2) + '\n';
}

/** What a branch's tree is, for a sync. */
export type BranchKind =
  { kind: 'board'; retired?: BoardMarker['retired'] } | { kind: 'legacy' } | { kind: 'foreign'; names: string[] } | { kind: 'newer'; format: number };

/**
 * Tells a board branch from a branch someone else made under that name, by
 * its root tree's entries and the text of its marker (either format's). A
 * tree with a marker is a board (format 1 or 2; a later format is `newer`);
 * one without it is a board an earlier dotasks wrote when it holds nothing
 * but board files (it gets the marker with the next push); anything else (a
 * README, a src/ folder) is not ours.
 */
export function classifyTree(root: Map<string, TreeEntry>, markerText: string | undefined, format1MarkerText?: string): BranchKind {
  const parse = (text: string | undefined): Partial<BoardMarker> | undefined => {
    try {
      return JSON.parse(text ?? '') as Partial<BoardMarker>;
    } catch {
      return undefined;
    }
  };
  if (root.has(MARKER_FILE)) {
    const marker = parse(markerText);
    if (typeof marker?.format === 'number' && marker.format > BOARD_FORMAT) return { kind: 'newer', format: marker.format };
    return { kind: 'board', retired: marker?.retired };
  }
  if (root.has(FORMAT1_MARKER_FILE)) return { kind: 'board', retired: parse(format1MarkerText)?.retired };
  const names = [...root.keys()];
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
  // Not --quiet: git says a refused update (` ! [rejected] … (non-fast-forward)`) only without it. No `git
  // maintenance --auto` after it (a git process every fetch): the sync keeps the clone packed itself (pack-upkeep.ts).
  const base = ['fetch', '--no-tags', '--no-write-fetch-head', '--no-progress', '--no-auto-gc', '--refmap=', remote];
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

/** Lines a commit message lists; past them, how many more. */
export const MESSAGE_LINES = 200;

/**
 * The commit message: what went out, one line each (the first
 * MESSAGE_LINES of them), under a summary line. A first sync of 100,000
 * tasks listed every one: a commit of 1.5 MB that every later sync read
 * (twice: as the remote's head and as its own base) while it was the head.
 */
export function commitMessage(lines: string[]): string {
  const summary = lines.length <= 3 ? lines.join(', ') : `${lines.slice(0, 2).join(', ')} and ${lines.length - 2} more`;
  const listed = lines.length <= MESSAGE_LINES ? lines : [...lines.slice(0, MESSAGE_LINES), `and ${lines.length - MESSAGE_LINES} more`];
  return `${summary || 'board'} (${hostname()})\n\n${listed.join('\n')}\n`;
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
 * Builds the tree of the merged board on top of `onto` (board-tree.ts: the
 * task files in their shards, the changed ones written; two git processes);
 * undefined when it equals onto's. `files` maps a name of the flat view to
 * its new text, or to undefined to leave the name out; names not in it keep
 * onto's entry. The marker is this format's (a format 1 marker goes).
 */
export function buildTree(
  cwd: string,
  onto: BoardTree,
  files: Map<string, string | undefined>,
  claims: Map<string, string>,
  marker: string,
): string | undefined {
  const claimFiles = [...claims];
  const claimBlobs = claimFiles.map(([name, text]): [string, TreeEntry] => [name, { mode: '100644', type: 'blob', sha: blobId(text) }]);
  const body = claimFiles.length ? treeBody(claimBlobs) : undefined;
  const entry: TreeEntry | undefined = body && { mode: '040000', type: 'tree', sha: objectId('tree', body) };
  const rootFiles = new Map<string, string | undefined>([
    [MARKER_FILE, marker],
    [FORMAT1_MARKER_FILE, undefined],
  ]);
  const { id, blobs } = writeBoardTree(cwd, onto, files, rootFiles, { entry, body, texts: claimFiles.map(([, text]) => text) });
  if (id === onto.id) return undefined;
  for (const text of blobs) rememberBlob(text);
  if (entry) rememberTree(entry.sha, new Map(claimBlobs));
  return id;
}

/** A commit object's id, if it is one. */
export function commitId(object: GitObject | undefined): string | undefined {
  return object?.type === 'commit' ? object.id : undefined;
}
