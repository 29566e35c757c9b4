/**
 * What a round's merge needs to know from git, asked before the board lock
 * is taken (docs/decisions.md, "No git inside a board transaction"): the
 * texts of the remote's and the base's blobs, and which task branches exist
 * here. The merge itself (board-merge.ts) runs no git: a git that waits on
 * its own locks or reads a large object store would hold every other
 * command of the board up while it ran.
 *
 * The board is read here without its locks, so what the merge finds under
 * them may differ. Each case is covered: a blob equal to a file read here is
 * that file's text (so a file changed since still finds every blob it needs),
 * and a task that clashes only under the lock, whose branches were not
 * looked up here, makes the round look again (StaleLook).
 */
import { TasksError } from '../errors.js';
import { idFromFileName, taskFileName } from '../format/format.js';
import { HIGHWATERMARK_FILE } from '../engine/transaction.js';
import type { TaskStore } from '../store.js';
import { blobId, git, readBlobs, type TreeEntry } from './git-objects.js';
import { taskTextReader } from './file-texts.js';

/** The trees of a round, as far as the look before the merge needs them. */
export interface MergeTrees {
  base: Map<string, TreeEntry>;
  synced: Map<string, TreeEntry>;
  theirs: Map<string, TreeEntry>;
  claimEntries: Map<string, TreeEntry>;
}

/** What git said before the board lock: everything a round's merge reads of it. */
export interface MergeFacts {
  /** Blob texts by id: the task entries of the three trees (or this board's file they equal), the claims, the mark. */
  blobs: Map<string, string>;
  /** The local branches, when a task of this clone may move to a free id (its worktree's branch moves with it). */
  branches?: Set<string>;
}

/** The merge met a case the look before the lock did not prepare it for: the round looks again. */
export class StaleLook extends Error {}

/** Reads, outside the board lock, what the merge of these trees will need of git. */
export function lookBeforeMerge(store: TaskStore, cwd: string, trees: MergeTrees): MergeFacts {
  const names = new Set<string>();
  for (const tree of [trees.base, trees.theirs, trees.synced]) for (const name of tree.keys()) if (idFromFileName(name) !== undefined) names.add(name);
  for (const id of store.listIds()) names.add(taskFileName(id));
  const ours = new Map<string, string>();
  const read = taskTextReader(store);
  for (const name of names) {
    const text = readUnlocked(read, idFromFileName(name)!);
    if (text !== undefined) ours.set(name, text);
  }
  const needed: string[] = [];
  for (const name of names) {
    const oSha = ours.has(name) ? blobId(ours.get(name)!) : undefined;
    for (const tree of [trees.base, trees.theirs, trees.synced]) {
      const entry = tree.get(name);
      if (entry?.type === 'blob' && entry.sha !== oSha) needed.push(entry.sha);
    }
  }
  const mark = trees.theirs.get(HIGHWATERMARK_FILE);
  if (mark?.type === 'blob') needed.push(mark.sha);
  for (const entry of trees.claimEntries.values()) if (entry.type === 'blob') needed.push(entry.sha);
  const blobs = readBlobs(cwd, needed);
  for (const text of ours.values()) if (!blobs.has(blobId(text))) blobs.set(blobId(text), text);
  return { blobs, branches: mayMove(trees, ours) ? localBranches(cwd) : undefined };
}

/** A task file as it is now, read without its lock (undefined: none, or one the merge will find unreadable). */
function readUnlocked(read: (id: number) => string | undefined, id: number): string | undefined {
  try {
    return read(id);
  } catch (error) {
    if (error instanceof TasksError && error.code === 'E_CORRUPT') return undefined;
    throw error;
  }
}

/** Whether a task of this clone (not in what it last synced) has an id the remote has another task under. */
function mayMove(trees: MergeTrees, ours: Map<string, string>): boolean {
  for (const [name, text] of ours) {
    const theirs = trees.theirs.get(name);
    if (theirs && !trees.synced.has(name) && theirs.sha !== blobId(text)) return true;
  }
  return false;
}

/** The names of the local branches, in one git process. */
function localBranches(cwd: string): Set<string> {
  const r = git(cwd, ['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/'], { allowFail: true });
  return new Set(r.status === 0 ? r.stdout.toString('utf8').split('\n').filter(Boolean) : []);
}
