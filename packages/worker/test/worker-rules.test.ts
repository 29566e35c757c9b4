import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore, TasksError, isRunning, readLeases } from '@dotasks/core/internal';
import { runWorker, type LastError, type WorkerEvent, type WorkerOptions } from '../src/index.js';

/** Generous: two cores are shared with other builds and tests. */
const WAIT = { timeout: 20_000, interval: 20 };

/** A command that runs `script` in a fresh node (argv form, no shell). */
const node = (script: string): string[] => [process.execPath, '-e', script];
/** A command that waits until `file` exists, then exits 0 (a poll, not a sleep: the test says when). */
const untilExists = (file: string): string[] =>
  node(`const fs = require('fs'); const t = setInterval(() => { if (fs.existsSync(${JSON.stringify(file)})) { clearInterval(t); } }, 10);`);

describe('the worker loop (in-process, real commands)', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const board = () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-worker-')));
    return TaskStore.init(join(dir, '.tasks'));
  };
  /** Runs a worker with quick polls, collecting its events. */
  const work = (options: Omit<WorkerOptions, 'onEvent'>) => {
    const events: WorkerEvent[] = [];
    const done = runWorker({ pollMs: 20, claimCheckMs: 50, ...options, onEvent: (e) => events.push(e) });
    return { events, done, types: () => events.map((e) => e.type) };
  };

  it('refuses to start without a command or an owner', async () => {
    const store = board();
    await expect(runWorker({ store, owner: 'w1', command: [] })).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(runWorker({ store, owner: '', command: ['true'] })).rejects.toBeInstanceOf(TasksError);
    await expect(runWorker({ store, owner: '', command: ['true'] })).rejects.toMatchObject({ code: 'E_USAGE' });
  });

  it('claims ready tasks in dependency order, runs the command with TASK_* in its env and cwd, and completes on exit 0', async () => {
    const store = board();
    await store.createTask({ subject: 'Parse AST', description: 'the parser' });
    await store.createTask({ subject: 'Transform AST', blockedBy: [1] });
    const cwd = join(dir, 'work');
    mkdirSync(cwd);
    const seen = join(dir, 'seen.jsonl');
    const record = `require('fs').appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ cwd: process.cwd(), ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('TASK'))) }) + '\\n')`;
    const { done, events } = work({ store, owner: 'w1', command: node(record), cwd, env: { PATH: process.env.PATH, TASK_EXTRA: 'kept' } });
    const summary = await done;

    expect(summary).toEqual({ owner: 'w1', reason: 'drained', completed: [1, 2], failed: [], gaveUp: [], lost: [] });
    const runs = readFileSync(seen, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(runs).toEqual([
      {
        cwd,
        TASK_ID: '1',
        TASK_SUBJECT: 'Parse AST',
        TASK_DESCRIPTION: 'the parser',
        TASK_FILE: store.taskPath(1),
        TASKS_DIR: store.dir,
        TASKS_OWNER: 'w1',
        TASK_EXTRA: 'kept',
        // A fresh file of its own for the command's result, and what the tasks it waits for came to.
        TASK_RESULT_FILE: expect.stringMatching(/dotasks-result-.+\/result$/),
        TASK_UPSTREAM: '[]',
      },
      expect.objectContaining({
        TASK_ID: '2',
        TASK_SUBJECT: 'Transform AST',
        TASK_DESCRIPTION: '',
        TASK_UPSTREAM: '[{"id":1,"subject":"Parse AST","result":null}]',
      }),
    ]);
    expect(runs[0].TASK_RESULT_FILE).not.toBe(runs[1].TASK_RESULT_FILE);
    expect(store.getTask(1)).toMatchObject({ status: 'completed', owner: 'w1' });
    expect(store.getTask(2)).toMatchObject({ status: 'completed', owner: 'w1' });
    expect(events.map((e) => e.type)).toEqual(['worker.started', 'task.claimed', 'task.completed', 'task.claimed', 'task.completed', 'worker.stopped']);
    expect(events.find((e) => e.type === 'task.completed')).toMatchObject({ task: 1, unblocked: [2], owner: 'w1' });
    expect(readLeases(store)).toEqual([]);
  });

  it('runs a one-string command through the shell, so $TASK_SUBJECT expands', async () => {
    const store = board();
    await store.createTask({ subject: 'Say hello' });
    const out = join(dir, 'out.txt');
    const summary = await work({ store, owner: 'w1', command: [`echo "#$TASK_ID $TASK_SUBJECT" > ${JSON.stringify(out)}`], cwd: dir }).done;
    expect(summary.completed).toEqual([1]);
    expect(readFileSync(out, 'utf8')).toBe('#1 Say hello\n');
  });

  it('releases a failed task with metadata.lastError, retries it, and leaves it to others after maxFailures', async () => {
    const store = board();
    await store.createTask({ subject: 'Flaky' });
    const failing = node(`console.log('working on ' + process.env.TASK_ID); console.error('boom'); process.exit(3);`);
    const first = work({ store, owner: 'w1', command: failing });
    const summary = await first.done;

    // Default maxFailures 2: the first failure is retried, the second gives up; nothing else can be done, so it drains.
    expect(summary).toEqual({ owner: 'w1', reason: 'drained', completed: [], failed: [1, 1], gaveUp: [1], lost: [] });
    expect(first.events.filter((e) => e.type === 'task.failed')).toEqual([
      expect.objectContaining({ task: 1, exitCode: 3, signal: null, retry: true }),
      expect.objectContaining({ task: 1, exitCode: 3, signal: null, retry: false }),
    ]);
    const task = store.getTask(1);
    expect(task).toMatchObject({ status: 'pending', owner: '' });
    const lastError = task.metadata?.lastError as LastError;
    expect(lastError).toMatchObject({ exitCode: 3, signal: null, owner: 'w1' });
    expect(lastError.tail).toContain('working on 1');
    expect(lastError.tail).toContain('boom');
    // Each failure also left a note, in the task file, with the exit code and the output's end.
    expect(task.notes).toHaveLength(2);
    expect(task.notes![1]).toMatchObject({ owner: 'w1' });
    expect(task.notes![1].text).toMatch(/^worker: the command failed \(exit 3\); its output ended:\n[\s\S]*working on 1[\s\S]*boom/);
    expect(store.readEvents().filter((e) => e.type === 'released')).toHaveLength(2);

    // Another worker still takes it: giving up is this worker's, not the board's.
    const other = await work({ store, owner: 'w2', command: node('') }).done;
    expect(other).toMatchObject({ reason: 'drained', completed: [1] });
    expect(store.getTask(1)).toMatchObject({ status: 'completed', owner: 'w2' });
  });

  it('gives up at once with maxFailures 1, and carries on with the other tasks', async () => {
    const store = board();
    await store.createTask({ subject: 'Broken' });
    await store.createTask({ subject: 'Fine' });
    const command = node(`process.exit(process.env.TASK_SUBJECT === 'Broken' ? 1 : 0)`);
    const summary = await work({ store, owner: 'w1', command, maxFailures: 1 }).done;
    expect(summary).toEqual({ owner: 'w1', reason: 'drained', completed: [2], failed: [1], gaveUp: [1], lost: [] });
    expect(store.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
  });

  it('counts a command that cannot start as a failure (exit 127)', async () => {
    const store = board();
    await store.createTask({ subject: 'Missing tool' });
    const summary = await work({ store, owner: 'w1', command: [join(dir, 'no-such-program'), '--flag'], maxFailures: 1 }).done;
    expect(summary).toMatchObject({ completed: [], failed: [1], gaveUp: [1] });
    expect((store.getTask(1).metadata?.lastError as LastError).exitCode).toBe(127);
  });

  it('stops after maxTasks tasks were taken, leaving the rest pending', async () => {
    const store = board();
    for (const subject of ['One', 'Two', 'Three']) await store.createTask({ subject });
    const summary = await work({ store, owner: 'w1', command: node(''), maxTasks: 2 }).done;
    expect(summary.reason).toBe('max_tasks');
    expect(summary.completed).toHaveLength(2);
    const left = store.loadBoard().tasks.filter((t) => t.status === 'pending');
    expect(left).toHaveLength(1);
    expect(left[0].owner).toBe('');
  });

  it('counts a failed task towards maxTasks', async () => {
    const store = board();
    await store.createTask({ subject: 'Fails' });
    await store.createTask({ subject: 'Never reached' });
    const command = node(`process.exit(process.env.TASK_ID === '1' ? 1 : 0)`);
    const summary = await work({ store, owner: 'w1', command, maxTasks: 1 }).done;
    expect(summary).toMatchObject({ reason: 'max_tasks', completed: [], failed: [1] });
    expect(store.getTask(2).status).toBe('pending');
  });

  it('waits while another owner holds what it could take next, and stops after idleExitSeconds', async () => {
    const store = board();
    await store.createTask({ subject: 'Held elsewhere' });
    await store.claimTask(1, { owner: 'w2' });
    const started = Date.now();
    const { done, events } = work({ store, owner: 'w1', command: node(''), idleExitSeconds: 0.2 });
    const summary = await done;
    expect(summary).toMatchObject({ reason: 'idle', completed: [] });
    expect(events.filter((e) => e.type === 'worker.waiting')).toEqual([expect.objectContaining({ inProgress: [1] })]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(store.getTask(1)).toMatchObject({ status: 'in_progress', owner: 'w2' });
  });

  it('takes a task as soon as the one blocking it is completed by another owner', async () => {
    const store = board();
    await store.createTask({ subject: 'Schema' });
    await store.createTask({ subject: 'Migration', blockedBy: [1] });
    await store.claimTask(1, { owner: 'w2' });
    const { done, types } = work({ store, owner: 'w1', command: node('') });
    await vi.waitFor(() => expect(types()).toContain('worker.waiting'), WAIT);
    await store.completeTask(1, { actor: 'w2' });
    const summary = await done;
    expect(summary).toMatchObject({ reason: 'drained', completed: [2] });
    expect(types()).toEqual(['worker.started', 'worker.waiting', 'task.claimed', 'task.completed', 'worker.stopped']);
  });

  it('renews the lease while the command runs, so a task outliving its first lease is not reaped', async () => {
    const store = board();
    await store.createTask({ subject: 'Long' });
    const go = join(dir, 'go');
    const { done, types } = work({ store, owner: 'w1', command: untilExists(go), leaseSeconds: 1 });
    await vi.waitFor(() => expect(types()).toContain('task.claimed'), WAIT);
    const [first] = readLeases(store);
    expect(first).toMatchObject({ task: 1, owner: 'w1', pid: process.pid });
    const firstExpiry = Date.parse(first.expiresAt!);

    // Past the first lease's end, the lease is still ours and runs later; a reaper finds nothing to take.
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(firstExpiry + 300), WAIT);
    const [renewed] = readLeases(store);
    expect(renewed).toMatchObject({ task: 1, owner: 'w1' });
    expect(Date.parse(renewed.expiresAt!)).toBeGreaterThan(Date.now());
    expect(await store.reap({ actor: 'reaper' })).toEqual([]);

    writeFileSync(go, '');
    expect(await done).toMatchObject({ reason: 'drained', completed: [1], lost: [] });
  });

  it('on abort stops the command, releases its task as interrupted, and ends', async () => {
    const store = board();
    await store.createTask({ subject: 'Interrupted' });
    const pidFile = join(dir, 'pid');
    const controller = new AbortController();
    const command = node(`require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`);
    const { done, events } = work({ store, owner: 'w1', command, signal: controller.signal });
    await vi.waitFor(() => expect(existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '').toBe(true), WAIT);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    controller.abort();
    const summary = await done;

    expect(summary).toMatchObject({ reason: 'aborted', completed: [], failed: [] });
    expect(events.map((e) => e.type)).toContain('task.interrupted');
    expect(isRunning(pid)).toBe(false);
    expect(store.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
    expect(store.readEvents().find((e) => e.type === 'released')).toMatchObject({ task: 1, reason: 'interrupted' });
    expect(readLeases(store)).toEqual([]);
  });

  it('stops the command of a task another owner took over, and leaves the task to them', async () => {
    const store = board();
    await store.createTask({ subject: 'Taken over' });
    const pidFile = join(dir, 'pid');
    const command = node(`require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`);
    const { done, events } = work({ store, owner: 'w1', command });
    await vi.waitFor(() => expect(existsSync(pidFile) && readFileSync(pidFile, 'utf8') !== '').toBe(true), WAIT);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await store.releaseTask(1, { actor: 'lead', force: true });
    await store.claimTask(1, { owner: 'w2' });
    const summary = await done;

    expect(summary).toMatchObject({ reason: 'drained', completed: [], failed: [], lost: [1] });
    expect(events.find((e) => e.type === 'task.lost')).toMatchObject({ task: 1, reason: expect.stringMatching(/^(released|claimed)$/) });
    expect(isRunning(pid)).toBe(false);
    expect(store.getTask(1)).toMatchObject({ status: 'in_progress', owner: 'w2' });
  });
});
