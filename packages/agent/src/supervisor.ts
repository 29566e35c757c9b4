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

export async function superviseJob(boardDir: string, jobId: string): Promise<void> {
  const store = new TaskStore(boardDir);
  let child: ChildProcess | undefined;
  let killRequested = false;
  let stopping: Promise<void> | undefined;
  let loss: ClaimLoss | undefined;
  let held: HeldClaim | undefined;

  const stopCommand = () => {
    if (child?.pid !== undefined && !stopping) stopping = killGroup(child.pid);
  };
  const stop = () => {
    killRequested = true;
    stopCommand();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', stop);

  const record = getJob(store, jobId);
  const { task, owner } = record;
  await updateJob(store, jobId, () => ({ supervisorPid: process.pid }));

  const finish = async (ended: JobStatus, outcome: Outcome): Promise<void> => {
    const at = new Date().toISOString();
    let status = ended;
    let unblocked: number[] = [];
    let error = outcome.error;
    if (loss) {
      // Someone else's task now (or nobody's): neither complete nor release it.
      error = loss.message;
      const stopped = { type: 'work.stopped', task, owner, job: jobId, reason: loss.reason, message: loss.message, ...(child?.pid ? { pid: child.pid } : {}) };
      // The job record and job.finished below say it too: a busy log must not keep them from being written.
      await store.recordEvent(stopped).catch(() => {});
    } else {
      // The worker's way (runtime/task-run.ts): one transaction that completes or releases only while, under the
      // task's lock, the task is still in progress for this job's owner.
      try {
        const record = await recordRunEnd(store, {
          task: held?.task ?? task,
          owner,
          exitCode: status === 'completed' ? 0 : outcome.exitCode,
          signal: outcome.signal,
          tail: status === 'completed' ? '' : readJobLogTail(store, jobId, TAIL_LINES, TAIL_BYTES),
          job: jobId,
          killed: status === 'killed',
        });
        if (record.outcome === 'completed') unblocked = record.unblocked;
        if (record.outcome === 'lost') {
          status = 'lost';
          error ??= `${record.message}; it was left as it is`;
        }
      } catch (e) {
        error = `could not record the outcome on task #${task}: ${(e as Error).message}`;
      }
    }
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
  };

  // Hold the lease with this process's pid, so a dead supervisor is reaped.
  let claim: ClaimResult;
  try {
    claim = await store.claimTask(task, { owner, lease: { pid: process.pid } });
  } catch (e) {
    await finish('failed', { exitCode: null, signal: null, error: `could not hold task #${task}: ${(e as Error).message}` });
    return;
  }
  if (killRequested || getJob(store, jobId).killRequested) {
    await finish('killed', { exitCode: null, signal: null, error: 'killed before it started' });
    return;
  }
  held = holdClaim(store, {
    task,
    owner,
    claimedAt: claim.lease.claimedAt,
    sinceSeq: claim.events.find((e) => e.task === task && e.type === 'claimed')?.seq,
    checkMs: CLAIM_CHECK_MS,
    maxRenewMs: 60_000,
    onLost: (found) => {
      loss = found;
      stopCommand();
    },
  });

  const log = openSync(jobLogPath(store, jobId), 'a');
  let started: Promise<unknown> = Promise.resolve();
  const outcome = await new Promise<Outcome>((resolve) => {
    try {
      child = spawn(record.command[0], record.command.slice(1), {
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
      const pid = child!.pid!;
      if (killRequested) stop();
      if (loss) stopCommand();
      started = updateJob(store, jobId, (r) => (r.status === 'starting' ? { status: 'running', pid } : { pid }))
        .then(() => store.recordEvent({ type: 'job.started', task, owner, job: jobId, pid, command: record.command }))
        .catch(() => {});
    });
  });
  closeSync(log);
  // One last look before recording the outcome on the task: the command may
  // have ended just as the task was taken.
  held.check();
  held.stop();
  const note = loss ? `stopped: ${loss.message}` : outcome.error;
  if (note) {
    const fd = openSync(jobLogPath(store, jobId), 'a');
    writeSync(fd, `tasks run: ${note}\n`);
    closeSync(fd);
  }
  // Whatever the command left behind in its group goes with it: no orphans.
  if (child?.pid !== undefined) await (stopping ?? killGroup(child.pid, 1000));
  await started; // job.started is in the log before job.finished
  // `tasks kill` marks the record before signalling; the group may die before our handler runs.
  killRequested ||= getJob(store, jobId).killRequested === true;
  const status: JobStatus = loss ? 'lost' : killRequested ? 'killed' : outcome.exitCode === 0 ? 'completed' : 'failed';
  await finish(status, outcome);
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
