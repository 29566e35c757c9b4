import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore, isRunning } from '@dotasks/core/internal';
import { TASKS_BIN, createTasks, readTaskFile, tasks, tempBoard } from '../helpers.js';
import { isAlive, leftovers, readEventLog, startTasks } from '../agents-helpers.js';

/** `tasks start ID --owner OWNER` in process: a person's task in progress, for a worker to wait on (start has its own tests). */
const startAs = (board: string, id: number, owner: string) => new TaskStore(board).startTask(id, { owner, actor: owner });

/** A seeded random number generator, so a failing DAG can be reproduced. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('tasks worker (real processes)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('8 workers on a random 300-task DAG: each task completed once, never before its blockers', { timeout: 900_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const seed = Date.now() % 100_000;
    const rand = random(seed);
    const store = new TaskStore(t.board);
    const blockers = new Map<number, number[]>();
    const items = [];
    for (let id = 1; id <= 300; id++) {
      const candidates = Array.from({ length: Math.min(id - 1, 25) }, (_, k) => id - 1 - k);
      const picked = candidates.filter(() => rand() < 0.08);
      blockers.set(id, picked);
      items.push({ subject: `Task ${id}`, blockedBy: picked });
    }
    await store.batchWrite(items, { actor: 'setup' });
    const startSeq = readEventLog(t.board).at(-1)?.seq ?? 0;

    const workers = Array.from({ length: 8 }, (_, k) => startTasks(t.root, ['worker', '--owner', `w${k}`, '--json', '--', 'true']));
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r.code, `seed ${seed}: ${r.stderr.slice(-2000)}`).toBe(0);

    const events = readEventLog(t.board).filter((e) => e.seq > startSeq);
    const completedAt = new Map<number, number>();
    for (const e of events.filter((e) => e.type === 'completed')) {
      expect(completedAt.has(e.task!), `seed ${seed}: #${e.task} completed twice`).toBe(false);
      completedAt.set(e.task!, e.seq);
    }
    expect(completedAt.size).toBe(300);
    const starts = events.filter((e) => e.type === 'claimed' || e.type === 'started');
    expect(starts.length).toBeGreaterThanOrEqual(300);
    for (const start of starts) {
      for (const b of blockers.get(start.task!)!) {
        expect(completedAt.get(b), `seed ${seed}: #${start.task} claimed at ${start.seq} before #${b} was completed`).toBeLessThan(start.seq);
      }
    }
    // Every worker's own report agrees: it completed what the log says it did.
    const byWorker = results.flatMap((r) =>
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; task?: number; owner: string })
        .filter((e) => e.type === 'task.completed'),
    );
    expect(byWorker.map((e) => e.task).sort((a, b) => a! - b!)).toEqual([...completedAt.keys()].sort((a, b) => a - b));
    for (let id = 1; id <= 300; id++) expect(readTaskFile(t.board, id).status).toBe('completed');
    expect(leftovers(t.board)).toEqual([]);
    expect(readdirSync(join(t.board, '.runtime', 'leases'))).toEqual([]);
  });

  it('gives the command TASK_* in its environment and completes the task on exit 0', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [
      { subject: 'Parse AST', description: 'read the source' },
      { subject: 'Transform AST', blockedBy: [1] },
    ]);
    const out = join(t.root, 'out');
    mkdirSync(out);
    const script = `require('fs').writeFileSync(require('path').join(${JSON.stringify(out)}, process.env.TASK_ID + '.json'), JSON.stringify(process.env))`;
    const w = startTasks(t.root, ['worker', '--owner', 'agent-1', '--', process.execPath, '-e', script]);
    const r = await w.done;
    expect(r.code, r.stderr).toBe(0);
    const env = JSON.parse(readFileSync(join(out, '1.json'), 'utf8')) as Record<string, string>;
    expect(env).toMatchObject({
      TASK_ID: '1',
      TASK_SUBJECT: 'Parse AST',
      TASK_DESCRIPTION: 'read the source',
      TASK_FILE: join(t.board, 'task_1.json'),
      TASKS_DIR: t.board,
      TASKS_OWNER: 'agent-1',
    });
    expect(existsSync(join(out, '2.json'))).toBe(true);
    expect(r.stderr).toContain('[agent-1] claimed #1: Parse AST');
    expect(r.stderr).toContain('[agent-1] completed #1');
    expect(r.stderr).toContain('unblocked #2');
    expect(r.stderr).toContain('[agent-1] stopped: nothing left that it can do (2 completed');
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'completed', owner: 'agent-1' });
  });

  it('a failing command releases the task with metadata.lastError; a one-string command runs in the shell', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Flaky']);
    const w = startTasks(t.root, ['worker', '--owner', 'agent-1', '--max-failures', '1', '--json', '--', 'echo "boom on $TASK_ID"; exit 7']);
    const r = await w.done;
    expect(r.code).toBe(1);
    const task = readTaskFile(t.board, 1) as { status: string; owner: string; metadata: { lastError: Record<string, unknown> } };
    expect(task).toMatchObject({ status: 'pending', owner: '' });
    expect(task.metadata.lastError).toMatchObject({ exitCode: 7, signal: null, owner: 'agent-1', tail: 'boom on 1' });
    expect(Date.parse(task.metadata.lastError.at as string)).not.toBeNaN();
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(events.map((e) => e.type)).toEqual(['worker.started', 'task.claimed', 'task.failed', 'worker.stopped']);
    expect(events[3]).toMatchObject({ reason: 'drained', gaveUp: [1] });
    expect(readEventLog(t.board).at(-1)).toMatchObject({ type: 'released', task: 1, reason: 'failed' });
  });

  it('retries a task that failed once and then completes it', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Flaky once']);
    const marker = join(t.root, 'failed-once');
    const cmd = `if [ -e ${marker} ]; then exit 0; else touch ${marker}; exit 1; fi`;
    const r = await startTasks(t.root, ['worker', '--owner', 'agent-1', '--', cmd]).done;
    expect(r.code, r.stderr).toBe(0);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', metadata: { lastError: { exitCode: 1 } } });
    expect(readEventLog(t.board).map((e) => e.type)).toEqual(['created', 'claimed', 'released', 'claimed', 'completed']);
  });

  it('a worker SIGKILLed mid-task: the task is reaped and finished by another worker', { timeout: 300_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    writeFileSync(join(t.board, 'config.json'), JSON.stringify({ leaseSeconds: 2 }) + '\n');
    await createTasks(t.board, ['Long job', { subject: 'After it', blockedBy: [1] }]);
    const marker = join(t.root, 'hung.pid');
    // The first run of #1 hangs (recording its pid); every other run succeeds at once.
    const cmd = `if [ "$TASK_ID" = 1 ] && [ ! -e ${marker} ]; then echo $$ > ${marker}; exec sleep 120; fi`;
    const first = startTasks(t.root, ['worker', '--owner', 'doomed', '--', cmd]);
    await vi.waitFor(() => expect(existsSync(marker) && readFileSync(marker, 'utf8').trim() !== '').toBe(true), { timeout: 60_000, interval: 50 });
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'in_progress', owner: 'doomed' });
    first.child.kill('SIGKILL');
    await first.done;
    // Its command lives on in its own process group; end it so the test leaves nothing behind.
    const hung = Number(readFileSync(marker, 'utf8'));
    process.kill(-hung, 'SIGKILL');

    const second = await startTasks(t.root, ['worker', '--owner', 'rescuer', '--', cmd]).done;
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/\[rescuer\] reaped #1 \(doomed: (lease expired|process gone)\)/);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', owner: 'rescuer' });
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'completed', owner: 'rescuer' });
    const log = readEventLog(t.board);
    expect(log.find((e) => e.type === 'reaped')).toMatchObject({ task: 1, owner: 'rescuer', previousOwner: 'doomed' });
    expect(log.filter((e) => e.type === 'completed').map((e) => [e.task, e.owner])).toEqual([
      [1, 'rescuer'],
      [2, 'rescuer'],
    ]);
  });

  it('a reaped task is not completed by the worker that lost it', { timeout: 300_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Slow']);
    const started = join(t.root, 'started');
    const go = join(t.root, 'go');
    const cmd = `touch ${started}; while [ ! -e ${go} ]; do sleep 0.05; done`;
    const w = startTasks(t.root, ['worker', '--owner', 'slowpoke', '--max-tasks', '1', '--', cmd]);
    await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 60_000, interval: 50 });
    // Someone takes the task away meanwhile.
    expect(tasks(t.root, ['release', '1', '--force', '--owner', 'boss']).code).toBe(0);
    writeFileSync(go, '');
    const r = await w.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('[slowpoke] lost #1');
    expect(readEventLog(t.board).filter((e) => e.type === 'completed')).toEqual([]);
  });

  it('SIGTERM stops the command with everything it started and releases the task', { timeout: 300_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Endless']);
    const pids = join(t.root, 'pids');
    // A command with a grandchild in the background: both must go.
    const cmd = `sleep 300 & echo $! > ${pids}; wait`;
    const w = startTasks(t.root, ['worker', '--owner', 'agent-1', '--', cmd]);
    await vi.waitFor(() => expect(existsSync(pids) && readFileSync(pids, 'utf8').trim() !== '').toBe(true), { timeout: 60_000, interval: 50 });
    const grandchild = Number(readFileSync(pids, 'utf8'));
    expect(isAlive(grandchild)).toBe(true);
    w.child.kill('SIGTERM');
    const r = await w.done;
    expect(r.code).toBe(143);
    expect(r.stderr).toContain('[agent-1] interrupted: stopped the command and released #1');
    await vi.waitFor(() => expect(isAlive(grandchild)).toBe(false), { timeout: 30_000, interval: 50 });
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
    expect(readEventLog(t.board).at(-1)).toMatchObject({ type: 'released', task: 1, reason: 'interrupted', previousOwner: 'agent-1' });
    expect(leftovers(t.board)).toEqual([]);
  });

  it("waits while a person's task in progress blocks more work, and goes on when it is done", { timeout: 300_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Refactor auth', { subject: 'OAuth endpoint', blockedBy: [1] }, 'Unrelated']);
    await startAs(t.board, 1, 'alice');
    const w = startTasks(t.root, ['worker', '--owner', 'bot', '--', 'true']);
    await vi.waitFor(() => expect(w.stderr()).toContain('[bot] nothing ready; waiting for #1'), { timeout: 60_000, interval: 50 });
    expect(readTaskFile(t.board, 3)).toMatchObject({ status: 'completed', owner: 'bot' });
    expect(tasks(t.root, ['done', '1', '--owner', 'alice']).code).toBe(0);
    const r = await w.done;
    expect(r.code, r.stderr).toBe(0);
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'completed', owner: 'bot' });
  });

  it('--idle-exit stops a waiting worker; --max-tasks stops after N tasks', { timeout: 300_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Held by a person', { subject: 'Waits for it', blockedBy: [1] }, 'Free one', 'Free two']);
    await startAs(t.board, 1, 'alice');
    const one = await startTasks(t.root, ['worker', '--owner', 'bot', '--max-tasks', '1', '--json', '--', 'true']).done;
    expect(one.code).toBe(0);
    expect(one.stdout.trim().split('\n').at(-1)).toContain('"reason":"max_tasks"');
    expect(readTaskFile(t.board, 3)).toMatchObject({ status: 'completed' });
    expect(readTaskFile(t.board, 4)).toMatchObject({ status: 'pending' });
    const idle = await startTasks(t.root, ['worker', '--owner', 'bot', '--idle-exit', '1', '--', 'true']).done;
    expect(idle.code).toBe(0);
    expect(idle.stderr).toContain('stopped: idle for --idle-exit seconds (1 completed');
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'pending' });
  });

  it('refuses to start without a command', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const r = tasks(t.root, ['worker', '--owner', 'bot']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('worker needs a command after --');
  });

  describe('stops its command when the task is taken away', () => {
    // Whatever a failing test leaves running (the worker, the command's group)
    // goes with it; after a pass they are gone and their pids may be reused.
    const stray: number[] = [];
    afterEach(({ task }) => {
      const pids = stray.splice(0);
      if (task.result?.state !== 'fail') return;
      for (const pid of pids) {
        for (const target of [pid, -pid]) {
          try {
            process.kill(target, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    });
    const start = (root: string, args: string[]) => {
      const w = startTasks(root, args);
      stray.push(w.child.pid!);
      return w;
    };
    /** A shell that starts a grandchild and waits; `file` gets "grandchild shell" once both run. */
    const treeCommand = (file: string) => `sleep 300 & echo "$! $$" > ${file}.tmp; mv ${file}.tmp ${file}; wait`;
    const pidsIn = async (file: string): Promise<number[]> => {
      await vi.waitFor(() => expect(existsSync(file)).toBe(true), { timeout: 60_000, interval: 25 });
      const pids = readFileSync(file, 'utf8').trim().split(' ').map(Number);
      stray.push(pids[1]); // the shell leads the command's process group
      expect(pids.filter(isRunning)).toEqual(pids);
      return pids;
    };
    /** Resolves once none of `pids` runs; fails after 5 s. */
    const goneWithin5s = (pids: number[]) => vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]), { timeout: 5000, interval: 25 });
    const workerEvents = (stdout: string) =>
      stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);

    it('released by another owner: the command and its grandchild stop within 5 s, and the task stays released', async () => {
      const t = tempBoard();
      cleanup = t.cleanup;
      await createTasks(t.board, ['Endless']);
      const pids = join(t.root, 'pids');
      const w = start(t.root, ['worker', '--owner', 'agent-1', '--json', '--', treeCommand(pids)]);
      const tree = await pidsIn(pids);
      expect(tasks(t.root, ['release', '1', '--force', '--owner', 'boss']).code).toBe(0);
      await goneWithin5s(tree);

      const r = await w.done;
      expect(r.code, r.stderr).toBe(0);
      const events = workerEvents(r.stdout);
      expect(events.find((e) => e.type === 'task.lost')).toMatchObject({ task: 1, reason: 'released', message: 'task #1 was released by boss (now pending)' });
      // It leaves the task to others instead of claiming it straight back.
      expect(events.at(-1)).toMatchObject({ type: 'worker.stopped', reason: 'drained', completed: [], lost: [1] });
      expect(r.stderr).toContain('[agent-1] lost #1: task #1 was released by boss (now pending)');
      const log = readEventLog(t.board);
      const released = log.findIndex((e) => e.type === 'released');
      expect(log.slice(released).map((e) => [e.type, e.owner])).toEqual([
        ['released', 'boss'],
        ['work.stopped', 'agent-1'],
      ]);
      expect(log.at(-1)).toMatchObject({ task: 1, reason: 'released', message: 'task #1 was released by boss (now pending)' });
      expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
      expect(leftovers(t.board)).toEqual([]);
    });

    it("released and claimed by another owner: the command stops and the new owner's claim is left alone", async () => {
      const t = tempBoard();
      cleanup = t.cleanup;
      await createTasks(t.board, ['Contested']);
      const pids = join(t.root, 'pids');
      const w = start(t.root, ['worker', '--owner', 'agent-1', '--json', '--', treeCommand(pids)]);
      const tree = await pidsIn(pids);
      expect(tasks(t.root, ['release', '1', '--force', '--owner', 'boss']).code).toBe(0);
      expect(tasks(t.root, ['claim', '1', '--owner', 'agent-2']).code).toBe(0);
      const lease = readFileSync(join(t.board, '.runtime', 'leases', 'task_1.json'), 'utf8');
      await goneWithin5s(tree);

      const r = await w.done;
      expect(r.code, r.stderr).toBe(0);
      // Seen before or after agent-2's claim, depending on timing.
      const lost = workerEvents(r.stdout).find((e) => e.type === 'task.lost');
      expect(lost?.message).toMatch(/^task #1 was released by boss \(now (pending|claimed by agent-2)\)$/);
      const log = readEventLog(t.board);
      expect(log.find((e) => e.type === 'work.stopped')).toMatchObject({ task: 1, owner: 'agent-1', reason: 'released' });
      expect(log.filter((e) => e.owner === 'agent-1').map((e) => e.type)).toEqual(['claimed', 'work.stopped']);
      expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'in_progress', owner: 'agent-2' });
      expect(readFileSync(join(t.board, '.runtime', 'leases', 'task_1.json'), 'utf8')).toBe(lease);
    });

    it('reaped after its lease lapsed: the command stops within 5 s and the worker does not complete the task', async () => {
      const t = tempBoard();
      cleanup = t.cleanup;
      await createTasks(t.board, ['Overslept']);
      const pids = join(t.root, 'pids');
      const w = start(t.root, ['worker', '--owner', 'sleepy', '--json', '--', treeCommand(pids)]);
      const tree = await pidsIn(pids);
      // As if the worker had been suspended past its lease (renewed every
      // 5 min by default): the record says it expired, and someone reaps it.
      const leaseFile = join(t.board, '.runtime', 'leases', 'task_1.json');
      const lease = JSON.parse(readFileSync(leaseFile, 'utf8')) as { expiresAt: string };
      writeFileSync(leaseFile, JSON.stringify({ ...lease, expiresAt: new Date(Date.now() - 1000).toISOString() }));
      expect(JSON.parse(tasks(t.root, ['reap', '--owner', 'boss', '--json']).stdout)).toMatchObject({
        reaped: [{ task: 1, owner: 'sleepy', reason: 'expired' }],
      });
      await goneWithin5s(tree);

      const r = await w.done;
      expect(r.code, r.stderr).toBe(0);
      expect(workerEvents(r.stdout).find((e) => e.type === 'task.lost')).toMatchObject({
        reason: 'reaped',
        message: 'task #1 was reaped by boss: its lease expired (now pending)',
      });
      const log = readEventLog(t.board);
      expect(log.find((e) => e.type === 'work.stopped')).toMatchObject({ task: 1, owner: 'sleepy', reason: 'reaped' });
      expect(log.filter((e) => e.type === 'completed')).toEqual([]);
      expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
    });

    it('the command claiming its own task again is no loss: the worker completes it', async () => {
      const t = tempBoard();
      cleanup = t.cleanup;
      await createTasks(t.board, ['Self-aware']);
      // `tasks claim` writes a new claim record (new claimedAt) for the same
      // owner; the worker looks several times before the command ends.
      const cmd = `"${process.execPath}" "${TASKS_BIN}" claim "$TASK_ID" && sleep 2`;
      const r = await start(t.root, ['worker', '--owner', 'agent-1', '--json', '--', cmd]).done;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('already held');
      expect(workerEvents(r.stdout).map((e) => e.type)).toEqual(['worker.started', 'task.claimed', 'task.completed', 'worker.stopped']);
      expect(readEventLog(t.board).map((e) => e.type)).toEqual(['created', 'claimed', 'completed']);
    });
  });
});
