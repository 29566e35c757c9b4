import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listJobViews } from '@dotasks/agent';
import { TaskStore } from '@dotasks/core';
import { jobLogPath } from '@dotasks/core/internal';
import { readTaskFile, tasks, tasksAsync, tempBoard, createTasks } from '../helpers.js';
import { readEventLog } from '../agents-helpers.js';

interface JobJson {
  id: string;
  task: number;
  state: string;
  status: string;
  exitCode?: number | null;
  pid?: number;
  supervisorPid?: number;
  unblocked?: number[];
}

const WAIT = { timeout: 90_000, interval: 100 };

/** True while `pid` runs; a zombie (killed, not yet reaped by its parent) counts as gone. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}

describe('background jobs', () => {
  let cleanup = () => {};
  const leftovers: number[] = [];
  afterEach(() => {
    for (const pid of leftovers.splice(0)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    cleanup();
  });

  const jobs = (root: string): JobJson[] => (JSON.parse(tasks(root, ['jobs', '--json']).stdout) as { jobs: JobJson[] }).jobs;
  const job = (root: string, id: string): JobJson => jobs(root).find((j) => j.id === id)!;
  /**
   * What `tasks jobs` shows and `tasks logs` prints, read in process (the calls the commands make), for
   * the waits: a wait that ran the command every 100 ms started a Node each time. What a test asserts
   * once the wait is over is read through the command.
   */
  const statesNow = (root: string) => listJobViews(new TaskStore(join(root, '.tasks')));
  const stateNow = (root: string, id: string): string | undefined => statesNow(root).find((j) => j.id === id)?.state;
  const readJobLog = (root: string, id: string): string => {
    const path = jobLogPath(new TaskStore(join(root, '.tasks')), id);
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  };
  /** The event log, read from its file (what `tasks events --json` prints; that command has its tests in claims.test.ts). */
  const events = (root: string) => readEventLog(join(root, '.tasks'));

  it('exit 0 completes the task and unblocks its dependents', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Build', { subject: 'Deploy', blockedBy: [1] }]);
    const started = tasks(t.root, ['run', '1', '--owner', 'ci', '--json', '--', process.execPath, '-e', "console.log('built ok')"]);
    expect(started.code).toBe(0);
    const { job: record, claimed } = JSON.parse(started.stdout) as { job: JobJson; claimed: boolean };
    expect(record.id).toBe('bg_000001');
    expect(claimed).toBe(true);
    await vi.waitFor(() => expect(stateNow(t.root, 'bg_000001')).toBe('completed'), WAIT);
    expect(job(t.root, 'bg_000001')).toMatchObject({ state: 'completed', exitCode: 0, unblocked: [2] });
    // A success leaves no record on the task (the job record keeps the exit code), as a worker's does not.
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', owner: 'ci' });
    expect(readTaskFile(t.board, 1).metadata).toBeUndefined();
    expect(tasks(t.root, ['list']).stdout).toContain('ready: #2');
    expect(tasks(t.root, ['logs', 'bg_000001']).stdout).toBe('built ok\n');
    const types = events(t.root).map((e) => e.type);
    expect(types.indexOf('job.started')).toBeGreaterThan(-1);
    expect(types.indexOf('job.finished')).toBeGreaterThan(types.indexOf('job.started'));
    expect(events(t.root).find((e) => e.type === 'job.finished')).toMatchObject({
      task: 1,
      job: 'bg_000001',
      status: 'completed',
      exitCode: 0,
      unblocked: [2],
    });
  });

  it("a failure releases the task with a worker's record: metadata.lastError (exit code and tail) and a note", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Test']);
    expect(tasks(t.root, ['run', '1', '--owner', 'ci', '--', 'sh', '-c', 'echo compiling; echo "3 tests failed" >&2; exit 3']).code).toBe(0);
    await vi.waitFor(() => expect(stateNow(t.root, 'bg_000001')).toBe('failed'), WAIT);
    expect(job(t.root, 'bg_000001').state).toBe('failed');
    const task = readTaskFile(t.board, 1) as { status: string; owner: string; metadata: { lastError: Record<string, unknown> }; notes: { text: string }[] };
    expect(task).toMatchObject({ status: 'pending', owner: '' });
    expect(task.metadata.lastError).toMatchObject({ job: 'bg_000001', exitCode: 3, signal: null, owner: 'ci', tail: 'compiling\n3 tests failed' });
    expect(typeof task.metadata.lastError.at).toBe('string');
    expect(task.notes.map((n) => n.text)).toEqual(['job bg_000001: the command failed (exit 3); its output ended:\ncompiling\n3 tests failed']);
    expect(events(t.root).find((e) => e.type === 'job.finished')).toMatchObject({ status: 'failed', exitCode: 3 });
    // A command that cannot start fails the same way.
    expect(tasks(t.root, ['run', '1', '--owner', 'ci', '--', 'no-such-command-dotasks']).code).toBe(0);
    await vi.waitFor(() => expect(stateNow(t.root, 'bg_000002')).toBe('failed'), WAIT);
    expect(job(t.root, 'bg_000002').state).toBe('failed');
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', metadata: { lastError: { job: 'bg_000002', exitCode: 127 } } });
    expect(tasks(t.root, ['logs', 'bg_000002']).stdout).toContain('cannot start no-such-command-dotasks');
  });

  it('refuses a task it cannot claim, and starts nothing', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Build', { subject: 'Deploy', blockedBy: [1] }]);
    expect(tasks(t.root, ['run', '2', '--', 'true']).code).toBe(1);
    tasks(t.root, ['claim', '1', '--owner', 'someone']);
    const lost = tasks(t.root, ['run', '1', '--owner', 'ci', '--', 'true']);
    expect(lost.code).toBe(3);
    expect(lost.stderr).toContain('already claimed by someone');
    expect(tasks(t.root, ['run', '1', '--owner', 'someone']).code).toBe(2);
    expect(jobs(t.root)).toEqual([]);
  });

  it('kill ends the whole process tree: children and grandchildren', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Serve']);
    const pids = join(t.root, 'pids');
    const script = `sleep 300 & echo $! >> ${pids}; sh -c 'sleep 300 & echo $! >> ${pids}; wait' & echo $! >> ${pids}; echo $$ >> ${pids}; wait`;
    expect(tasks(t.root, ['run', '1', '--owner', 'ci', '--', 'sh', '-c', script]).code).toBe(0);
    await vi.waitFor(() => expect(existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n').length : 0).toBe(4), WAIT);
    await vi.waitFor(() => expect(stateNow(t.root, 'bg_000001')).toBe('running'), WAIT);
    const tree = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    const record = job(t.root, 'bg_000001');
    expect(record.state).toBe('running');
    leftovers.push(record.pid!);
    for (const pid of tree) expect(running(pid)).toBe(true);

    const killed = tasks(t.root, ['kill', 'bg_000001']);
    expect(killed.code).toBe(0);
    expect(killed.stdout).toContain('killed bg_000001');
    for (const pid of [...tree, record.supervisorPid!]) await vi.waitFor(() => expect(running(pid)).toBe(false), WAIT);
    expect(job(t.root, 'bg_000001').state).toBe('killed');
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '', metadata: { lastError: { job: 'bg_000001', killed: true } } });
    expect(tasks(t.root, ['kill', 'bg_000001']).stdout).toContain('already finished');
  });

  it('a job whose task is released by another owner stops its whole tree within 5 s and ends lost, leaving the task alone', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Serve']);
    const pids = join(t.root, 'pids');
    const script = `sleep 300 & echo "$! $$" > ${pids}.tmp; mv ${pids}.tmp ${pids}; wait`;
    expect(tasks(t.root, ['run', '1', '--owner', 'ci', '--', 'sh', '-c', script]).code).toBe(0);
    await vi.waitFor(() => expect(existsSync(pids)).toBe(true), WAIT);
    await vi.waitFor(() => expect(stateNow(t.root, 'bg_000001')).toBe('running'), WAIT);
    const record = job(t.root, 'bg_000001');
    expect(record.state).toBe('running');
    leftovers.push(record.pid!);
    const tree = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
    for (const pid of tree) expect(running(pid)).toBe(true);

    expect(tasks(t.root, ['release', '1', '--force', '--owner', 'boss']).code).toBe(0);
    const released = readFileSync(join(t.board, 'task_1.json'), 'utf8');
    await vi.waitFor(() => expect(tree.filter(running)).toEqual([]), { timeout: 5000, interval: 25 });
    await vi.waitFor(() => expect(running(record.supervisorPid!)).toBe(false), WAIT);

    expect(job(t.root, 'bg_000001')).toMatchObject({ state: 'lost', status: 'lost', error: 'task #1 was released by boss (now pending)' });
    const log = events(t.root);
    expect(log.find((e) => e.type === 'work.stopped')).toMatchObject({ task: 1, owner: 'ci', job: 'bg_000001', reason: 'released', pid: record.pid });
    expect(log.find((e) => e.type === 'job.finished')).toMatchObject({
      task: 1,
      status: 'lost',
      reason: 'released',
      message: 'task #1 was released by boss (now pending)',
      unblocked: [],
    });
    // The supervisor neither completed nor released it again: the file is as boss left it.
    expect(readFileSync(join(t.board, 'task_1.json'), 'utf8')).toBe(released);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
    expect(tasks(t.root, ['logs', 'bg_000001']).stdout).toContain('tasks run: stopped: task #1 was released by boss (now pending)');
    expect(tasks(t.root, ['kill', 'bg_000001']).stdout).toContain('already finished (lost)');
  });

  it('a killed supervisor stops renewing: the lease expires and reap releases the task', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    // Short enough to see renewals, long enough that a loaded machine never misses one (renewed every 2 s).
    writeFileSync(join(t.board, 'config.json'), JSON.stringify({ leaseSeconds: 6 }));
    await createTasks(t.board, ['Long run']);
    expect(tasks(t.root, ['run', '1', '--owner', 'ci', '--', 'sleep', '300']).code).toBe(0);
    await vi.waitFor(() => expect(stateNow(t.root, 'bg_000001')).toBe('running'), WAIT);
    const record = job(t.root, 'bg_000001');
    expect(record.state).toBe('running');
    leftovers.push(record.pid!);
    const leaseFile = join(t.board, '.runtime', 'leases', 'task_1.json');
    const lease = () => JSON.parse(readFileSync(leaseFile, 'utf8')) as { expiresAt: string; pid?: number };
    expect(lease().pid).toBe(record.supervisorPid);
    // While the supervisor lives it renews the lease, so nothing is reaped.
    const first = lease().expiresAt;
    await vi.waitFor(() => expect(lease().expiresAt).not.toBe(first), WAIT);
    expect(JSON.parse(tasks(t.root, ['reap', '--json']).stdout).reaped).toEqual([]);

    process.kill(record.supervisorPid!, 'SIGKILL');
    // Gone first (a wait without a process), then reaped.
    await vi.waitFor(() => expect(running(record.supervisorPid!)).toBe(false), WAIT);
    await vi.waitFor(() => {
      const reaped = JSON.parse(tasks(t.root, ['reap', '--json']).stdout).reaped as { task: number }[];
      expect(reaped.map((r) => r.task)).toEqual([1]);
    }, WAIT);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
    expect(job(t.root, 'bg_000001').state).toBe('lost');
  });

  it('job ids are unique when several processes start jobs at once', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const n = 5;
    await createTasks(
      t.board,
      Array.from({ length: n }, (_, i) => `Job ${i + 1}`),
    );
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => tasksAsync(t.root, ['run', String(i + 1), '--owner', `w${i}`, '--json', '--', 'true'])),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const ids = results.map((r) => (JSON.parse(r.stdout) as { job: JobJson }).job.id).sort();
    expect(ids).toEqual(['bg_000001', 'bg_000002', 'bg_000003', 'bg_000004', 'bg_000005']);
    await vi.waitFor(() => expect(statesNow(t.root).map((j) => j.state)).toEqual(Array(n).fill('completed')), WAIT);
    expect(jobs(t.root).map((j) => j.state)).toEqual(Array(n).fill('completed'));
    expect(tasks(t.root, ['list']).stdout).toContain(`${n}/${n} done`);
  });

  it('logs --follow prints until the job ends', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Count']);
    const gate = join(t.root, 'gate');
    const script = `echo one; while [ ! -e ${gate} ]; do sleep 0.05; done; echo two`;
    tasks(t.root, ['run', '1', '--owner', 'ci', '--', 'sh', '-c', script]);
    const follow = tasksAsync(t.root, ['logs', 'bg_000001', '--follow']);
    await vi.waitFor(() => expect(readJobLog(t.root, 'bg_000001')).toBe('one\n'), WAIT);
    expect(tasks(t.root, ['logs', 'bg_000001']).stdout).toBe('one\n');
    writeFileSync(gate, '');
    const r = await follow;
    expect(r).toMatchObject({ code: 0, stdout: 'one\ntwo\n' });
  });

  it('a job whose task is reaped between its command’s end and its completion leaves it reaped, and ends lost', { timeout: 120_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Build']);
    const go = join(t.root, 'go');
    // The command waits for the test, then succeeds.
    const wait = `const fs = require('fs'); const tick = () => (fs.existsSync(${JSON.stringify(go)}) ? process.exit(0) : setTimeout(tick, 20)); tick();`;
    expect(tasks(t.root, ['run', '1', '--owner', 'ci', '--', process.execPath, '-e', wait]).code).toBe(0);
    await vi.waitFor(() => expect(stateNow(t.root, 'bg_000001')).toBe('running'), WAIT);
    const started = job(t.root, 'bg_000001');
    expect(started.state).toBe('running');
    const supervisor = started.supervisorPid!;

    // Watch the supervisor's attempts at the task's lock (a mkdir, as every lock here is).
    const log = join(t.root, 'strace.log');
    const strace = spawn('strace', ['-f', '-qq', '-e', 'trace=mkdir,mkdirat', '-o', log, '-p', String(supervisor)], { stdio: ['ignore', 'ignore', 'pipe'] });
    const traced = new Promise<void>((resolve, reject) => {
      strace.once('error', reject);
      strace.once('spawn', () => resolve());
    });
    await traced;
    // Attached once the supervisor shows a tracer.
    await vi.waitFor(() => expect(readFileSync(`/proc/${supervisor}/status`, 'utf8')).toMatch(/TracerPid:\s+[1-9]/), WAIT);
    try {
      // A reaper holds the task's lock, lets the command end, and reaps the task once the supervisor waits for the lock.
      const store = new TaskStore(t.board);
      const lock = `${store.taskPath(1)}.lock`;
      await store.transact({ tasks: [1] }, async (tx) => {
        writeFileSync(go, '');
        for (;;) {
          const seen = existsSync(log) ? readFileSync(log, 'utf8') : '';
          if (seen.split('\n').some((line) => line.includes(lock) && line.includes('EEXIST'))) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        const task = tx.edit(1);
        task.status = 'pending';
        task.owner = '';
        tx.put(task);
        tx.dropLease(1);
        tx.event({ type: 'reaped', task: 1, owner: 'reaper', previousOwner: 'ci', reason: 'test' });
      });
    } finally {
      strace.kill('SIGKILL');
    }
    await vi.waitFor(() => expect(['completed', 'failed', 'lost']).toContain(stateNow(t.root, 'bg_000001')), WAIT);
    // The completion was checked under the lock: the task is the reaper's doing, not completed by the job that lost it.
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
    expect(job(t.root, 'bg_000001').state).toBe('lost');
    expect(events(t.root).filter((e) => e.task === 1 && e.type === 'completed')).toEqual([]);
  });
});
