/**
 * Checks before done (docs/protocol.md, "Checks before done"): which check
 * a task has (its own `verify`, else the board's), where it runs (the task's
 * worktree, else the top of the repository), and finishing a task behind
 * it. The check runs outside every lock; the completion that follows is one
 * transaction that first makes sure the task is as it was when the check
 * started. A check that fails leaves the task as it was, with a note that
 * holds the end of its output.
 */
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { inReview, type Task } from '../format/format.js';
import { locateGit } from '../git/locate-git.js';
import { ownerFlag } from '../hints.js';
import { describeCheckEnd, runCheck, VerifyError, type CheckRun, type CheckSpec } from '../runtime/verify-run.js';
import { printable } from '../views/printable.js';
import type { BoardFiles } from './board-files.js';
import { assertCompletable, completeTask } from './closing.js';
import { openChildrenNow } from './parents.js';
import { checkResult } from './outcome-fields.js';
import { appendNote, checkTransition } from './rules.js';
import type { ActorOptions, MutationResult } from './store-types.js';

/** What a finish may be given besides who acts. */
export interface FinishOptions extends ActorOptions {
  /** Complete without the check (and without the ownership and blocker checks of `tasks done --force`); the notes say so. */
  force?: boolean;
  /** The task's `result`. */
  result?: string;
  /** The environment the check starts from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Aborting stops the check; nothing is written then. */
  signal?: AbortSignal;
  /** Told once the check is about to start (a command says so: a check can take minutes). */
  onCheck?: (spec: CheckSpec) => void;
  /**
   * Runs once the check passed, before the completion: the agents' tool writes an update's other fields here
   * (edges included, so the completion, not a check beforehand, judges the blockers).
   */
  beforeComplete?: () => Promise<unknown>;
}

/** What a finish did: the completion, and the check when one ran or was skipped. */
export interface FinishResult extends MutationResult {
  check?: CheckRun;
  /** The check `force` skipped. */
  skipped?: string;
}

/** The check of `task`, if it has one: its own `verify`, else the board's; run in its worktree, else at the top of the repository. */
export function checkOf(board: BoardFiles, task: Task): CheckSpec | undefined {
  const command = task.verify ?? board.config.verify;
  if (command === undefined || command.trim() === '') return undefined;
  return { command, cwd: checkDir(board, task) };
}

/** The task's worktree when it has one on disk (`claim --worktree`, metadata.worktree), else the repository's main worktree, else the board's parent folder. */
function checkDir(board: BoardFiles, task: Task): string {
  return taskWorktree(board, task) ?? locateGit(dirname(board.dir))?.mainRoot ?? dirname(board.dir);
}

/** The task's worktree when it has one on disk (`claim --worktree` records it as metadata.worktree, from the main worktree); else undefined. */
export function taskWorktree(board: BoardFiles, task: Task): string | undefined {
  const worktree = task.metadata?.worktree;
  if (typeof worktree !== 'string' || worktree === '') return undefined;
  const path = resolve(locateGit(dirname(board.dir))?.mainRoot ?? dirname(board.dir), worktree);
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ? path : undefined;
}

/** The environment of a check: the caller's, with the task and the board named (so `tasks` inside it acts on this board). */
export function checkEnv(board: BoardFiles, task: Task, base: NodeJS.ProcessEnv, owner: string | undefined): NodeJS.ProcessEnv {
  return { ...base, TASK_ID: String(task.id), TASKS_DIR: board.dir, ...(owner ? { TASKS_OWNER: owner } : {}) };
}

/** Runs a task's check as the board's config says (its timeout), outside every lock. */
export function runTaskCheck(board: BoardFiles, spec: CheckSpec, options: { env: NodeJS.ProcessEnv; signal?: AbortSignal }): Promise<CheckRun> {
  return runCheck(spec, { env: options.env, timeoutMs: board.config.verifyTimeoutSeconds * 1000, signal: options.signal });
}

