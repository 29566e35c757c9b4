/**
 * The board branch's tree, sharded by id (docs/protocol.md, "The board
 * branch"): `tasks/<N div 100>/task_N.json`, so a sync that changes one task
 * writes its blob, its shard's tree, the `tasks` tree, the root tree and the
 * commit, and reuses every other shard's tree as the remote has it. A branch
 * an earlier dotasks wrote keeps its task files flat at the root (format 1);
 * it is read the same way and moved into shards by the next push.
 *
 * A round works with the flat view (`task_N.json` → entry, wherever the file
 * sits, and the root's other entries: `.highwatermark`, `claims`, the
 * marker), which is all the merge knows of; only this file knows where the
 * entries sit.
 */
import { TasksError } from '../errors.js';
import { idFromFileName } from '../format/format.js';
import { blobId, knownTree, objectId, readObjects, rememberTree, treeBody, treeOf, type GitObject, type TreeEntry } from './git-objects.js';
import { storeObjects } from './object-store.js';

/** The folder of the sharded task files, at the root of the branch's tree. */
export const TASKS_DIR = 'tasks';

/** Task ids per shard folder: a change rewrites a tree of at most this many entries, and the `tasks` tree has one per hundred ids. */
export const SHARD_SIZE = 100;

/** The shard folder of a task id: `123` for task_12345.json. */
export function shardOf(id: number): string {
  return String(Math.floor(id / SHARD_SIZE));
}

/** A board branch's tree as a round reads it: the flat view, and where each task file sits. */
export interface BoardTree {
  /** The root tree's id (undefined: no tree, the branch is empty or missing). */
  id?: string;
  /** The flat view: every task file by name, and the root's other entries (not the `tasks` folder). */
  entries: Map<string, TreeEntry>;
  /** The root tree's entries as they are. */
  root: Map<string, TreeEntry>;
  /** The `tasks` folder's entries (shard folders), and each shard folder's entries. */
  tasks: Map<string, TreeEntry>;
  shards: Map<string, Map<string, TreeEntry>>;
  /** Where a task file of the flat view sits: the shard folder's name, or '' for the root. */
  where: Map<string, string>;
}

export const emptyBoardTree = (): BoardTree => ({ entries: new Map(), root: new Map(), tasks: new Map(), shards: new Map(), where: new Map() });

/** The flat views this process read or wrote, by root tree id (a worker syncs again and again over the same trees). */
const boards = new Map<string, BoardTree>();

/**
 * Reads a board branch's tree (root tree id and entries) into the flat view:
 * the shard folders in one `git cat-file --batch` (none for a flat, format 1
 * tree, and none that this process read before). A task file in a shard is
 * listed before one of the same name at the root (a hand-made mix); one in
 * another shard than its own is listed where it is, and moved by the next push.
 */
export function readBoardTree(cwd: string, id: string | undefined, root: Map<string, TreeEntry>): BoardTree {
  if (id === undefined) return { ...emptyBoardTree(), root: new Map(root), entries: new Map(root) };
  const known = boards.get(id);
  if (known) return known;
  const board: BoardTree = { ...emptyBoardTree(), id, root };
  const folder = root.get(TASKS_DIR);
  if (folder?.type === 'tree') {
    board.tasks = treeOfId(cwd, folder.sha);
    const shardIds = [...board.tasks.values()].filter((e) => e.type === 'tree').map((e) => e.sha);
    readTrees(cwd, shardIds);
    for (const [shard, entry] of board.tasks) {
      if (entry.type !== 'tree') continue;
      const entries = treeOfId(cwd, entry.sha);
      board.shards.set(shard, entries);
      for (const [name, e] of entries) {
        const taskId = idFromFileName(name);
        if (taskId === undefined) continue;
        // Its own shard first, then the first other one it turns up in.
        if (!board.where.has(name) || shardOf(taskId) === shard) {
          board.entries.set(name, e);
          board.where.set(name, shard);
        }
      }
    }
  }
  for (const [name, entry] of root) {
    if (name === TASKS_DIR && entry.type === 'tree') continue;
    if (idFromFileName(name) !== undefined) {
      if (board.where.has(name)) continue;
      board.where.set(name, '');
    }
    board.entries.set(name, entry);
  }
  // A few boards: the remote's head, this clone's base, the tree just written (each holds every task's entry).
  if (boards.size >= 8) boards.delete(boards.keys().next().value!);
  boards.set(id, board);
  return board;
}

