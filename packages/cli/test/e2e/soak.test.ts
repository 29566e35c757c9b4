import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { tasks, tasksAsync, tempBoard } from '../helpers.js';
import { leftovers, readEventLog, startTasks } from '../agents-helpers.js';

// Everything at once on one board: workers claiming and completing (some
// commands failing), the watcher, doctor --fix, and people adding tasks.
// Afterwards the board must be whole: nothing done twice or early, nothing
// lost, nothing left locked, and doctor finds nothing to say.
describe('workers, watcher, doctor and people together', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('leave a consistent board', { timeout: 600_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const TASKS = 60;
    const depsOf = new Map<number, number[]>();
    const items = [];
    for (let id = 1; id <= TASKS; id++) {
      const deps = new Set<number>();
      for (let k = 0; k < 2; k++) if (id > 3 && random() < 0.6) deps.add(1 + Math.floor(random() * (id - 1)));
      items.push({ subject: `task ${id}`, blockedBy: [...deps] });
      depsOf.set(id, [...deps]);
    }
    // Set up through the library (one transaction); everything after is real processes.
    await new TaskStore(t.board).batchWrite(items);
    const watcher = startTasks(t.root, ['watch', '--json', '--reconcile-interval', '2']);
    const command = ['node', '-e', 'setTimeout(() => process.exit(Math.random() < 0.1 ? 1 : 0), Math.random() * 80)'];
    const workers = [1, 2, 3].map((w) => startTasks(t.root, ['worker', '--owner', `agent-${w}`, '--max-failures', '5', '--', ...command]));
    // People meanwhile: new tasks that wait for old ones, and doctor --fix.
    const people = (async () => {
      for (let i = 0; i < 6; i++) {
        const blocker = 1 + Math.floor(random() * TASKS);
        const created = await tasksAsync(t.root, ['create', `added ${i}`, '--blocked-by', String(blocker), '--json']);
        expect(created.code, created.stderr).toBe(0);
        depsOf.set((JSON.parse(created.stdout) as { task: { id: number } }).task.id, [blocker]);
        const doctor = await tasksAsync(t.root, ['doctor', '--fix']);
        expect(doctor.code, doctor.stdout + doctor.stderr).toBe(0);
      }
    })();
    await people;
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r.code, r.stderr.slice(-500)).toBe(0);
    watcher.child.kill('SIGTERM');
    const w = await watcher.done;
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).not.toMatch(/"type":"(invalid|watch\.error)"/);

    // Finish what people added after the workers stopped, the ordinary way.
    const worker = await tasksAsync(t.root, ['worker', '--owner', 'closer', '--', 'true']);
    expect(worker.code, worker.stderr.slice(-500)).toBe(0);

    const board = JSON.parse(tasks(t.root, ['list', '--json']).stdout) as { tasks: { id: number; status: string }[]; problems: unknown[] };
    expect(board.problems).toEqual([]);
    expect(board.tasks).toHaveLength(TASKS + 6);
    expect(board.tasks.filter((task) => task.status !== 'completed')).toEqual([]);
    const events = readEventLog(t.board);
    const completedAt = new Map<number, number>();
    for (const e of events) {
      if (e.type !== 'completed') continue;
      expect(completedAt.has(e.task!), `#${e.task} completed twice`).toBe(false);
      completedAt.set(e.task!, e.seq);
    }
    // Nobody took a task from a worker here, so no command was stopped: the
    // claim watch raised no false alarm with the watcher and doctor at work.
    expect(events.filter((e) => e.type === 'work.stopped')).toEqual([]);
    const claims = events.filter((e) => e.type === 'claimed');
    expect(claims.length).toBeGreaterThanOrEqual(TASKS + 6);
    for (const e of claims) {
      for (const b of depsOf.get(e.task!)!) expect(completedAt.get(b)! < e.seq, `#${e.task} claimed before #${b} completed`).toBe(true);
    }
    expect(tasks(t.root, ['doctor']).code).toBe(0);
    expect(leftovers(t.board)).toEqual([]);
  });
});
