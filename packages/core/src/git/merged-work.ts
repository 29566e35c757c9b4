// Merged means done (docs/protocol.md, "The way back to main"): with
// "mergedMeansDone": true in config.json, an open task whose branch the
// target holds (by `tasks merge`, a person's `git merge`, a pull request
// merged elsewhere and pulled) completes by itself. Looked at by `tasks
// watch` when the target's ref changes and by the commands that hand out
// work; merged-look.ts keeps the look cheap while the target stays put.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { isClosed } from '../format/format.js';
import { atomicWriteFile, ensureFolder } from '../fs/fsio.js';
import type { MutationResult, TaskStore } from '../store.js';
import { taskBranch, type MergedRecord } from './branch-status.js';
import { MERGED_LOOK_FILE, mergedLookDue, type TargetState } from './merged-look.js';
import { branchCreationPoint, branchTip, repositoryDirs } from './refs.js';

/** A task merged-means-done completed. */
export interface MergedCompletion {
  id: number;
  branch: string;
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

/** The tips among `tips` that `targetSha` holds: one git for all the branches. */
function heldBy(repo: string, targetSha: string, tips: string[]): Set<string> {
  if (tips.length === 0) return new Set();
  const out = execFileSync('git', ['for-each-ref', `--merged=${targetSha}`, '--format=%(objectname)', 'refs/heads/'], {
    cwd: repo,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const merged = new Set(out.split('\n').filter(Boolean));
  return new Set(tips.filter((tip) => merged.has(tip)));
}

/**
 * Completes every open task whose branch the target holds, when
 * "mergedMeansDone" is on and the target moved since the last look; each
 * completion is its own transaction, made for the task's owner, with
 * `metadata.merged`. Remembers the target once all of them are done.
 */
export async function completeMergedTasks(store: TaskStore, options: { actor?: string } = {}): Promise<MergedCompletion[]> {
  const due = mergedLookDue(store.dir, store.config);
  if (!due) return [];
  const repo = repositoryDirs(dirname(store.dir));
  if (!repo) return [];
  const open = candidates(store, repo.commonDir);
  const held = heldBy(
    repo.mainRoot,
    due.sha,
    open.map((c) => c.tip),
  );
  const done: MergedCompletion[] = [];
  for (const c of open) {
    if (!held.has(c.tip)) continue;
    const merged: MergedRecord = { into: due.target, commit: due.sha };
    const result = await store.completeTask(c.id, { actor: c.owner || options.actor, force: true, metadata: { merged } });
    done.push({ id: c.id, branch: c.branch, result });
  }
  rememberLook(store, due);
  return done;
}

/** Writes what was settled, so the next look starts git only once the target moves again. */
function rememberLook(store: TaskStore, state: TargetState): void {
  ensureFolder(store.runtimeDir);
  atomicWriteFile(join(store.runtimeDir, MERGED_LOOK_FILE), JSON.stringify(state) + '\n');
}
