// Merged means done (docs/protocol.md, "The way back to main"): with
// "mergedMeansDone": true in config.json, an open task whose branch the
// target holds (by `tasks merge`, a person's `git merge`, a pull request
// merged elsewhere and pulled) completes by itself; one that requires
// review waits for it instead (a merge made outside dotasks is no verdict).
// Looked at by `tasks watch` when the target's ref changes and by the
// commands that hand out work; merged-look.ts keeps the look cheap while
// the target stays put.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { inReview, isClosed } from '../format/format.js';
import { atomicWriteFile, ensureFolder } from '../fs/fsio.js';
import type { MutationResult, TaskStore } from '../store.js';
import { taskBranch, type MergedRecord } from './branch-status.js';
import { MERGED_LOOK_FILE, mergedLookDue, readMergedLook, type TargetState } from './merged-look.js';
import { branchCreationPoint, branchTip, repositoryDirs } from './refs.js';

/** A task merged-means-done completed, or (one that requires review) left waiting for review. */
export interface MergedCompletion {
  id: number;
  branch: string;
  /** The target that holds the branch. */
  into: string;
  /** It requires review and waits for it (put there by this look, or there already): a merge outside dotasks approves nothing. */
  waitsForReview: boolean;
  result: MutationResult;
}

/** The open tasks whose branch has commits of its own, with the tip they have now. */
function candidates(store: TaskStore, commonDir: string): { id: number; owner: string; branch: string; tip: string }[] {
  const out: { id: number; owner: string; branch: string; tip: string }[] = [];
  for (const task of store.loadBoard().tasks) {
    if (isClosed(task.status)) continue;
    const branch = taskBranch(task);
    const tip = branch && branchTip(commonDir, branch);
    if (!branch || !tip) continue;
    // A branch not yet worked on is held by the target it was made from: merged needs commits of its own.
    const creation = branchCreationPoint(commonDir, branch);
    if (creation === undefined || creation === tip) continue;
    out.push({ id: task.id, owner: task.owner, branch, tip });
  }
  return out;
}

/**
 * The tips among `tips` that `targetSha` holds and `settledSha` (the target
 * the last look settled) did not: one git for all the branches. A tip the
 * last look saw held was acted on then; a task sent back from review since
 * is not put back by the merge it already had.
 */
function newlyHeld(repo: string, targetSha: string, settledSha: string | undefined, tips: string[]): Set<string> {
  if (tips.length === 0) return new Set();
  const refsHeld = (notBy: string | undefined) =>
    execFileSync('git', ['for-each-ref', `--merged=${targetSha}`, ...(notBy ? [`--no-merged=${notBy}`] : []), '--format=%(objectname)', 'refs/heads/'], {
      cwd: repo,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  let out: string;
  try {
    out = refsHeld(settledSha);
  } catch (error) {
    if (!settledSha) throw error;
    out = refsHeld(undefined); // the settled commit is gone (a history rewritten and pruned): look at everything the target holds
  }
  const merged = new Set(out.split('\n').filter(Boolean));
  return new Set(tips.filter((tip) => merged.has(tip)));
}

/**
 * Completes every open task whose branch the target now holds, when
 * "mergedMeansDone" is on and the target moved since the last look; each
 * completion is its own transaction, made for the task's owner, with
 * `metadata.merged`. A task that requires review goes into review instead,
 * or stays there (closing.ts: nothing skips review). Remembers the target
 * once all of them are done.
 */
export async function completeMergedTasks(store: TaskStore, options: { actor?: string } = {}): Promise<MergedCompletion[]> {
  const due = mergedLookDue(store.dir, store.config);
  if (!due) return [];
  const repo = repositoryDirs(dirname(store.dir));
  if (!repo) return [];
  const open = candidates(store, repo.commonDir);
  const settled = readMergedLook(store.dir);
  const held = newlyHeld(
    repo.mainRoot,
    due.sha,
    settled?.target === due.target ? settled.sha : undefined,
    open.map((c) => c.tip),
  );
  const done: MergedCompletion[] = [];
  for (const c of open) {
    if (!held.has(c.tip)) continue;
    const merged: MergedRecord = { into: due.target, commit: due.sha };
    const result = await store.completeTask(c.id, { actor: c.owner || options.actor, force: true, metadata: { merged } });
    done.push({ id: c.id, branch: c.branch, into: due.target, waitsForReview: inReview(result.task), result });
  }
  rememberLook(store, due);
  return done;
}

/** Writes what was settled, so the next look starts git only once the target moves again. */
function rememberLook(store: TaskStore, state: TargetState): void {
  ensureFolder(store.runtimeDir);
  atomicWriteFile(join(store.runtimeDir, MERGED_LOOK_FILE), JSON.stringify(state) + '\n');
}
