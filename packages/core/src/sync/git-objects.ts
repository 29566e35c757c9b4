/**
 * The git plumbing a sync is written with: running git, and reading and
 * writing its objects (blobs and trees) with as few git processes as it can.
 * Spawning git is most of what a sync costs its machine (each spawn forks
 * the node process), so objects, which never change, are read once per
 * process and cached by id, and the ids of what is written are computed here.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { TasksError } from '../errors.js';

export interface GitResult {
  status: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs git in `cwd`; a failure is a one-line E_GIT error unless `allowFail`. */
export function git(cwd: string, args: string[], options: { input?: string | Buffer; allowFail?: boolean; env?: NodeJS.ProcessEnv } = {}): GitResult {
  const r = spawnSync('git', args, { cwd, input: options.input, maxBuffer: 1 << 30, env: options.env ?? process.env });
  if (r.error) throw new TasksError('E_GIT', `git ${args[0]} failed: ${r.error.message}`, { args }, { cause: r.error });
  const result = { status: r.status ?? 1, stdout: r.stdout as Buffer, stderr: String(r.stderr ?? '') };
  if (result.status !== 0 && !options.allowFail) throw new TasksError('E_GIT', `git ${args[0]} failed: ${lastLine(result)}`, { args, stderr: result.stderr });
  return result;
}

/** The last line git printed (its error), or the exit status. */
export function lastLine(r: GitResult): string {
  return (r.stdout.toString('utf8') + '\n' + r.stderr).trim().split('\n').filter(Boolean).pop() ?? `exit ${r.status}`;
}

/** stdout as trimmed text. */
export const out = (r: { stdout: Buffer }) => r.stdout.toString('utf8').trim();

/** One entry of a tree. */
export interface TreeEntry {
  mode: string;
  type: string;
  sha: string;
}

/** An object as `git cat-file --batch` gives it. */
export interface GitObject {
  id: string;
  type: string;
  body: Buffer;
}

/**
 * What this process read of git's objects, by id: an object never changes, so
 * a worker that syncs again and again reads each tree and blob once.
 */
const treeCache = new Map<string, Map<string, TreeEntry>>();
const blobCache = new Map<string, string>();
/** Past this many objects a cache starts again (a long-running watcher on a busy board). */
const CACHE_LIMIT = 20_000;

export function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

/** git's id of an object: the SHA-1 of its type, size and body. */
export function objectId(type: 'blob' | 'tree' | 'commit', body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** The blob ids of texts this process hashed: a sync that reads a file from its cache (file-texts.ts) hashes it once. */
const blobIds = new Map<string, string>();

/** git's blob id of a text, computed in process (no git call per file). */
export function blobId(text: string): string {
  const known = blobIds.get(text);
  if (known !== undefined) return known;
  if (blobIds.size >= 250_000) blobIds.clear();
  const id = objectId('blob', Buffer.from(text, 'utf8'));
  blobIds.set(text, id);
  return id;
}

/** A tree's entries already known to this process (read, or written by it). */
export function knownTree(id: string): Map<string, TreeEntry> | undefined {
  return treeCache.get(id);
}

/** Records the entries of a tree (or of the commit that names it). */
export function rememberTree(id: string, entries: Map<string, TreeEntry>): Map<string, TreeEntry> {
  return remember(treeCache, id, entries);
}

/** The entries of a tree (a commit, or a tree's id), by name; none for no revision. */
export function readTree(cwd: string, rev: string | undefined): Map<string, TreeEntry> {
  if (!rev) return new Map();
  const known = treeCache.get(rev);
  if (known) return known;
  const entries = new Map<string, TreeEntry>();
  const text = git(cwd, ['ls-tree', '--full-tree', '-z', rev]).stdout.toString('utf8');
  for (const item of text.split('\0')) {
    if (!item) continue;
    const tab = item.indexOf('\t');
    const [mode, type, sha] = item.slice(0, tab).split(' ');
    entries.set(item.slice(tab + 1), { mode, type, sha });
  }
  return remember(treeCache, rev, entries);
}

/**
 * The contents of blobs, by id: those not read before in one `git cat-file
 * --batch`. An id that names something else than a blob (a folder someone
 * committed under a task's name) is left out: the caller says what it is.
 */
export function readBlobs(cwd: string, shas: Iterable<string>): Map<string, string> {
  const texts = new Map<string, string>();
  const wanted: string[] = [];
  for (const sha of new Set(shas)) {
    const known = blobCache.get(sha);
    if (known === undefined) wanted.push(sha);
    else texts.set(sha, known);
  }
  if (wanted.length === 0) return texts;
  for (const [sha, object] of readObjects(cwd, wanted)) if (object.type === 'blob') texts.set(sha, remember(blobCache, sha, object.body.toString('utf8')));
  return texts;
}

/** Records a blob's text this process wrote. */
export function rememberBlob(text: string): void {
  remember(blobCache, blobId(text), text);
}

/**
 * A tree object's body: its entries sorted as git sorts them (by name, a
 * folder's name as if it ended in `/`), each `mode name\0` and the raw id.
 * git does not check the order when it stores a tree: a test compares with
 * what `git mktree` makes of the same entries.
 */
export function treeBody(entries: Iterable<[string, TreeEntry]>): Buffer {
  const key = ([name, e]: [string, TreeEntry]) => (e.type === 'tree' ? `${name}/` : name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))));
  return Buffer.concat(sorted.flatMap(([name, e]) => [Buffer.from(`${e.mode.replace(/^0+/, '')} ${name}\0`), Buffer.from(e.sha, 'hex')]));
}

