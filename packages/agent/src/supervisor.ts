/**
 * The supervisor of one background job: `node supervisor.js BOARD_DIR JOB_ID`.
 * Started detached by startJob; it takes the task's lease with its own pid,
 * starts the command in its own process group with output to the job's log,
 * renews the lease while the command runs, and records the outcome the way
 * a worker does (core's runtime/task-run.ts): exit 0 completes the task
 * (dependents unblock), anything else releases it with `metadata.lastError`
 * and a note, in one transaction that checks under the task's lock that the
 * task is still the job's. `job.started` / `job.finished` go to the event
 * log. Meanwhile it checks every half second that the task is still its
 * own: a task reaped, released or claimed by another stops the command's
 * whole tree, and the job ends `lost` without touching the task.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, realpathSync, writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import {
  TaskStore,
  getJob,
  jobLogPath,
  readJobLogTail,
  holdClaim,
  recordRunEnd,
  updateJob,
  type ClaimLoss,
  type HeldClaim,
  type ClaimResult,
  type JobRecord,
  type JobStatus,
} from '@dotasks/core/internal';
import { killGroup } from '@dotasks/core/internal';

/** How much of the log a failed run leaves in `metadata.lastError.tail` and its failure note. */
const TAIL_LINES = 20;
const TAIL_BYTES = 2000;
/** How often the supervisor checks that the task is still the job's, ms. */
const CLAIM_CHECK_MS = 500;

interface Outcome {
  exitCode: number | null;
  signal: string | null;
  error?: string;
}

/**
 * What the supervisor keeps while its job runs, passed to each step (named
 * steps over explicit state, not one closure of lets).
 */
interface Supervision {
  readonly store: TaskStore;
  readonly jobId: string;
  readonly record: JobRecord;
  readonly task: number;
  readonly owner: string;
  child: ChildProcess | undefined;
  /** A signal or `tasks kill` asked the job to stop. */
  killRequested: boolean;
  /** The command's group being stopped, once a stop was asked. */
  stopping: Promise<void> | undefined;
  /** The task was taken from the job while it ran. */
  loss: ClaimLoss | undefined;
  held: HeldClaim | undefined;
  /** `job.started` being written; `job.finished` waits for it. */
  started: Promise<unknown>;
}

/** Runs one background job from its record to its outcome on the task, the job record and the event log. */
export async function superviseJob(boardDir: string, jobId: string): Promise<void> {
  const store = new TaskStore(boardDir);
  const record = getJob(store, jobId);
  const state: Supervision = {
    store,
    jobId,
    record,
    task: record.task,
    owner: record.owner,
    child: undefined,
    killRequested: false,
    stopping: undefined,
    loss: undefined,
    held: undefined,
    started: Promise.resolve(),
  };
  const stop = () => requestKill(state);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', stop);
  await updateJob(store, jobId, () => ({ supervisorPid: process.pid }));

  const claim = await holdTask(state);
  if (!claim) return;
  if (state.killRequested || getJob(store, jobId).killRequested) {
    await finish(state, 'killed', { exitCode: null, signal: null, error: 'killed before it started' });
    return;
  }
  state.held = holdClaim(store, {
    task: state.task,
    owner: state.owner,
    claimedAt: claim.lease.claimedAt,
    sinceSeq: claim.events.find((e) => e.task === state.task && e.type === 'claimed')?.seq,
    checkMs: CLAIM_CHECK_MS,
    maxRenewMs: 60_000,
    onLost: (found) => {
      state.loss = found;
      stopCommand(state);
    },
  });
  const outcome = await runCommand(state);
  // One last look before recording the outcome on the task: the command may
  // have ended just as the task was taken.
  state.held.check();
  state.held.stop();
  await cleanUpAfterCommand(state, outcome);
  // `tasks kill` marks the record before signalling; the group may die before our handler runs.
  state.killRequested ||= getJob(store, jobId).killRequested === true;
  const status: JobStatus = state.loss ? 'lost' : state.killRequested ? 'killed' : outcome.exitCode === 0 ? 'completed' : 'failed';
  await finish(state, status, outcome);
}

/** A signal or `tasks kill`: the command's whole group stops, and the job ends killed. */
function requestKill(state: Supervision): void {
  state.killRequested = true;
  stopCommand(state);
}

function stopCommand(state: Supervision): void {
  if (state.child?.pid !== undefined && !state.stopping) state.stopping = killGroup(state.child.pid);
}

/** Holds the lease with this process's pid, so a dead supervisor is reaped; a task it cannot hold ends the job failed. */
async function holdTask(state: Supervision): Promise<ClaimResult | undefined> {
  try {
    return await state.store.claimTask(state.task, { owner: state.owner, lease: { pid: process.pid } });
  } catch (e) {
    await finish(state, 'failed', { exitCode: null, signal: null, error: `could not hold task #${state.task}: ${(e as Error).message}` });
    return undefined;
  }
}