/** Reads the trees not known yet in one git process (they land in git-objects.ts's cache). */
function readTrees(cwd: string, ids: string[]): void {
  if (ids.length === 0) return;
  const wanted = ids.filter((id) => !knownTree(id));
  for (const object of readObjects(cwd, wanted).values()) if (object.type === 'tree') treeOf(object);
}

/** Where a name of the flat view sits on the branch: `tasks/0/task_5.json`, or the name itself at the root. */
export function pathIn(board: BoardTree, name: string): string {
  const at = board.where.get(name);
  return at ? `${TASKS_DIR}/${at}/${name}` : name;
}

/** Records a tree read with other objects (the `tasks` folder, read with the round's look at the remote). */
export function learnTree(object: GitObject | undefined): void {
  if (object?.type === 'tree') treeOf(object);
}

function treeOfId(cwd: string, id: string): Map<string, TreeEntry> {
  readTrees(cwd, [id]);
  const entries = knownTree(id);
  // A folder of the branch that cannot be read would hide its tasks: the sync stops instead.
  if (!entries) throw new TasksError('E_GIT', `git could not read the tree ${id} of the board branch; run git fsck`);
  return entries;
}

/** A tree being built on top of `onto`: the root, the `tasks` folder and the shards it changed, the blobs to write. */
interface TreeEdit {
  onto: BoardTree;
  root: Map<string, TreeEntry>;
  tasks: Map<string, TreeEntry>;
  shards: Map<string, Map<string, TreeEntry>>;
  blobs: Map<string, string>;
}

/** A claims folder as the push carries it: its tree entry and body, and its files' texts (none: no folder). */
export interface ClaimsFolder {
  entry?: TreeEntry;
  body?: Buffer;
  texts: string[];
}

/**
 * Builds the tree of the merged board on top of `onto`: `files` maps a name
 * of the flat view to its new text (undefined: left out); names not in it
 * keep their entry, moved into their shard when they are not there yet (a
 * flat tree is moved whole). `rootFiles` are the root's own changes
 * (the marker; undefined removes a name), `claims` the claims folder.
 * Writes what the remote does not have yet (the changed blobs, the changed
 * trees) and returns the root tree's id, the same as
 * `onto.id` when nothing changed.
 */
export function writeBoardTree(
  cwd: string,
  onto: BoardTree,
  files: Map<string, string | undefined>,
  rootFiles: Map<string, string | undefined>,
  claims: ClaimsFolder,
): { id: string; blobs: string[] } {
  const edit: TreeEdit = { onto, root: new Map(onto.root), tasks: new Map(onto.tasks), shards: new Map(), blobs: new Map() };
  placeTaskFiles(edit, files);
  placeRootFiles(edit, rootFiles, claims);
  return writeEdit(cwd, edit, claims);
}

/** A shard's entries in the edit, copied from onto's the first time it is changed. */
function shardIn(edit: TreeEdit, name: string): Map<string, TreeEntry> {
  let entries = edit.shards.get(name);
  if (!entries) edit.shards.set(name, (entries = new Map(edit.onto.shards.get(name) ?? [])));
  return entries;
}

function blobIn(edit: TreeEdit, text: string): TreeEntry {
  const sha = blobId(text);
  edit.blobs.set(sha, text);
  return { mode: '100644', type: 'blob', sha };
}

