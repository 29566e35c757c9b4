/**
 * `tasks sync`: one board across clones, through a branch of a git remote
 * (docs/decisions.md, "Several machines: the board branch").
 *
 * The board travels on its own branch (default `tasks`), written with git
 * plumbing only: blobs, a tree, a commit, a push. The user's HEAD, index,
 * code branches and uncommitted work are never touched. A push that is not
 * a fast-forward is refused by the remote: that refusal is the
 * compare-and-swap. A round fetches the branch, merges it three ways with
 * the board's files (the base is the last commit this clone merged, kept as
 * `refs/dotasks/synced/<remote>/<branch>`), writes what came in through one
 * board transaction, and pushes what goes out; a refused push starts the
 * next round.
 *
 * - Field by field, with the merge driver's rules (edges as sets, objects key
 *   by key). A field both sides changed differently takes the remote's value
 *   (it was published first) and is reported; a task file never gets a
 *   conflict marker. So of two clones claiming one task, the one whose push
 *   landed first keeps it and the other's claim is withdrawn.
 * - Ids are provisional until synced: a task this clone created whose id
 *   the remote gave to another task meanwhile is moved to a free id (its file
 *   and every edge in this clone's unsynced changes) before the push.
 * - `.highwatermark` goes out and comes in as the maximum, so an id once on
 *   the remote is never handed out again by any clone that synced.
 */
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClaimError, TasksError } from '../errors.js';
import { idFromFileName, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { withLock } from '../fs/locks.js';
import { listLeases } from '../runtime/leases.js';
import { EVENTS_FILE, readLastSeq } from '../events/events.js';
import { mergeTaskTextResolved, type MergeConflict } from './merge.js';
import type { ClaimOptions, ClaimResult, TaskStore } from '../store.js';
import { HIGHWATERMARK_FILE, parseHighWaterMark, type Transaction } from '../board/transaction.js';

export interface SyncOptions {
  /** The git remote (default: `syncRemote` of config.json, else `origin`). */
  remote?: string;
  /** The branch of the remote that holds the board (default `syncBranch`, else `tasks`). */
  branch?: string;
  /** Rounds before giving up when other clones keep pushing first (default 50). */
  maxRounds?: number;
}

/** One task that came in or went out. */
export interface SyncChange {
  id: number;
  /** What happened, for people: `claimed by agent-1`, `completed`, `created`, `updated` … */
  what: string;
}

export interface SyncReport {
  remote: string;
  branch: string;
  /** Changes from the remote written to this board. */
  incoming: SyncChange[];
  /** Changes of this board that are now on the remote. */
  outgoing: SyncChange[];
  /** Tasks of this clone moved to a free id because the remote had given theirs to another task. */
  renumbered: { from: number; to: number }[];
  /** Fields both sides changed differently; the remote's value was kept. */
  conflicts: (MergeConflict & { id: number })[];
  /** Tasks this clone had in progress that the remote gives to someone else: the claim was withdrawn. */
  withdrawn: { id: number; owner: string; winner: string }[];
  /** Tasks released here because their claim's lease, as published by the machine holding it, ran out. */
  reaped: { id: number; owner: string; machine: string; expiredAt: string }[];
  /** Things a person should know (e.g. task files tracked on the code branch). */
  warnings: string[];
  /** The commit now at the head of the remote branch (undefined: the branch is still empty). */
  head?: string;
  /** Fetch-merge-push rounds it took. */
  rounds: number;
}

const EMPTY = '';
/** The branch's folder of published claims: `claims/task_N.json`, one per task in progress with a lease. */
const CLAIMS_DIR = 'claims';
/** A published lease counts as run out this long after its expiry (machines' clocks differ a little), ms. */
export const SYNC_CLOCK_GRACE_MS = 2000;

/** A claim as published on the board branch (`claims/task_N.json`). */
export interface PublishedClaim {
  task: number;
  owner: string;
  /** The machine that holds it (its host name). */
  machine: string;
  claimedAt: string;
  expiresAt: string | null;
}
/** Remotes (and boards) this process already checked. */
const checkedRemotes = new Set<string>();
/** When this process last finished a sync of each board (ms). */
const lastSynced = new Map<string, number>();
/** claimWithSync does not sync before claiming when this process synced the board this recently (ms). */
const FRESH_MS = 1000;
/** Serializes the syncs of one clone, in the board's runtime folder. */
const SYNC_LOCK = 'sync.lock';

/** Runs git in the board's repository; failures are one-line E_GIT errors. */
function git(cwd: string, args: string[], options: { input?: string | Buffer; allowFail?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync('git', args, { cwd, input: options.input, maxBuffer: 1 << 30, env: options.env ?? process.env });
  if (r.error) throw new TasksError('E_GIT', `git ${args[0]} failed: ${r.error.message}`, { args }, { cause: r.error });
  const result = { status: r.status ?? 1, stdout: r.stdout as Buffer, stderr: String(r.stderr ?? '') };
  if (result.status !== 0 && !options.allowFail) {
    const line = result.stderr.trim().split('\n').filter(Boolean).pop() ?? `exit ${result.status}`;
    throw new TasksError('E_GIT', `git ${args[0]} failed: ${line}`, { args, stderr: result.stderr });
  }
  return result;
}

const out = (r: { stdout: Buffer }) => r.stdout.toString('utf8').trim();

/** git's blob id of a text, computed in process (no git call per file). */
function blobId(text: string): string {
  return objectId('blob', Buffer.from(text, 'utf8'));
}

interface TreeEntry {
  mode: string;
  type: string;
  sha: string;
}

/**
 * What this process read of git's objects, by id: an object never changes, so
 * a worker that syncs again and again reads each tree and blob once. Spawning
 * git is what a sync costs (each process forks this one); a round that finds
 * the remote where it left it runs no git but the fetch and one `cat-file --batch`.
 */
const treeCache = new Map<string, Map<string, TreeEntry>>();
const blobCache = new Map<string, string>();
/** Past this many objects a cache starts again (a long-running watcher on a busy board). */
const CACHE_LIMIT = 20_000;

function remember<V>(cache: Map<string, V>, key: string, value: V): V {
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, value);
  return value;
}

/** The top-level entries of a tree (a commit, or a tree's id), by name. */
function readTree(cwd: string, rev: string | undefined): Map<string, TreeEntry> {
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

/** The contents of blobs, by id: those not read before in one `git cat-file --batch`. */
function readBlobs(cwd: string, shas: Iterable<string>): Map<string, string> {
  const texts = new Map<string, string>();
  const wanted: string[] = [];
  for (const sha of new Set(shas)) {
    const known = blobCache.get(sha);
    if (known === undefined) wanted.push(sha);
    else texts.set(sha, known);
  }
  if (wanted.length === 0) return texts;
  const buf = git(cwd, ['cat-file', '--batch'], { input: wanted.join('\n') + '\n' }).stdout;
  let at = 0;
  for (const sha of wanted) {
    const eol = buf.indexOf(10, at);
    const header = buf.toString('utf8', at, eol).split(' ');
    if (header[1] !== 'blob') throw new TasksError('E_GIT', `git cat-file: ${sha} is not a blob (${header.join(' ')})`);
    const size = Number(header[2]);
    texts.set(sha, remember(blobCache, sha, buf.toString('utf8', eol + 1, eol + 1 + size)));
    at = eol + 1 + size + 1;
  }
  return texts;
}

/** git's id of an object: the SHA-1 of its type, size and body. */
function objectId(type: 'blob' | 'tree', body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/**
 * A tree object's body: its entries sorted as git sorts them (by name, a
 * folder's name as if it ended in `/`), each `mode name\0` and the raw id.
 * git does not check the order when it stores a tree: a test compares with
 * what `git mktree` makes of the same entries.
 */
function treeBody(entries: Iterable<[string, TreeEntry]>): Buffer {
  const key = ([name, e]: [string, TreeEntry]) => (e.type === 'tree' ? `${name}/` : name);
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(key(a)), Buffer.from(key(b))));
  return Buffer.concat(sorted.flatMap(([name, e]) => [Buffer.from(`${e.mode.replace(/^0+/, '')} ${name}\0`), Buffer.from(e.sha, 'hex')]));
}

/**
 * Stores objects of one type (one git process), returning their ids in
 * order. The ids are known beforehand (objectId), so a tree can name a tree
 * written in the same call.
 */
function writeObjects(cwd: string, type: 'blob' | 'tree', bodies: Buffer[]): string[] {
  if (bodies.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), 'dotasks-sync-'));
  try {
    const paths = bodies.map((body, i) => {
      const path = join(dir, String(i));
      writeFileSync(path, body);
      return path;
    });
    const ids = out(git(cwd, ['hash-object', '-w', '-t', type, '--no-filters', '--stdin-paths'], { input: paths.join('\n') + '\n' })).split('\n');
    bodies.forEach((body, i) => {
      if (ids[i] !== objectId(type, body)) throw new TasksError('E_GIT', `git hash-object gave ${ids[i]} for a ${type} whose id is ${objectId(type, body)}`);
    });
    return ids;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An object as `git cat-file --batch` gives it. */
interface GitObject {
  id: string;
  type: string;
  body: Buffer;
}

/**
 * Objects named by revision expressions (`ref`, `ref^{tree}`, `ref:claims`)
 * in one `git cat-file --batch`; a name that resolves to nothing (a ref not
 * there yet, a commit without the folder) is left out.
 */
function readObjects(cwd: string, names: string[]): Map<string, GitObject> {
  const buf = git(cwd, ['cat-file', '--batch'], { input: names.join('\n') + '\n' }).stdout;
  const found = new Map<string, GitObject>();
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
function parseTree(tree: GitObject): Map<string, TreeEntry> {
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

/**
 * Where a ref points and the entries of its tree, and with `claims` those of
 * its claims folder too, from objects readObjects read; the trees go into
 * the cache by id, so readTree finds them without asking git.
 */
function sideOf(objects: Map<string, GitObject>, ref: string, claims = false): { commit?: string; tree: Map<string, TreeEntry> } {
  const commit = objects.get(ref);
  if (!commit) return { tree: new Map() };
  const tree = objects.get(`${ref}^{tree}`);
  if (!tree) throw new TasksError('E_GIT', `git cat-file: ${ref} (${commit.id}) has no tree`);
  const entries = treeCache.get(tree.id) ?? remember(treeCache, tree.id, parseTree(tree));
  remember(treeCache, commit.id, entries);
  const folder = claims ? objects.get(`${ref}:${CLAIMS_DIR}`) : undefined;
  if (folder?.type === 'tree' && !treeCache.has(folder.id)) remember(treeCache, folder.id, parseTree(folder));
  return { commit: commit.id, tree: entries };
}

/** Fetches the board branch; false when the remote does not have it yet. */
function fetchBranch(cwd: string, remote: string, branch: string, trackingRef: string): boolean {
  const r = git(cwd, ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--refmap=', remote, `+refs/heads/${branch}:${trackingRef}`], {
    allowFail: true,
  });
  if (r.status !== 0) {
    if (/couldn't find remote ref|could not find remote ref/i.test(r.stderr)) return false;
    const line = r.stderr.trim().split('\n').filter(Boolean).pop() ?? `exit ${r.status}`;
    throw new TasksError('E_GIT', `git fetch ${remote} failed: ${line}`, { remote, stderr: r.stderr });
  }
  return true;
}

/** What changed from `before` to `after`, in a few words. */
function describe(before: Task | undefined, after: Task | undefined): string {
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

function tryParse(text: string | undefined, name: string): Task | undefined {
  if (text === undefined) return undefined;
  try {
    return parseTask(text, name);
  } catch {
    return undefined;
  }
}

/** Replaces id `from` by `to` in a task's edges. */
function moveEdges(task: Task, from: number, to: number): boolean {
  let moved = false;
  for (const key of ['blockedBy', 'blocks'] as const) {
    if (!task[key].includes(from)) continue;
    task[key] = [...new Set(task[key].map((x) => (x === from ? to : x)))].sort((a, b) => a - b);
    moved = true;
  }
  return moved;
}

interface Side {
  base: Map<string, TreeEntry>;
  theirs: Map<string, TreeEntry>;
  theirsCommit?: string;
  /** The entries of the remote's claims folder (its blobs are read with the merge's). */
  claimEntries: Map<string, TreeEntry>;
}

/** One round's merge: what the report says about it, the merged board and the claims to publish. */
interface Plan extends Pick<SyncReport, 'incoming' | 'outgoing' | 'renumbered' | 'conflicts' | 'withdrawn' | 'reaped'> {
  /** Files of the merged board (name → text; undefined: no such file). */
  merged: Map<string, string | undefined>;
  /** The claims to publish (`claims/task_N.json` → text). */
  claims: Map<string, string>;
}

/**
 * Merges the board with the remote inside one board transaction: writes what
 * came in, moves clashing new tasks to free ids, and returns the merged
 * board for the push.
 */
async function mergeBoard(store: TaskStore, tx: Transaction, cwd: string, side: Side): Promise<Plan> {
  const plan: Plan = { merged: new Map(), incoming: [], outgoing: [], renumbered: [], conflicts: [], withdrawn: [], reaped: [], claims: new Map() };
  const taskNames = new Set<string>();
  for (const name of [...side.base.keys(), ...side.theirs.keys()]) if (idFromFileName(name) !== undefined) taskNames.add(name);
  const localIds = store.listIds();
  for (const id of localIds) taskNames.add(taskFileName(id));
  // Ours: under the task's lock once this transaction holds it (a locked read is what a write is decided on).
  const oursText = new Map<string, string | undefined>();
  for (const name of taskNames) {
    const id = idFromFileName(name)!;
    oursText.set(name, tx.holds(id) ? tx.readText(id) : store.readTaskText(id));
  }
  const shaOf = (entry: TreeEntry | undefined) => entry?.sha;
  const oursSha = (name: string) => {
    const text = oursText.get(name);
    return text === undefined ? undefined : blobId(text);
  };
  // Blobs needed: theirs where it differs from ours, base where both sides changed.
  const needed: string[] = [];
  for (const name of taskNames) {
    const o = oursSha(name);
    const b = shaOf(side.base.get(name));
    const t = shaOf(side.theirs.get(name));
    if (t && t !== o) needed.push(t);
    if (b && o !== b) needed.push(b);
  }
  const theirsHwm = side.theirs.get(HIGHWATERMARK_FILE)?.sha;
  if (theirsHwm) needed.push(theirsHwm);
  for (const entry of side.claimEntries.values()) needed.push(entry.sha);
  const blobs = readBlobs(cwd, needed);
  const theirsClaims = parseClaims(side.claimEntries, blobs);
  const textOf = (entry: TreeEntry | undefined) => (entry ? (blobs.get(entry.sha) ?? EMPTY) : undefined);

  // The highest id anybody may have handed out: new ids for clashing tasks go above it.
  const allIds = [...taskNames].map((n) => idFromFileName(n)!);
  let next =
    Math.max(tx.readHighWaterMark(), theirsHwm ? parseHighWaterMark(blobs.get(theirsHwm), `${side.theirsCommit}:${HIGHWATERMARK_FILE}`) : 0, 0, ...allIds) + 1;

  // Clashes: an id this clone created (not in the base) that the remote also has, with other content.
  const clashes: number[] = [];
  for (const name of taskNames) {
    const o = oursText.get(name);
    const t = side.theirs.get(name);
    if (o !== undefined && t && !side.base.has(name) && blobId(o) !== t.sha) clashes.push(idFromFileName(name)!);
  }
  clashes.sort((a, b) => a - b);
  const moved = new Map<number, number>();
  for (const id of clashes) moved.set(id, next++);
  // This clone's changes (files that differ from the base) meant its own tasks by those ids: move their edges too.
  const ours = new Map<string, string | undefined>(oursText);
  if (moved.size) {
    for (const [name, text] of oursText) {
      if (text === undefined || blobId(text) === shaOf(side.base.get(name))) continue;
      const id = idFromFileName(name)!;
      const task = tryParse(text, store.taskPath(id));
      if (!task) continue;
      let changed = false;
      for (const [from, to] of moved) changed = moveEdges(task, from, to) || changed;
      if (moved.has(id)) {
        task.id = moved.get(id)!;
        changed = true;
      }
      if (!changed) continue;
      if (moved.has(id)) {
        ours.set(taskFileName(task.id), serializeTask(task));
        ours.set(name, undefined); // the old id now belongs to the remote's task
      } else ours.set(name, serializeTask(task));
    }
    for (const [from, to] of moved) {
      plan.renumbered.push({ from, to });
      taskNames.add(taskFileName(to));
    }
  }

  const writes: { id: number; path: string; local: string | undefined; merged: string | undefined; meant: string | undefined; after: Task | undefined }[] = [];
  for (const name of taskNames) {
    const id = idFromFileName(name)!;
    const path = store.taskPath(id);
    const local = oursText.get(name);
    const o = ours.get(name);
    const oSha = o === undefined ? undefined : blobId(o);
    const b = side.base.get(name);
    const t = side.theirs.get(name);
    let merged: string | undefined;
    if (oSha === t?.sha || t?.sha === b?.sha) merged = o;
    else if (oSha === b?.sha) merged = textOf(t);
    else if (o === undefined || t === undefined)
      merged = o ?? textOf(t); // removed on one side, changed on the other: the change stays
    else {
      let result;
      try {
        result = mergeTaskTextResolved(textOf(b) ?? EMPTY, o, textOf(t)!, 'theirs', path);
      } catch (error) {
        throw new TasksError('E_CORRUPT', `${(error as Error).message}; repair it (tasks doctor) and sync again`, { file: path }, { cause: error });
      }
      merged = result.text;
      for (const c of result.conflicts) plan.conflicts.push({ id, ...c });
    }
    plan.merged.set(name, merged);
    const after = tryParse(merged, path);

    if (merged !== local) writes.push({ id, path, local, merged, meant: o, after });
    if ((merged === undefined ? undefined : blobId(merged)) !== t?.sha) plan.outgoing.push({ id, what: describe(tryParse(textOf(b), path), after) });
  }
  // Every lock the writes need, asked for at once: a transaction that asks one lock at a time starts over
  // once per lock, and a sync that brings in a hundred changes would give up.
  tx.need({ tasks: writes.filter((w) => w.local !== undefined).map((w) => w.id) });
  for (const { id, path, local, merged, meant, after } of writes) {
    // Came in, or moved to a new id: written here, under the task's lock.
    if (merged === undefined) tx.removeTask(id);
    else {
      if (local === undefined) await tx.lockNewTask(id);
      tx.putText(id, merged);
    }
    if (merged === meant) continue;
    const before = moved.has(id) ? undefined : tryParse(local, path);
    plan.incoming.push({ id, what: describe(before, after) });
    if (before && before.status === 'in_progress' && before.owner && (after?.owner !== before.owner || after.status !== 'in_progress')) {
      plan.withdrawn.push({ id, owner: before.owner, winner: after?.owner ?? '' });
      if (tx.readLease(id)?.owner === before.owner) tx.dropLease(id);
      tx.event({ type: 'released', task: id, owner: before.owner, reason: `claimed on the remote by ${after?.owner || 'someone else'} first` });
    }
  }
  publishClaims(store, tx, theirsClaims, plan);
  for (const { from, to } of plan.renumbered) {
    tx.event({ type: 'renumbered', task: to, from, reason: `#${from} was taken on the remote` });
  }
  for (const change of plan.incoming) tx.event({ type: 'synced', task: change.id, what: change.what });

  const localHwm = tx.readHighWaterMark();
  const hwm = Math.max(next - 1, localHwm);
  if (hwm > localHwm) tx.setHighWaterMark(hwm);
  plan.merged.set(HIGHWATERMARK_FILE, `${hwm}\n`);
  plan.incoming.sort((a, b) => a.id - b.id);
  plan.outgoing.sort((a, b) => a.id - b.id);
  return plan;
}

/**
 * The claims to publish: this clone's claim records of tasks it still holds,
 * and the remote's for the rest of the tasks in progress. A published claim
 * whose lease ran out (and that this clone does not hold) is reaped here: the
 * task goes back to pending, as `tasks reap` does with a local one, so a
 * machine that died holding a task loses it within one lease.
 */
function publishClaims(store: TaskStore, tx: Transaction, theirsClaims: Map<number, PublishedClaim>, plan: Plan): void {
  const withdrawn = new Set(plan.withdrawn.map((w) => w.id));
  const local = new Map(listLeases(store.runtimeDir).map((l) => [l.task, l]));
  const now = Date.now();
  const expired: PublishedClaim[] = [];
  for (const id of new Set([...local.keys(), ...theirsClaims.keys()])) {
    const name = taskFileName(id);
    const text = plan.merged.get(name);
    const task = tryParse(text, store.taskPath(id));
    if (!task || task.status !== 'in_progress') continue;
    const mine = local.get(id);
    let claim: PublishedClaim | undefined;
    if (mine && mine.owner === task.owner && !withdrawn.has(id))
      claim = { task: id, owner: mine.owner, machine: mine.host || hostname(), claimedAt: mine.claimedAt, expiresAt: mine.expiresAt };
    else {
      const theirs = theirsClaims.get(id);
      if (!theirs || theirs.owner !== task.owner) continue;
      if (theirs.expiresAt !== null && Date.parse(theirs.expiresAt) + SYNC_CLOCK_GRACE_MS < now) {
        expired.push(theirs);
        continue;
      }
      claim = theirs;
    }
    plan.claims.set(name, JSON.stringify(claim, null, 2) + '\n');
  }
  // Their locks at once (see mergeBoard), then each task back to pending.
  tx.need({ tasks: expired.map((c) => c.task) });
  for (const claim of expired) {
    const id = claim.task;
    const released = tx.edit(id);
    released.status = 'pending';
    released.owner = '';
    tx.put(released);
    plan.merged.set(taskFileName(id), serializeTask(released));
    tx.event({ type: 'reaped', task: id, previousOwner: claim.owner, reason: `lease expired on ${claim.machine}` });
    plan.reaped.push({ id, owner: claim.owner, machine: claim.machine, expiredAt: claim.expiresAt! });
    if (!plan.outgoing.some((c) => c.id === id)) plan.outgoing.push({ id, what: 'reaped' });
  }
}

/** The entries of a commit's claims folder (none without one). */
function claimEntriesOf(cwd: string, commit: string | undefined, tree: Map<string, TreeEntry>): Map<string, TreeEntry> {
  if (!commit || tree.get(CLAIMS_DIR)?.type !== 'tree') return new Map();
  return readTree(cwd, tree.get(CLAIMS_DIR)!.sha);
}

/** The claims a claims folder publishes, by task id, from its entries and their blobs' texts. */
function parseClaims(entries: Map<string, TreeEntry>, blobs: Map<string, string>): Map<number, PublishedClaim> {
  const claims = new Map<number, PublishedClaim>();
  for (const [name, entry] of entries) {
    const id = idFromFileName(name);
    if (id === undefined) continue;
    try {
      const claim = JSON.parse(blobs.get(entry.sha) ?? '') as PublishedClaim;
      if (claim && claim.task === id && typeof claim.owner === 'string') claims.set(id, claim);
    } catch {
      // an unreadable claim is no claim: the task's own file still says who holds it
    }
  }
  return claims;
}

/** The commit message: what went out, one line each, under a summary line. */
function commitMessage(outgoing: SyncChange[], renumbered: { from: number; to: number }[]): string {
  const lines = outgoing.map((c) => `${c.what} #${c.id}`);
  for (const r of renumbered) lines.push(`renumbered #${r.from} → #${r.to}`);
  const summary = lines.length <= 3 ? lines.join(', ') : `${lines.slice(0, 2).join(', ')} and ${lines.length - 2} more`;
  return `${summary || 'board'} (${hostname()})\n\n${lines.join('\n')}\n`;
}

/** The committer environment of each repository this process synced (it does not change while it runs). */
const commitEnvs = new Map<string, NodeJS.ProcessEnv>();

/** A committer identity: the user's, else one naming dotasks and this machine. */
function commitEnv(cwd: string): NodeJS.ProcessEnv {
  const known = commitEnvs.get(cwd);
  if (known) return known;
  if (git(cwd, ['var', 'GIT_COMMITTER_IDENT'], { allowFail: true }).status === 0) return remember(commitEnvs, cwd, process.env);
  const name = `dotasks on ${hostname()}`;
  const email = 'dotasks@localhost';
  return remember(commitEnvs, cwd, { ...process.env, GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email });
}

/**
 * Builds the tree of the merged board on top of the remote's tree (two git
 * processes: the blobs, then the claims folder's tree and the top tree);
 * undefined when it equals the remote's.
 */
function buildTree(cwd: string, theirs: Map<string, TreeEntry>, merged: Map<string, string | undefined>, claims: Map<string, string>): string | undefined {
  const entries = new Map(theirs);
  const changed: [string, string][] = [];
  for (const [name, text] of merged) {
    if (text === undefined) entries.delete(name);
    else if (entries.get(name)?.sha !== blobId(text)) changed.push([name, text]);
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
  for (const [, text] of written) remember(blobCache, blobId(text), text);
  if (claimsTree) remember(treeCache, claimsTree, new Map(claimBlobs));
  const top = treeBody(entries);
  const [tree] = writeObjects(cwd, 'tree', claimsBody && claimsChanged ? [claimsBody, top] : [top]).slice(-1);
  // The next round's base is this tree's commit: its entries are known without asking git.
  remember(treeCache, tree, entries);
  return tree;
}

/**
 * Brings the remote's board in and this board out, until the push is
 * accepted (see the module comment).
 */
export async function syncBoard(store: TaskStore, options: SyncOptions = {}): Promise<SyncReport> {
  const cwd = store.dir;
  const remote = options.remote ?? store.config.syncRemote;
  const branch = options.branch ?? store.config.syncBranch;
  // What cannot change while a process syncs again and again (a worker) is looked up once.
  const checked = `${cwd}\0${remote}`;
  const url = checkedRemotes.has(checked) ? { status: 0, stderr: '' } : git(cwd, ['remote', 'get-url', remote], { allowFail: true });
  if (url.status === 0) checkedRemotes.add(checked);
  else {
    if (/not a git repository/i.test(url.stderr)) throw new TasksError('E_USAGE', `the board ${cwd} is not in a git repository; sync needs one with a remote`);
    throw new TasksError('E_USAGE', `no git remote named '${remote}'; add one (git remote add ${remote} URL) or pass --remote`, { remote });
  }
  const branchChecked = `${checked}\0${branch}`;
  if (!checkedRemotes.has(branchChecked)) {
    if (git(cwd, ['check-ref-format', `refs/heads/${branch}`], { allowFail: true }).status !== 0 || branch.startsWith('-'))
      throw new TasksError('E_USAGE', `not a usable branch name: '${branch}'`, { branch });
    checkedRemotes.add(branchChecked);
  }
  const trackingRef = `refs/dotasks/remote/${remote}/${branch}`;
  const syncedRef = `refs/dotasks/synced/${remote}/${branch}`;
  const report: SyncReport = { remote, branch, incoming: [], outgoing: [], renumbered: [], conflicts: [], withdrawn: [], reaped: [], warnings: [], rounds: 0 };
  if (!checkedRemotes.has(`${checked}\0tracked`)) {
    report.warnings = trackedWarning(cwd);
    checkedRemotes.add(`${checked}\0tracked`);
  }
  const maxRounds = options.maxRounds ?? 50;
  // One sync at a time per clone (two workers of one clone share its refs); taken before any board lock.
  return withLock(join(store.runtimeDir, SYNC_LOCK), store.lockOptions, () =>
    rounds(store, cwd, { remote, branch, trackingRef, syncedRef, report, maxRounds }),
  );
}

async function rounds(
  store: TaskStore,
  cwd: string,
  {
    remote,
    branch,
    trackingRef,
    syncedRef,
    report,
    maxRounds,
  }: { remote: string; branch: string; trackingRef: string; syncedRef: string; report: SyncReport; maxRounds: number },
): Promise<SyncReport> {
  let env: NodeJS.ProcessEnv | undefined;
  for (let round = 1; round <= maxRounds; round++) {
    report.rounds = round;
    const fetched = fetchBranch(cwd, remote, branch, trackingRef);
    // Both refs, their trees and the remote's claims folder in one git process.
    const objects = readObjects(cwd, [trackingRef, `${trackingRef}^{tree}`, `${trackingRef}:${CLAIMS_DIR}`, syncedRef, `${syncedRef}^{tree}`]);
    const remoteSide = fetched ? sideOf(objects, trackingRef, true) : { tree: new Map<string, TreeEntry>() };
    const baseSide = sideOf(objects, syncedRef);
    const theirsCommit = remoteSide.commit;
    const baseCommit = baseSide.commit;
    const theirs = remoteSide.tree;
    const side: Side = {
      base: baseCommit === theirsCommit ? theirs : baseSide.tree,
      theirs,
      theirsCommit,
      claimEntries: claimEntriesOf(cwd, theirsCommit, theirs),
    };
    const { value: plan } = await store.transact({ board: true }, (tx) => mergeBoard(store, tx, cwd, side));
    // What came in is on disk now: the remote's head is the base of whatever this clone changes next.
    if (theirsCommit && theirsCommit !== baseCommit) git(cwd, ['update-ref', syncedRef, theirsCommit]);
    mergeInto(report, plan);

    const tree = buildTree(cwd, side.theirs, plan.merged, plan.claims);
    if (tree === undefined) {
      lastSynced.set(store.dir, Date.now());
      report.head = theirsCommit;
      return report;
    }
    const parents = theirsCommit ? ['-p', theirsCommit] : [];
    const commit = out(git(cwd, ['commit-tree', tree, ...parents], { input: commitMessage(plan.outgoing, plan.renumbered), env: (env ??= commitEnv(cwd)) }));
    const committed = treeCache.get(tree);
    if (committed) remember(treeCache, commit, committed);
    const push = git(cwd, ['push', '--porcelain', '--quiet', remote, `${commit}:refs/heads/${branch}`], { allowFail: true });
    if (push.status === 0) {
      git(cwd, ['update-ref', '--stdin'], { input: `update ${syncedRef} ${commit}\nupdate ${trackingRef} ${commit}\n` });
      lastSynced.set(store.dir, Date.now());
      report.head = commit;
      return report;
    }
    const said = push.stdout.toString('utf8') + push.stderr;
    if (!/rejected|non-fast-forward|fetch first|stale info|failed to update ref|cannot lock ref/i.test(said)) {
      const line = said.trim().split('\n').filter(Boolean).pop() ?? `exit ${push.status}`;
      throw new TasksError('E_GIT', `git push to ${remote} failed: ${line}`, { remote, branch });
    }
    // Another clone pushed first: fetch what it pushed and merge again, after a short random wait that
    // grows with the rounds, so clones that keep colliding spread out instead of colliding again.
    await sleep(Math.random() * Math.min(500, 10 * 2 ** Math.min(round, 6)));
  }
  throw new TasksError('E_GIT', `sync gave up after ${maxRounds} rounds: other clones kept pushing to ${remote}/${branch} first; run it again`, {
    remote,
    branch,
  });
}

/**
 * Task files committed on the code branch fight the board branch: checking
 * out an older commit rewrites them, and the next sync would publish that
 * as a change. Says so (docs/decisions.md, "Several machines: the board branch").
 */
function trackedWarning(cwd: string): string[] {
  const r = git(cwd, ['ls-files', '--', 'task_*.json', '.highwatermark'], { allowFail: true });
  const count = r.status === 0 ? out(r).split('\n').filter(Boolean).length : 0;
  return count
    ? [
        `${count} board file(s) are committed on the code branch too; with tasks sync the board branch is the truth: untrack them (git rm -r --cached .tasks/task_*.json .tasks/.highwatermark) so a checkout cannot roll the board back`,
      ]
    : [];
}

/** Folds a round's plan into the report (later rounds only add what they newly brought in). */
function mergeInto(report: SyncReport, plan: Plan): void {
  const add = <T>(list: T[], items: T[], key: (x: T) => string) => {
    const seen = new Set(list.map(key));
    for (const item of items) if (!seen.has(key(item))) list.push(item);
  };
  add(report.incoming, plan.incoming, (c) => `${c.id}:${c.what}`);
  add(report.renumbered, plan.renumbered, (r) => `${r.from}`);
  add(report.conflicts, plan.conflicts, (c) => `${c.id}:${c.field}`);
  add(report.withdrawn, plan.withdrawn, (w) => `${w.id}`);
  add(report.reaped, plan.reaped, (r) => `${r.id}`);
  // What goes out is what the last round pushed (earlier rounds' pushes were refused).
  report.outgoing = plan.outgoing;
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
    // What the board says after the sync decides, not this sync's report: another process of this
    // clone may have synced in between and withdrawn the claim already.
    const now = store.getTask(result.task.id);
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