/** Starts the command in its own process group with output to the job's log; resolves when it ends. */
async function runCommand(state: Supervision): Promise<Outcome> {
  const { store, jobId, record, task, owner } = state;
  const log = openSync(jobLogPath(store, jobId), 'a');
  const outcome = await new Promise<Outcome>((resolve) => {
    let child: ChildProcess;
    try {
      child = state.child = spawn(record.command[0], record.command.slice(1), {
        cwd: record.cwd,
        detached: true, // its own process group: `tasks kill` ends the whole tree
        stdio: ['ignore', log, log],
        env: { ...process.env, TASKS_JOB: jobId, TASKS_DIR: store.dir, TASKS_OWNER: owner },
      });
    } catch (e) {
      resolve({ exitCode: 127, signal: null, error: `cannot start ${record.command[0]}: ${(e as Error).message}` });
      return;
    }
    child.once('error', (e) => resolve({ exitCode: 127, signal: null, error: `cannot start ${record.command[0]}: ${e.message}` }));
    child.once('exit', (code, signal) => resolve({ exitCode: code, signal }));
    child.once('spawn', () => {
      const pid = child.pid!;
      if (state.killRequested) requestKill(state);
      if (state.loss) stopCommand(state);
      state.started = updateJob(store, jobId, (r) => (r.status === 'starting' ? { status: 'running', pid } : { pid }))
        .then(() => store.recordEvent({ type: 'job.started', task, owner, job: jobId, pid, command: record.command }))
        .catch(() => {});
    });
  });
  closeSync(log);
  return outcome;
}

/** Notes why the run stopped in its log, stops what the command left running and waits for `job.started`. */
async function cleanUpAfterCommand(state: Supervision, outcome: Outcome): Promise<void> {
  const note = state.loss ? `stopped: ${state.loss.message}` : outcome.error;
  if (note) {
    const fd = openSync(jobLogPath(state.store, state.jobId), 'a');
    writeSync(fd, `tasks run: ${note}\n`);
    closeSync(fd);
  }
  // Whatever the command left behind in its group goes with it: no orphans.
  if (state.child?.pid !== undefined) await (state.stopping ?? killGroup(state.child.pid, 1000));
  await state.started; // job.started is in the log before job.finished
}

/** Records the outcome: on the task (unless it was lost), on the job record, and as `job.finished`. */
async function finish(state: Supervision, ended: JobStatus, outcome: Outcome): Promise<void> {
  const { store, jobId, task, owner, loss } = state;
  const at = new Date().toISOString();
  const { status, unblocked, error } = loss ? await recordLoss(state, ended, loss) : await recordOnTask(state, ended, outcome);
  const patch: Partial<JobRecord> = { status, exitCode: outcome.exitCode, signal: outcome.signal, finishedAt: at, unblocked };
  if (error) patch.error = error;
  await updateJob(store, jobId, () => patch);
  await store.recordEvent({
    type: 'job.finished',
    task,
    owner,
    job: jobId,
    status,
    exitCode: outcome.exitCode,
    ...(outcome.signal ? { signal: outcome.signal } : {}),
    unblocked,
    ...(loss ? { reason: loss.reason, message: loss.message } : {}),
  });
}

/** What the job ends as, once its outcome is recorded. */
interface Settled {
  status: JobStatus;
  unblocked: number[];
  error: string | undefined;
}

/** Someone else's task now (or nobody's): neither complete nor release it, only say why the work stopped. */
async function recordLoss(state: Supervision, ended: JobStatus, loss: ClaimLoss): Promise<Settled> {
  const { store, jobId, task, owner, child } = state;
  const stopped = { type: 'work.stopped', task, owner, job: jobId, reason: loss.reason, message: loss.message, ...(child?.pid ? { pid: child.pid } : {}) };
  // The job record and job.finished say it too: a busy log must not keep them from being written.
  await store.recordEvent(stopped).catch(() => {});
  return { status: ended, unblocked: [], error: loss.message };
}

/**
 * The worker's way (runtime/task-run.ts): one transaction that completes or
 * releases only while, under the task's lock, the task is still in progress
 * for this job's owner.
 */
async function recordOnTask(state: Supervision, ended: JobStatus, outcome: Outcome): Promise<Settled> {
  const { store, jobId, task, owner } = state;
  const settled: Settled = { status: ended, unblocked: [], error: outcome.error };
  try {
    const record = await recordRunEnd(store, {
      task: state.held?.task ?? task,
      owner,
      exitCode: ended === 'completed' ? 0 : outcome.exitCode,
      signal: outcome.signal,
      tail: ended === 'completed' ? '' : readJobLogTail(store, jobId, TAIL_LINES, TAIL_BYTES),
      job: jobId,
      killed: ended === 'killed',
    });
    if (record.outcome === 'completed') settled.unblocked = record.unblocked;
    if (record.outcome === 'lost') {
      settled.status = 'lost';
      settled.error ??= `${record.message}; it was left as it is`;
    }
  } catch (e) {
    settled.error = `could not record the outcome on task #${task}: ${(e as Error).message}`;
  }
  return settled;
}

const entry = process.argv[1] ? pathToFileURL(realpathSync(process.argv[1])).href : '';
if (import.meta.url === entry) {
  const [boardDir, jobId] = process.argv.slice(2);
  try {
    await superviseJob(boardDir, jobId);
  } catch (error) {
    process.stderr.write(`tasks supervisor: ${(error as Error).stack ?? error}\n`);
    process.exitCode = 1;
  }
}