/** Every task file goes to its own shard: those the merge changed, and those that sit elsewhere (a flat tree). */
function placeTaskFiles(edit: TreeEdit, files: Map<string, string | undefined>): void {
  const { onto, root } = edit;
  const moving = new Map<string, TreeEntry | undefined>();
  for (const [name, at] of onto.where) if (at !== shardOf(idFromFileName(name)!)) moving.set(name, onto.entries.get(name));
  for (const [name, text] of files) {
    if (idFromFileName(name) === undefined) {
      if (text === undefined) root.delete(name);
      else if (root.get(name)?.sha !== blobId(text) || root.get(name)?.type !== 'blob') root.set(name, blobIn(edit, text));
      continue;
    }
    const entry = onto.entries.get(name);
    if (text === undefined) moving.set(name, undefined);
    else if (entry?.type !== 'blob' || entry.sha !== blobId(text) || moving.has(name)) moving.set(name, blobIn(edit, text));
  }
  for (const [name, entry] of moving) {
    const at = onto.where.get(name);
    if (at === '') root.delete(name);
    else if (at !== undefined) shardIn(edit, at).delete(name);
    if (entry) shardIn(edit, shardOf(idFromFileName(name)!)).set(name, entry);
  }
  // A name of the root that is also in a shard was listed from the shard: the root's copy goes (its history keeps it).
  for (const [name, at] of onto.where) if (at !== '' && root.has(name)) root.delete(name);
}

/** The root's own files (the marker) and the claims folder. */
function placeRootFiles(edit: TreeEdit, rootFiles: Map<string, string | undefined>, claims: ClaimsFolder): void {
  const { root } = edit;
  for (const [name, text] of rootFiles) {
    if (text === undefined) root.delete(name);
    else if (root.get(name)?.sha !== blobId(text)) root.set(name, blobIn(edit, text));
  }
  // board-branch.ts's CLAIMS_DIR (not imported: that file imports this one).
  if (claims.entry) root.set('claims', claims.entry);
  else root.delete('claims');
  if (claims.entry && edit.onto.root.get('claims')?.sha !== claims.entry.sha) for (const text of claims.texts) blobIn(edit, text);
}

/** The changed trees, bottom up, and what the remote does not have yet, written (object-store.ts: loose by this process, or one pack). */
function writeEdit(cwd: string, edit: TreeEdit, claims: ClaimsFolder): { id: string; blobs: string[] } {
  const { onto, root, tasks } = edit;
  const trees: Buffer[] = [];
  const written = new Map<string, Map<string, TreeEntry>>();
  const tree = (entries: Map<string, TreeEntry>, was: TreeEntry | undefined): TreeEntry => {
    const body = treeBody(entries);
    const sha = objectId('tree', body);
    if (was?.sha !== sha) {
      trees.push(body);
      written.set(sha, entries);
    }
    return { mode: '040000', type: 'tree', sha };
  };
  for (const [name, entries] of edit.shards) {
    if (entries.size === 0) tasks.delete(name);
    else tasks.set(name, tree(entries, onto.tasks.get(name)));
  }
  if (tasks.size) root.set(TASKS_DIR, tree(tasks, onto.root.get(TASKS_DIR)));
  else root.delete(TASKS_DIR);
  if (claims.body && claims.entry && onto.root.get('claims')?.sha !== claims.entry.sha) trees.push(claims.body);
  const top = treeBody(root);
  const id = objectId('tree', top);
  if (id === onto.id) return { id, blobs: [] };
  const blobs = [...edit.blobs.values()];
  storeObjects(cwd, [
    ...blobs.map((text) => ({ type: 'blob' as const, body: Buffer.from(text, 'utf8') })),
    ...[...trees, top].map((body) => ({ type: 'tree' as const, body })),
  ]);
  for (const [sha, entries] of written) rememberTree(sha, entries);
  // The next round's base is this tree's commit: its flat view is known without asking git.
  rememberTree(id, root);
  readBoardTree(cwd, id, root);
  return { id, blobs };
}
