/**
 * Claims across machines by ref (docs/protocol.md, "Claims across
 * machines"): a claim of task N is a ref of its own on the remote,
 * `refs/dotasks/claims/<branch>/task_N`, pointing at a parentless commit
 * whose tree holds the published claim (`claim.json`). The push that creates
 * it carries an empty lease (`--force-with-lease=REF:`), so of two machines
 * claiming one task the remote takes exactly one; claims of different tasks
 * touch different refs and never wait for each other, or for the board
 * branch, which catches up (the owner fields) with a later sync. A renewal
 * moves the ref with a lease on its old commit; a completion, a release or a
 * reap deletes it the same way, in one atomic push with the board branch; a
 * completion leaves a marker in its place for a minute first (claim-ref-merge.ts).
 *
 * This file is the git side: the names, reading the fetched refs, writing a
 * claim's commit, and the push. What a sync does with them is in
 * claim-ref-merge.ts.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TasksError } from '../errors.js';
import { atomicWriteFile, ensureFolder, readFileIfExists } from '../fs/fsio.js';
import { git, lastLine, objectId, out, readObjects, remember, treeBody, type GitObject } from './git-objects.js';
import { storeObjects } from './object-store.js';
import type { GitRunner } from './board-branch.js';
import type { PublishedClaim } from './published-claims.js';

/** The file of a claim ref's tree. */
export const CLAIM_FILE = 'claim.json';

/** Where the claim refs of a board branch live on the remote. */
export const claimRefPrefix = (branch: string) => `refs/dotasks/claims/${branch}/`;
export const claimRef = (branch: string, id: number) => `${claimRefPrefix(branch)}task_${id}`;
/** Where a sync fetches them to (pruned: a ref gone from the remote is gone here). */
export const fetchedClaimPrefix = (remote: string, branch: string) => `refs/dotasks/remote-claims/${remote}/${branch}/`;
/** The refspec the board branch's fetch adds for them. */
export const claimRefspec = (remote: string, branch: string) => `+${claimRefPrefix(branch)}*:${fetchedClaimPrefix(remote, branch)}*`;

/** A published claim with a clone's mark: which clone made it (so a clone knows its own refs after the claim record is gone). */
export interface RefClaimRecord extends PublishedClaim {
  clone?: string;
  /**
   * The task is closed on the board branch: the ref stays a while as a
   * marker (claim-ref-merge.ts, CLOSED_MARKER_MS), so a clone that looked
   * before the task was claimed and pushes after it was finished cannot
   * create the ref again and work the task twice.
   */
  closed?: true;
}

/** A claim ref as fetched: its commit, the claim it holds, and whether this clone made it. */
export interface RefClaim {
  id: number;
  commit: string;
  claim: RefClaimRecord;
  /** The claim's text (what the board branch's `claims/task_N.json` gets once it catches up). */
  text: string;
  mine: boolean;
}

export type RefClaims = Map<number, RefClaim>;

const TASK_REF = /^task_([1-9]\d*)$/;

/** A claim ref as listed: its task and commit. */
export interface ListedClaimRef {
  id: number;
  commit: string;
}

/** The claims of commits this process read or wrote, by commit: a commit never changes, so each is read once. */
const claimCache = new Map<string, string>();

/** The claim refs this clone fetched last, listed (one git process); their claims are read by claimRefsOf. */
export function listClaimRefs(cwd: string, remote: string, branch: string): ListedClaimRef[] {
  const prefix = fetchedClaimPrefix(remote, branch);
  const refs: ListedClaimRef[] = [];
  for (const line of out(git(cwd, ['for-each-ref', '--format=%(objectname) %(refname)', prefix])).split('\n')) {
    const [commit, name] = line.split(' ');
    const id = TASK_REF.exec(name?.slice(prefix.length) ?? '')?.[1];
    if (commit && id) refs.push({ id: Number(id), commit });
  }
  return refs;
}

/** The names to read with `git cat-file --batch` (readObjects) for the claims of listed refs not read before. */
export function claimNames(refs: ListedClaimRef[]): string[] {
  return refs.filter((r) => !claimCache.has(r.commit)).map((r) => `${r.commit}:${CLAIM_FILE}`);
}

/**
 * The claims of listed refs, by task, from this process's cache and the
 * objects read for claimNames. A ref whose claim cannot be read still claims
 * its task (nobody else can create it): it counts as a claim of nobody in
 * particular, with the board's lease, until it is renewed or runs out.
 */
export function claimRefsOf(refs: ListedClaimRef[], objects: Map<string, GitObject>, clone: string): RefClaims {
  const claims: RefClaims = new Map();
  for (const { id, commit } of refs) {
    let text = claimCache.get(commit);
    if (text === undefined) {
      const object = objects.get(`${commit}:${CLAIM_FILE}`);
      text = object?.body.toString('utf8') ?? '';
      if (object) remember(claimCache, commit, text);
    }
    let claim: RefClaimRecord = { task: id, owner: '', machine: '', claimedAt: '', expiresAt: '' };
    try {
      const parsed = JSON.parse(text) as RefClaimRecord;
      if (parsed && parsed.task === id && typeof parsed.owner === 'string') claim = parsed;
    } catch {
      // unreadable: a claim of nobody in particular (see above)
    }
    claims.set(id, { id, commit, claim, text, mine: claim.clone === clone });
  }
  return claims;
}

