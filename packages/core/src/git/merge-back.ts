// `tasks merge ID` (docs/protocol.md, "The way back to main"): brings a
// task's branch into its target, one merge at a time on the machine (the
// merge slot), with the checks run on the merged result before the target
// moves; then completes the task (one transaction) and removes its worktree
// and its branch. What can refuse is looked at before the slot is taken;
// a conflict, a failing check or a target that moved meanwhile leave the
// branch, the target and the board as they were.
import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { TasksError } from '../errors.js';
import { inReview, type Task } from '../format/format.js';
import { finishesIntoReview } from '../engine/review-entry.js';
import { openBlockers } from '../graph/graph.js';
import { printable } from '../views/printable.js';
import type { MutationResult, TaskStore } from '../store.js';
import { boardRepositoryDirs, taskBranch, type MergedRecord } from './branch-status.js';
import type { CheckRun } from '../runtime/verify-run.js';
import { checkFailed, mergeCheckCommand, runChecks } from './merge-checks.js';
import {
  gitText,
  makeMergedCommit,
  moveTarget,
  removeLeftScratch,
  removeScratch,
  scratchCheckout,
  type MergeInput,
  type MergedCommit,
} from './merge-result.js';
import { takeMergeSlot, type MergeSlotWait } from './merge-slot.js';
import { branchCreationPoint, branchTip, mergeTargetOf } from './refs.js';
import { isWorktreeDirty, removeTaskWorktree } from './worktrees.js';

export interface MergeTaskOptions {
  /** The acting owner: the task's owner, or anyone with `force`. */
  actor?: string;
  /** Merge someone else's task, or one whose blockers are open. */
  force?: boolean;
  /** Fast-forward the target when it has nothing the branch lacks (default: always a merge commit). */
  ff?: boolean;
  /** Where the command runs: a worktree it runs in is left in place (removing it would pull the floor from under its shell). */
  cwd?: string;
  /** Told once, after a second, when another merge holds the slot. */
  onWait?: (wait: MergeSlotWait) => void;
}

export interface MergeTaskResult {
  task: Task;
  unblocked: number[];
  branch: string;
  target: string;
  /** How the target moved; `already` when it held the branch already. */
  how: MergedCommit['how'] | 'already';
  /** The target before and after. */
  from: string;
  to: string;
  check?: CheckRun;
  worktreeRemoved: boolean;
  branchDeleted: boolean;
  /** What was left undone after the merge (a worktree kept, a branch that moved meanwhile). */
  notes: string[];
  /** The task waited for review, and this merge approved it (as `actor`). */
  approved: boolean;
}

/** A merge as planned before the slot: the task, its branch, the target, its worktree. */
interface MergePlan {
  store: TaskStore;
  options: MergeTaskOptions;
  task: Task;
  repo: string;
  commonDir: string;
  branch: string;
  target: string;
  worktree?: string;
  /** The command runs inside the task's worktree. */
  inWorktree: boolean;
}

/** Merges task `id`'s branch into its target, completes the task and removes its worktree and branch. */
export async function mergeTask(store: TaskStore, id: number, options: MergeTaskOptions = {}): Promise<MergeTaskResult> {
  const plan = planMerge(store, id, options);
  const slot = await takeMergeSlot(store, { owner: options.actor ?? '', task: id, onWait: options.onWait });
  let merged: InSlot;
  let completion: MutationResult;
  try {
    merged = await mergeInSlot(plan, () => slot.lock.assertHeld());
    completion = await completeMerged(plan, merged.to);
  } finally {
    await slot.release().catch(() => undefined);
  }
  const cleanup = await cleanUp(plan, merged);
  const { how, from, to, check } = merged;
  const task = cleanup.worktreeRemoved ? (store.peekTask(id) ?? completion.task) : completion.task;
  const approved = completion.events.some((e) => e.type === 'review.approved' && e.task === id);
  return { task, unblocked: completion.unblocked, branch: plan.branch, target: plan.target, how, from, to, check, ...cleanup, approved };
}