/**
 * Objects named by revision expressions (`ref`, `ref^{tree}`, `ref:claims`,
 * or ids) in one `git cat-file --batch`; a name that resolves to nothing (a
 * ref not there yet, a commit without the folder) is left out.
 */
export function readObjects(cwd: string, names: string[]): Map<string, GitObject> {
  const found = new Map<string, GitObject>();
  if (names.length === 0) return found;
  const buf = git(cwd, ['cat-file', '--batch'], { input: names.join('\n') + '\n' }).stdout;
  let at = 0;
  for (const name of names) {
    const eol = buf.indexOf(10, at);
    if (eol < 0) throw new TasksError('E_GIT', `git cat-file --batch ended early, at ${name}`);
    const header = buf.toString('utf8', at, eol);
    at = eol + 1;
    // `<id> <type> <size>`, or `<name> missing` (also `ambiguous`, which a full ref name never is).
    const [id, type, size, more] = header.split(' ');
    if (more !== undefined || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(id) || !/^\d+$/.test(size ?? '')) continue;
    found.set(name, { id, type, body: buf.subarray(at, at + Number(size)) });
    at += Number(size) + 1;
  }
  return found;
}

/** A tree object's entries (its body as git stores it), by name, as `git ls-tree` would list them. */
export function parseTree(tree: GitObject): Map<string, TreeEntry> {
  const hashBytes = tree.id.length / 2;
  const entries = new Map<string, TreeEntry>();
  let at = 0;
  while (at < tree.body.length) {
    const space = tree.body.indexOf(32, at);
    const nul = tree.body.indexOf(0, space);
    if (space < 0 || nul < 0) throw new TasksError('E_GIT', `git tree ${tree.id} is not a tree`);
    const mode = tree.body.toString('latin1', at, space).padStart(6, '0');
    const type = mode === '040000' ? 'tree' : mode === '160000' ? 'commit' : 'blob';
    entries.set(tree.body.toString('utf8', space + 1, nul), { mode, type, sha: tree.body.toString('hex', nul + 1, nul + 1 + hashBytes) });
    at = nul + 1 + hashBytes;
  }
  return entries;
}

/** A tree read by readObjects, parsed once and cached by its id. */
export function treeOf(object: GitObject): Map<string, TreeEntry> {
  return treeCache.get(object.id) ?? remember(treeCache, object.id, parseTree(object));
}

/** The parents a commit object names. */
export function commitParents(commit: GitObject): string[] {
  const head = commit.body.toString('utf8', 0, Math.max(0, commit.body.indexOf('\n\n')));
  return [...head.matchAll(/^parent ([0-9a-f]+)$/gm)].map((m) => m[1]);
}

/** The committer time of a commit object (ms since the epoch), as its committer's clock said. */
export function commitTime(commit: GitObject): number | undefined {
  const m = /^committer .* (\d+) [+-]\d{4}$/m.exec(commit.body.toString('utf8', 0, Math.max(0, commit.body.indexOf('\n\n'))));
  return m ? Number(m[1]) * 1000 : undefined;
}

/** Whether `ancestor` is `descendant` or one of its ancestors (both commits of this repository). */
export function isAncestor(cwd: string, ancestor: string, descendant: string): boolean {
  if (ancestor === descendant) return true;
  const r = git(cwd, ['merge-base', '--is-ancestor', ancestor, descendant], { allowFail: true });
  if (r.status === 0) return true;
  if (r.status === 1) return false;
  throw new TasksError('E_GIT', `git merge-base failed: ${lastLine(r)}`, { stderr: r.stderr });
}

/** The best common ancestor of two commits, or undefined when their histories are unrelated. */
export function mergeBase(cwd: string, a: string, b: string): string | undefined {
  const r = git(cwd, ['merge-base', a, b], { allowFail: true });
  if (r.status === 0) return out(r) || undefined;
  if (r.status === 1) return undefined;
  throw new TasksError('E_GIT', `git merge-base failed: ${lastLine(r)}`, { stderr: r.stderr });
}

/** The committer environment of each repository this process synced (it does not change while it runs). */
const commitEnvs = new Map<string, NodeJS.ProcessEnv>();

/** A committer identity: the user's, else one naming dotasks and this machine. */
export function commitEnv(cwd: string): NodeJS.ProcessEnv {
  const known = commitEnvs.get(cwd);
  if (known) return known;
  if (git(cwd, ['var', 'GIT_COMMITTER_IDENT'], { allowFail: true }).status === 0) return remember(commitEnvs, cwd, process.env);
  const name = `dotasks on ${hostname()}`;
  const email = 'dotasks@localhost';
  return remember(commitEnvs, cwd, { ...process.env, GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email });
}