/** The claim refs this clone fetched last, by task (listClaimRefs and claimRefsOf, in two git processes at most). */
export function readRefClaims(cwd: string, remote: string, branch: string, clone: string): RefClaims {
  const refs = listClaimRefs(cwd, remote, branch);
  return claimRefsOf(refs, readObjects(cwd, claimNames(refs)), clone);
}

/** This clone's mark (`.runtime/clone-id`), made the first time it is asked for. */
export function cloneIdOf(runtimeDir: string): string {
  const path = join(runtimeDir, 'clone-id');
  const known = readFileIfExists(path)?.trim();
  if (known && /^[0-9a-f]{16}$/.test(known)) return known;
  const id = randomBytes(8).toString('hex');
  // A fresh clone, or a `.runtime/` someone removed: the folder is made here.
  ensureFolder(runtimeDir);
  if (known === undefined) {
    try {
      writeFileSync(path, id + '\n', { flag: 'wx' });
      return id;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // another process of this clone made it first: its mark is the clone's
      return cloneIdOf(runtimeDir);
    }
  }
  // an unreadable mark is replaced: the refs it made are no longer known as this clone's, and run out as any other
  atomicWriteFile(path, id + '\n');
  return id;
}

/** The claim's commit, with its blob and tree: the same claim always makes the same commit (its dates are the claim's). */
function claimObjects(id: number, text: string, claim: PublishedClaim): { blob: Buffer; tree: Buffer; commit: Buffer } {
  const blob = Buffer.from(text, 'utf8');
  const tree = treeBody([[CLAIM_FILE, { mode: '100644', type: 'blob', sha: objectId('blob', blob) }]]);
  const seconds = Math.max(0, Math.floor(Date.parse(claim.renewedAt ?? claim.claimedAt) / 1000) || 0);
  const who = `dotasks <dotasks@invalid> ${seconds} +0000`;
  const commit = Buffer.from(`tree ${objectId('tree', tree)}\nauthor ${who}\ncommitter ${who}\n\nclaim of #${id}\n`, 'utf8');
  return { blob, tree, commit };
}

/** Writes the commits of claims into this clone's object store (object-store.ts: by this process, no git); their ids, in order. */
export function writeClaimCommits(cwd: string, claims: { id: number; text: string; claim: PublishedClaim }[]): string[] {
  const objects = claims.map((c) => claimObjects(c.id, c.text, c.claim));
  const ids = storeObjects(
    cwd,
    objects.flatMap((o) => [
      { type: 'blob' as const, body: o.blob },
      { type: 'tree' as const, body: o.tree },
      { type: 'commit' as const, body: o.commit },
    ]),
  );
  const commits = ids.filter((_, i) => i % 3 === 2);
  commits.forEach((commit, i) => remember(claimCache, commit, claims[i].text));
  return commits;
}

/** One claim ref to move: to a commit (created when `expected` is ''), or deleted (`to` undefined); `expected` is the lease. */
export interface ClaimRefUpdate {
  id: number;
  to?: string;
  /** The commit the remote must have under the ref for the update to go through; '' for none (a creation). */
  expected: string;
}

/**
 * Pushes claim ref updates, and with them the board branch's commit when
 * there is one, in one atomic push: all go through, or none (another clone
 * created, renewed or deleted one of the refs first, or pushed the branch).
 * `taken`: refused before anything was sent, because the remote's refs as it
 * listed them already broke a lease: another commit under a ref to create
 * (the same commit would have been up to date, so not this clone's claim).
 */
export async function pushClaimRefs(
  run: GitRunner,
  remote: string,
  branch: string,
  updates: ClaimRefUpdate[],
  boardCommit?: string,
): Promise<'accepted' | 'refused' | 'taken'> {
  const leases = updates.map((u) => `--force-with-lease=${claimRef(branch, u.id)}:${u.expected}`);
  const specs = [...(boardCommit ? [`${boardCommit}:refs/heads/${branch}`] : []), ...updates.map((u) => `${u.to ?? ''}:${claimRef(branch, u.id)}`)];
  const push = await run(['push', '--porcelain', '--atomic', ...leases, remote, ...specs]);
  const said = push.stdout.toString('utf8') + push.stderr;
  // `<flag>\t<from>:<to>\t<summary>`: '!' refused (a stale lease, a ref another clone created first, not a fast-forward).
  const lines = said.split('\n').filter((l) => /^[ *=+!-]\t/.test(l));
  const refused = lines.filter((l) => l.startsWith('!'));
  if (refused.length && refused.every((l) => /\t\[rejected\] \((stale info|atomic push failed)\)$/.test(l)) && refused.some((l) => l.endsWith('(stale info)')))
    return 'taken';
  if (refused.length || /stale info|atomic push failed|failed to update ref|fetch first|non-fast-forward|\[rejected\]/i.test(said)) return 'refused';
  if (push.status === 0 || (lines.length === specs.length && lines.every((l) => !l.startsWith('!')))) return 'accepted';
  throw new TasksError('E_GIT', `git push to ${remote} failed: ${lastLine(push)}`, { remote, branch, stderr: push.stderr });
}

/** The commit a claim ref has on the remote right now (undefined: none), asked of the remote itself. */
export async function remoteClaimCommit(run: GitRunner, remote: string, branch: string, id: number): Promise<string | undefined> {
  const r = await run(['ls-remote', remote, claimRef(branch, id)]);
  if (r.status !== 0) throw new TasksError('E_GIT', `git ls-remote ${remote} failed: ${lastLine(r)}`, { remote, stderr: r.stderr });
  return r.stdout.toString('utf8').split('\t')[0]?.trim() || undefined;
}