/** What refuses before anything is taken: the task, its branch, its target, whose it is, uncommitted work in its worktree. */
function planMerge(store: TaskStore, id: number, options: MergeTaskOptions): MergePlan {
  const task = store.getTask(id);
  if (task.status === 'deleted') throw new TasksError('E_TRANSITION', `task #${id} is deleted; there is nothing to merge`, { id });
  const { mainRoot: repo, commonDir } = boardRepositoryDirs(store.dir);
  const recorded = taskBranch(task);
  const patterned = store.config.branchPattern.replaceAll('{id}', String(id));
  const branch = recorded ?? (branchTip(commonDir, patterned) ? patterned : undefined);
  if (!branch || !branchTip(commonDir, branch))
    throw new TasksError(
      'E_NOT_FOUND',
      `task #${id} has no branch${branch ? ` (${branch} is gone)` : ''}; nothing to merge ('tasks claim ${id} --worktree' makes one)`,
      {
        id,
      },
    );
  const target = mergeTargetOf(store.config, { mainRoot: repo, commonDir });
  if (!branchTip(commonDir, target))
    throw new TasksError('E_GIT', `the merge target ${target} is not a branch of ${repo}; set "mergeTarget" in .tasks/config.json`);
  if (branch === target) throw new TasksError('E_INVALID', `task #${id}'s branch is ${target} itself, the merge target; nothing to merge`, { id });
  assertReviewedMerge(store, task, options.actor);
  if (task.status !== 'completed' && !options.force) {
    // A task in review is merged by someone other than its owner: the merge is its approval.
    if (!inReview(task) && task.owner !== '' && options.actor !== undefined && task.owner !== options.actor)
      throw new TasksError('E_NOT_OWNER', `task #${id} belongs to ${task.owner}; only they merge it, or add --force`, { id, owner: task.owner });
    const open = openBlockers(task, (n) => store.peekTask(n));
    if (open.length)
      throw new TasksError('E_BLOCKED', `task #${id} is still blocked by ${open.map((b) => `#${b}`).join(', ')}; merge those first or add --force`, {
        id,
        blockedBy: open,
      });
  }
  const path = typeof task.metadata?.worktree === 'string' && task.metadata.worktree !== '' ? task.metadata.worktree : undefined;
  const worktree = path && existsSync(path) ? path : undefined;
  if (worktree && isWorktreeDirty(worktree))
    throw new TasksError(
      'E_DIRTY',
      `the worktree of #${id} (${worktree}) has uncommitted changes, which a merge would leave out; commit them, then 'tasks merge ${id}' again`,
      {
        id,
        path: worktree,
      },
    );
  const rel = worktree ? relative(resolve(worktree), resolve(options.cwd ?? process.cwd())) : '..';
  const inWorktree = rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  return { store, options, task, repo, commonDir, branch, target, worktree: path, inWorktree };
}

/**
 * A merge lands reviewed work only (docs/protocol.md, "Review"): the merge
 * of a task waiting for review, by someone other than its owner, is its
 * approval; its owner's is refused, and so is any merge of open work that
 * requires review and does not wait for it yet (`--force` included:
 * nothing skips review).
 */
function assertReviewedMerge(store: TaskStore, task: Task, actor: string | undefined): void {
  const id = task.id;
  if (inReview(task)) {
    if (!actor) throw new TasksError('E_INVALID', `merging #${id} approves it, which needs a reviewer (--owner or TASKS_OWNER)`, { id });
    if (task.owner === '' || actor !== task.owner) return;
    const owner = printable(task.owner);
    throw new TasksError('E_OWN_REVIEW', `task #${id} is ${owner}'s own work waiting for review: someone other than ${owner} merges it, which approves it`, {
      id,
      owner: task.owner,
    });
  }
  if (!finishesIntoReview(store, task)) return;
  const owner = task.owner ? printable(task.owner) : 'its owner';
  throw new TasksError(
    'E_TRANSITION',
    `task #${id} requires review and is ${task.status.replace('_', ' ')}: its owner finishes it first ('tasks done ${id}'), then someone other than ${owner} merges it`,
    { id, review: true },
  );
}

/** What happened in the slot: how the target moved, and the branch tip it took in. */
interface InSlot {
  how: MergeTaskResult['how'];
  from: string;
  to: string;
  tip: string;
  check?: CheckRun;
}

/**
 * Inside the slot: the tips as they are now, the merged commit, the checks
 * on it, and the move of the target, the last step, taken only while the
 * slot is still ours (`assertHeld`).
 */
async function mergeInSlot(plan: MergePlan, assertHeld: () => void): Promise<InSlot> {
  await removeLeftScratch(plan.repo);
  const input = await readInput(plan);
  if (input.ahead === 0) {
    const creation = branchCreationPoint(plan.commonDir, plan.branch);
    if (creation !== undefined && creation !== input.tip) return { how: 'already', from: input.targetSha, to: input.targetSha, tip: input.tip };
    throw new TasksError(
      'E_INVALID',
      `${plan.branch} has no commits that ${plan.target} lacks; nothing to merge (commit the work of #${plan.task.id} on it first)`,
      {
        id: plan.task.id,
      },
    );
  }
  const merged = await makeMergedCommit(input);
  let checkout = merged.checkout;
  try {
    let check: CheckRun | undefined;
    if (mergeCheckCommand(plan.store, plan.task) !== undefined) {
      checkout ??= await scratchCheckout(plan.repo, merged.commit);
      check = await runChecks(plan.store, plan.task, checkout, plan.options.actor);
      if (check && !check.passed) throw checkFailed(check, plan.task.id, plan.branch, plan.target);
    }
    assertHeld();
    await moveTarget(input, merged.commit);
    return { how: merged.how, from: input.targetSha, to: merged.commit, tip: input.tip, check };
  } finally {
    if (checkout) await removeScratch(plan.repo, checkout).catch(() => undefined);
  }
}