/**
 * Completes a task once its check passes (`tasks done`, the agents' tool's
 * completion). No check: a plain completion. `force`: completed without it,
 * and a note says the check was skipped. A check that fails: a note with the
 * end of its output, and a VerifyError (the task as it was). The completion
 * after a passing check refuses a task taken, released or deleted meanwhile.
 */
export async function finishTask(board: BoardFiles, id: number, options: FinishOptions = {}): Promise<FinishResult> {
  const result = options.result === undefined ? undefined : checkResult(options.result);
  const task = board.getTask(id);
  // A task waiting for review passed its check when it was finished: finishing it again only says it waits.
  const spec = task.status === 'completed' || inReview(task) ? undefined : checkOf(board, task);
  const base = { actor: options.actor, force: options.force, ...(result !== undefined ? { result } : {}) };
  if (!spec) return completeTask(board, id, base);
  if (options.force)
    return {
      ...(await completeTask(board, id, { ...base, note: `completed without its check (forced): \`${spec.command}\` was not run` })),
      skipped: spec.command,
    };
  // What the completion would refuse is refused now, not after a check of minutes (unless beforeComplete is still to change
  // the task: then the completion judges it as that left it, and the caller checked what it could).
  checkTransition(task, 'completed');
  if (!options.beforeComplete) assertCompletable(task, options.actor, (n) => board.peekTask(n));
  // A parent with open children: the completion refuses it (naming them), so before a check that would run for nothing.
  if (openChildrenNow(board.dir, id, (n) => board.peekTask(n)).length) return completeTask(board, id, base);
  options.onCheck?.(spec);
  const run = await runTaskCheck(board, spec, { env: checkEnv(board, task, options.env ?? process.env, options.actor), signal: options.signal });
  if (run.interrupted) throw new VerifyError(id, run, `the check of #${id} was interrupted; nothing was written`);
  if (!run.passed) {
    await recordCheckFailure(board, id, run, options);
    throw new VerifyError(id, run, refusal(task, run, options.actor));
  }
  await options.beforeComplete?.();
  return { ...(await completeTask(board, id, { ...base, expect: { status: task.status, owner: task.owner } })), check: run };
}

/** The one line of a refused finish: what failed, where the task stands, what to do. */
function refusal(task: Task, run: CheckRun, actor: string | undefined): string {
  const stays = task.status === 'in_progress' ? 'stays in progress' : `stays ${task.status}`;
  return (
    `the check of #${task.id} failed (${describeCheckEnd(run)}): ${printable(run.command)}; #${task.id} ${stays}, with the end of the output in its notes ` +
    `(fix the work and run 'tasks done ${task.id}${ownerFlag(actor ?? task.owner)}' again, or add --force to complete it without the check)`
  );
}

/** The note a failed check leaves: how it ended, the command, and the end of its output. */
export function checkFailureNote(run: CheckRun): string {
  const head = `the check failed (${describeCheckEnd(run)}): ${run.command}`;
  return run.tail.trim() ? `${head}; its output ended:\n${run.tail}` : `${head}, with no output`;
}

/**
 * Records a failed check on the task, in one transaction under its lock:
 * the note, an `updated` event and a `verify.failed` one. The task's status
 * and owner are left as they are.
 */
export async function recordCheckFailure(board: BoardFiles, id: number, run: CheckRun, options: ActorOptions = {}): Promise<MutationResult> {
  const written = await board.transact({ tasks: [id] }, (tx) => {
    const task = tx.edit(id);
    appendNote(task, { at: new Date().toISOString(), owner: options.actor ?? '', text: checkFailureNote(run) });
    tx.put(task);
    tx.event({ type: 'updated', task: id, owner: options.actor, fields: ['notes'] });
    tx.event({
      type: 'verify.failed',
      task: id,
      owner: options.actor,
      command: run.command,
      exitCode: run.exitCode,
      ...(run.signal ? { signal: run.signal } : {}),
      ...(run.timedOut ? { timedOut: true } : {}),
    });
  });
  return { task: written.written.find((t) => t.id === id) ?? board.getTask(id), written: written.written, unblocked: [], events: written.events };
}
