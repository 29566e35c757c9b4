import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { atomicWriteFile, readFileIfExists } from '../fs/fsio.js';
import { withLock } from '../fs/locks.js';
import type { TaskStore } from '../store.js';

/**
 * Background jobs' records (`.tasks/.runtime/jobs/`, docs/protocol.md,
 * "Board files"): one JSON file per job, its output log next to it. The runner and its supervisor
 * (packages/agent) go through these functions and never touch the files.
 */

/** `lost`: the task was reaped, released or claimed by another while the job ran; the command was stopped and the task left alone. */
export type JobStatus = 'starting' | 'running' | 'completed' | 'failed' | 'killed' | 'lost';

/** Final statuses: the supervisor is done with the job. */
export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'killed', 'lost'];

/** `.tasks/.runtime/jobs/bg_000001.json`. */
export interface JobRecord {
  /** `bg_000001`: allocated once, never reused. */
  id: string;
  task: number;
  owner: string;
  /** argv of the command (no shell). */
  command: string[];
  cwd: string;
  status: JobStatus;
  startedAt: string;
  /** The supervisor process (keeps the lease alive, records the outcome). */
  supervisorPid?: number;
  /** The command's pid, which is also its process group id. */
  pid?: number;
  finishedAt?: string;
  exitCode?: number | null;
  signal?: string | null;
  /** Tasks the completion unblocked. */
  unblocked?: number[];
  /** Why the job could not run or finish normally (spawn failure, lost claim …). */
  error?: string;
  /** Set by `tasks kill`: the supervisor reports the end as `killed`. */
  killRequested?: boolean;
}

export const JOBS_DIR = 'jobs';
const SEQ_FILE = '.seq';
const JOB_ID_RE = /^bg_([0-9]{6,})$/;

/** The directory of job records and logs. */
export function jobsDir(store: TaskStore): string {
  return join(store.runtimeDir, JOBS_DIR);
}

/** The output log of a job (stdout and stderr, in order). */
export function jobLogPath(store: TaskStore, id: string): string {
  return join(jobsDir(store), `${id}.log`);
}

function recordPath(store: TaskStore, id: string): string {
  return join(jobsDir(store), `${id}.json`);
}

/** `bg_000001` for 1. */
export function formatJobId(n: number): string {
  return `bg_${String(n).padStart(6, '0')}`;
}

/** Accepts `bg_000001`, `bg_1` and `1`; anything else is a usage error. */
export function parseJobId(input: unknown): string {
  const text = String(input).trim();
  const m = /^(?:bg_)?([0-9]{1,15})$/.exec(text);
  if (m && Number(m[1]) > 0) return formatJobId(Number(m[1]));
  throw new TasksError('E_USAGE', `not a job id: '${text}'; job ids look like bg_000001 (see 'tasks jobs')`, { input });
}

function parseRecord(text: string | undefined): JobRecord | undefined {
  if (text === undefined) return undefined;
  try {
    const record = JSON.parse(text) as JobRecord;
    return typeof record.id === 'string' && typeof record.task === 'number' ? record : undefined;
  } catch {
    return undefined;
  }
}

/** One job record, or undefined when there is none. */
export function readJob(store: TaskStore, id: string): JobRecord | undefined {
  return parseRecord(readFileIfExists(recordPath(store, id)));
}

/** Like readJob, but E_NOT_FOUND names `tasks jobs`. */
export function getJob(store: TaskStore, id: string): JobRecord {
  const record = readJob(store, id);
  if (!record) throw new TasksError('E_NOT_FOUND', `job ${id} not found (see 'tasks jobs')`, { job: id });
  return record;
}

function listJobIds(store: TaskStore): number[] {
  let names: string[];
  try {
    names = readdirSync(jobsDir(store));
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return [];
    throw error;
  }
  const out: number[] = [];
  for (const name of names) {
    const m = /^bg_([0-9]{6,})\.json$/.exec(name);
    if (m) out.push(Number(m[1]));
  }
  return out.sort((a, b) => a - b);
}

/** Every job record, oldest first. */
export function listJobs(store: TaskStore): JobRecord[] {
  const out: JobRecord[] = [];
  for (const n of listJobIds(store)) {
    const record = readJob(store, formatJobId(n));
    if (record) out.push(record);
  }
  return out;
}

/**
 * Allocates the next job id and writes its first record, under the jobs lock:
 * of any number of processes starting jobs at once each gets its own id, and
 * an id is never handed out twice (a `.seq` mark outlives removed records).
 */
export async function createJob(store: TaskStore, input: Omit<JobRecord, 'id' | 'status' | 'startedAt'>): Promise<JobRecord> {
  const dir = jobsDir(store);
  mkdirSync(dir, { recursive: true });
  return withLock(join(dir, 'jobs.lock'), store.lockOptions, (lock) => {
    const seqText = readFileIfExists(join(dir, SEQ_FILE));
    const seq = seqText === undefined ? 0 : Number.parseInt(seqText.trim(), 10) || 0;
    const n = Math.max(seq, listJobIds(store).at(-1) ?? 0) + 1;
    const record: JobRecord = { id: formatJobId(n), status: 'starting', startedAt: new Date().toISOString(), ...input };
    lock.assertHeld();
    atomicWriteFile(recordPath(store, record.id), JSON.stringify(record, null, 2) + '\n');
    atomicWriteFile(join(dir, SEQ_FILE), `${n}\n`);
    return record;
  });
}

/**
 * Changes a job record under its own lock. `change` gets the current record
 * and returns the fields to set (or undefined to leave it as it is).
 */
export async function updateJob(store: TaskStore, id: string, change: (current: JobRecord) => Partial<JobRecord> | undefined): Promise<JobRecord> {
  if (!JOB_ID_RE.test(id)) throw new TasksError('E_USAGE', `not a job id: '${id}'`);
  return withLock(join(jobsDir(store), `${id}.lock`), store.lockOptions, (lock) => {
    const current = getJob(store, id);
    const patch = change(current);
    if (!patch) return current;
    const next = { ...current, ...patch };
    lock.assertHeld();
    atomicWriteFile(recordPath(store, id), JSON.stringify(next, null, 2) + '\n');
    return next;
  });
}

/** The last `maxLines` lines (at most `maxBytes`) of a job's log; '' when there is none. */
export function readJobLogTail(store: TaskStore, id: string, maxLines = 20, maxBytes = 4096): string {
  let fd: number;
  try {
    fd = openSync(jobLogPath(store, id), 'r');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return '';
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - maxBytes);
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    let text = buf.toString('utf8');
    if (start > 0) text = text.slice(text.indexOf('\n') + 1); // drop the cut first line
    const lines = text.replace(/\n$/, '').split('\n');
    return lines.slice(-maxLines).join('\n');
  } finally {
    closeSync(fd);
  }
}
