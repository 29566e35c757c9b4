import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import {
  FINAL_JOB_STATUSES,
  TasksError,
  createJob,
  getJob,
  listJobs,
  readJobLogTail,
  recordRunEnd,
  updateJob,
  type JobRecord,
  type TaskStore,
} from '@dotasks/core/internal';
import { groupMembers, isRunning, killGroup } from '@dotasks/core/internal';

/**
 * Background jobs (slow commands, such as tests or builds, run beside the
 * agent instead of blocking its turn), for processes that outlive the
 * command that started them: each job runs under a small detached
 * supervisor (supervisor.ts) that keeps the task's lease alive and records
 * the outcome on the task and in the event log.
 */

const SUPERVISOR = fileURLToPath(new URL('./supervisor.js', import.meta.url));

export interface StartJobOptions {
  task: number;
  owner: string;
  /** argv of the command, run without a shell (`sh -c '…'` for one). */
  command: string[];
  cwd?: string;
}

export interface StartJobResult {
  job: JobRecord;
  /** False when the owner already held the task. */
  claimed: boolean;
}

/**
 * Claims the task if needed, allocates a job id, starts the supervisor
 * detached and returns at once. A refused claim throws its ClaimError and
 * starts nothing.
 */
export async function startJob(store: TaskStore, options: StartJobOptions): Promise<StartJobResult> {
  if (options.command.length === 0 || options.command[0] === '')
    throw new TasksError('E_USAGE', "run needs a command after '--', e.g. tasks run 3 -- npm test");
  const claim = await store.claimTask(options.task, { owner: options.owner });
  try {
    const job = await createJob(store, { task: options.task, owner: options.owner, command: options.command, cwd: options.cwd ?? process.cwd() });
    const child = spawn(process.execPath, [SUPERVISOR, store.dir, job.id], {
      cwd: options.cwd ?? process.cwd(),
      detached: true,
      stdio: 'ignore',
      env: process.env,
    });
    await once(child, 'spawn');
    child.unref();
    const record = await updateJob(store, job.id, (r) => (r.supervisorPid === undefined ? { supervisorPid: child.pid } : undefined));
    return { job: record, claimed: !claim.alreadyHeld };
  } catch (error) {
    if (!claim.alreadyHeld) await store.releaseTask(options.task, { actor: options.owner }).catch(() => {});
    throw error;
  }
}

/** A job as `tasks jobs` shows it: `lost` when the record says running but its supervisor is gone. */
export interface JobView extends JobRecord {
  state: JobRecord['status'] | 'lost';
  /** Seconds from start to finish (or to now). */
  seconds: number;
}

/** True when the supervisor finished with the job. */
export function isFinished(record: JobRecord): boolean {
  return FINAL_JOB_STATUSES.includes(record.status);
}

export function viewJob(record: JobRecord, now = Date.now()): JobView {
  const finished = isFinished(record);
  const lost = !finished && record.supervisorPid !== undefined && !isRunning(record.supervisorPid);
  const end = record.finishedAt ? Date.parse(record.finishedAt) : now;
  return { ...record, state: lost ? 'lost' : record.status, seconds: Math.max(0, Math.round((end - Date.parse(record.startedAt)) / 1000)) };
}

/** Every job, oldest first, with its state. */
export function listJobViews(store: TaskStore): JobView[] {
  return listJobs(store).map((r) => viewJob(r));
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface KillJobResult {
  job: JobRecord;
  /** False when the job had already finished. */
  killed: boolean;
}

/**
 * Ends a job and its whole process tree (children and grandchildren: the
 * command's process group), then waits until the supervisor recorded it as
 * killed and released the task. A supervisor that is gone is replaced: the
 * record and the task are settled here.
 */
export async function killJob(store: TaskStore, id: string, options: { graceMs?: number; timeoutMs?: number } = {}): Promise<KillJobResult> {
  const graceMs = options.graceMs ?? 3000;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const before = getJob(store, id);
  if (isFinished(before)) return { job: before, killed: false };
  const marked = await updateJob(store, id, (r) => (isFinished(r) ? undefined : { killRequested: true }));
  if (isFinished(marked)) return { job: marked, killed: false };

  const supervisorAlive = () => marked.supervisorPid !== undefined && isRunning(marked.supervisorPid);
  if (supervisorAlive()) {
    try {
      process.kill(marked.supervisorPid!, 'SIGTERM');
    } catch {
      // exited meanwhile
    }
  }
  // The supervisor ends the group itself; doing it here too covers a stuck or dead one.
  const pid = () => getJob(store, id).pid;
  if (pid() !== undefined) await killGroup(pid()!, graceMs);
  const settled = await waitFor(() => isFinished(getJob(store, id)) || !supervisorAlive(), timeoutMs);
  const after = getJob(store, id);
  if (pid() !== undefined && groupMembers(pid()!).length) await killGroup(pid()!, 0);
  if (isFinished(after)) return { job: after, killed: true };
  if (settled && !supervisorAlive()) {
    // Nobody is left to record the end: do it here.
    const at = new Date().toISOString();
    // The supervisor's own record, made the same way: only while the task is still the job's, under its lock.
    await recordRunEnd(store, {
      task: after.task,
      owner: after.owner,
      exitCode: null,
      signal: null,
      tail: readJobLogTail(store, id, 20, 2000),
      job: id,
      killed: true,
    });
    const job = await updateJob(store, id, (r) =>
      isFinished(r)
        ? undefined
        : { status: 'killed', exitCode: null, signal: null, finishedAt: at, unblocked: [], error: 'the supervisor was gone; settled by tasks kill' },
    );
    await store.recordEvent({ type: 'job.finished', task: after.task, owner: after.owner, job: id, status: job.status, exitCode: null, unblocked: [] });
    return { job, killed: true };
  }
  throw new TasksError(
    'E_TIMEOUT',
    `job ${id} did not stop within ${Math.round((graceMs + timeoutMs) / 1000)} s; its supervisor is pid ${marked.supervisorPid}`,
    { job: id },
  );
}
