/**
 * What a worker adds around its command for checks before done and results
 * (docs/protocol.md, "Checks before done", "Results"): the command's
 * `TASK_UPSTREAM` (what the tasks it waits for came to) and a fresh
 * `TASK_RESULT_FILE` to leave its own result in; and, after an exit 0, the
 * task's check, run while the claim is still held (its lease renewed, the
 * check stopped the moment the task is taken away).
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  blockersAmong,
  checkEnv,
  checkOf,
  clipResult,
  holdClaim,
  isErrnoException,
  runTaskCheck,
  upstreamEnv,
  upstreamOf,
  type CheckRun,
  type ClaimLoss,
  type HoldOptions,
  type Task,
  type TaskStore,
} from '@dotasks/core/internal';

/** The most of `$TASK_RESULT_FILE` that is read: a result is kept to 2000 characters anyway. */
const RESULT_READ_BYTES = 64 * 1024;

/** What one run of the command gets besides TASK_*: its result file, and what came before it. */
export interface AttemptFiles {
  /** TASK_RESULT_FILE, TASK_UPSTREAM, and TASK_VERIFY / TASK_VERIFY_TAIL when a check applies. */
  readonly env: Record<string, string>;
  /** What the command left in its result file, trimmed and cut to the limit; undefined when nothing. */
  readResult(): string | undefined;
  /** Removes the result file's folder. */
  cleanup(): void;
}

/**
 * Prepares one run of the command on `task`: a fresh folder for its result
 * file (the file itself is the command's to write), the upstream results,
 * and the check it will face, with the end of the last failing one's output
 * when this run comes after it.
 */
export function prepareAttempt(store: TaskStore, task: Task, failedCheck: CheckRun | undefined): AttemptFiles {
  const folder = mkdtempSync(join(tmpdir(), 'dotasks-result-'));
  const resultFile = join(folder, 'result');
  // The open work and the blockers' own files, as the todo tool's get: a large history is not read for a task's few
  // blockers (it cost a worker a read of the whole board before every run).
  const open = store.loadOpenWork();
  const env: Record<string, string> = {
    TASK_RESULT_FILE: resultFile,
    TASK_UPSTREAM: upstreamEnv(upstreamOf(task, blockersAmong(open), (id) => store.peekTask(id))),
  };
  const check = checkOf(store, task);
  if (check) env.TASK_VERIFY = check.command;
  if (failedCheck) env.TASK_VERIFY_TAIL = failedCheck.tail;
  return {
    env,
    readResult: () => readResultFile(resultFile),
    cleanup: () => rmSync(folder, { recursive: true, force: true }),
  };
}

/** The start of the result file, as a result; undefined when the command wrote none. */
function readResultFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'EISDIR')) return undefined;
    throw error;
  }
  try {
    const buffer = Buffer.alloc(RESULT_READ_BYTES);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return clipResult(buffer.subarray(0, read).toString('utf8'));
  } catch (error) {
    if (isErrnoException(error, 'EISDIR')) return undefined;
    throw error;
  } finally {
    closeSync(fd);
  }
}

/** How the check after an exit 0 came out: no check, its run, or the task taken meanwhile. */
export type CheckOutcome = { run?: CheckRun; loss?: undefined } | { loss: ClaimLoss; run?: undefined };

/**
 * Runs the task's check, if it has one, while holding the claim as during
 * the command (`hold`: the same options holdClaim was given then): a task
 * taken away stops the check and comes back as the loss; `signal` (the
 * worker stopping) stops it too, and the run ends `interrupted`.
 */
export async function checkHeld(
  store: TaskStore,
  id: number,
  options: { owner: string; env: NodeJS.ProcessEnv; hold: Omit<HoldOptions, 'onLost'>; signal?: AbortSignal },
): Promise<CheckOutcome> {
  const task = store.getTask(id);
  const spec = checkOf(store, task);
  if (!spec) return {};
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) stop.abort();
  const held = holdClaim(store, { ...options.hold, task: id, onLost: () => stop.abort() });
  try {
    const run = await runTaskCheck(store, spec, { env: checkEnv(store, task, options.env, options.owner), signal: stop.signal });
    held.check();
    return held.lost ? { loss: held.lost } : { run };
  } finally {
    held.stop();
    options.signal?.removeEventListener('abort', onAbort);
  }
}