/** The tips of the branch and the target now, under the slot, and how far apart they are. */
async function readInput(plan: MergePlan): Promise<MergeInput & { ahead: number }> {
  const tip = branchTip(plan.commonDir, plan.branch);
  const targetSha = branchTip(plan.commonDir, plan.target);
  if (!tip || !targetSha) throw new TasksError('E_GIT', `${!tip ? plan.branch : plan.target} is gone; nothing was changed`, { id: plan.task.id });
  const counts = (await gitText(plan.repo, ['rev-list', '--left-right', '--count', `${targetSha}...${tip}`])).stdout.trim().split(/\s+/).map(Number);
  return {
    repo: plan.repo,
    task: plan.task.id,
    subject: plan.task.subject,
    branch: plan.branch,
    tip,
    target: plan.target,
    targetSha,
    behind: counts[0],
    ahead: counts[1],
    strategy: plan.store.config.mergeStrategy,
    ff: plan.options.ff === true,
  };
}

/**
 * Completes the task, recording the merge in `metadata.merged`: one that
 * waits for review is approved by the merger in the same transaction (one
 * completion); the target has moved, so this says what is left to do if it
 * fails.
 */
async function completeMerged(plan: MergePlan, commit: string): Promise<MutationResult> {
  const merged: MergedRecord = { into: plan.target, commit };
  const { store, options } = plan;
  const id = plan.task.id;
  try {
    const now = store.peekTask(id);
    if (now && inReview(now)) {
      try {
        return await store.approveTask(id, { actor: options.actor, metadata: { merged } });
      } catch (error) {
        // Decided meanwhile (approved by someone else): completed as any merge.
        if (!(error instanceof TasksError && error.code === 'E_TRANSITION')) throw error;
      }
    }
    return await store.completeTask(id, { actor: options.actor, force: true, metadata: { merged } });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new TasksError(
      error instanceof TasksError ? error.code : 'E_IO',
      `${plan.branch} was merged into ${plan.target} (${commit.slice(0, 12)}), but #${plan.task.id} could not be completed: ${message}; run 'tasks done ${plan.task.id} --force'`,
      { id: plan.task.id, commit },
      { cause: error },
    );
  }
}

/** Removes the task's worktree and its branch, now that the target holds its work; what cannot be done is said, not thrown. */
async function cleanUp(plan: MergePlan, merged: InSlot): Promise<{ worktreeRemoved: boolean; branchDeleted: boolean; notes: string[] }> {
  const { store, task, branch } = plan;
  const notes: string[] = [];
  if (plan.inWorktree) {
    notes.push(`kept the worktree ${plan.worktree} and ${branch}: this command runs inside it ('tasks worktree remove ${task.id}' from elsewhere)`);
    return { worktreeRemoved: false, branchDeleted: false, notes };
  }
  let worktreeRemoved = false;
  if (plan.worktree) {
    try {
      worktreeRemoved = (await removeTaskWorktree(store, task.id, { actor: plan.options.actor })).removed;
    } catch (error) {
      notes.push(`kept the worktree ${plan.worktree} and ${branch}: ${(error as Error).message}`);
      return { worktreeRemoved: false, branchDeleted: false, notes };
    }
  }
  // Only while the branch is where it was merged from (or, rebased, the commit the rebase started from): work added since stays.
  const tip = branchTip(plan.commonDir, branch);
  const reachable =
    tip !== undefined &&
    (merged.how === 'rebase' ? tip === merged.tip : (await gitText(plan.repo, ['merge-base', '--is-ancestor', tip, plan.target], [0, 1])).status === 0);
  if (!tip || !reachable) {
    if (tip) notes.push(`kept ${branch}: it has commits ${plan.target} does not`);
    return { worktreeRemoved, branchDeleted: false, notes };
  }
  const deleted = (await gitText(plan.repo, ['update-ref', '-d', `refs/heads/${branch}`, tip], [0, 1, 128])).status === 0;
  if (!deleted) notes.push(`kept ${branch}: git would not delete it`);
  return { worktreeRemoved, branchDeleted: deleted, notes };
}
