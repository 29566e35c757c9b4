import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  TASKS_BIN,
  WAIT,
  cleanEnv,
  createTasks,
  editTask,
  nudgeBoard,
  readTaskFile,
  startWatcher,
  tasks,
  tempBoard,
  type WatchEventLine,
  type WatcherProcess,
} from './helpers.js';

/** The board's event log, as written. */
const logEvents = (board: string): WatchEventLine[] =>
  readFileSync(join(board, '.runtime', 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as WatchEventLine);

describe('tasks watch', () => {
  const cleanups: (() => void | Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A board with #1 ← #2 (#2 waits for #1) and an unrelated #3, and a running watcher. */
  async function boardWithWatcher(args: string[] = [], env: Record<string, string> = {}): Promise<{ root: string; board: string; w: WatcherProcess }> {
    const t = tempBoard();
    cleanups.push(t.cleanup);
    await createTasks(t.board, ['Parse AST', { subject: 'Transform AST', blockedBy: [1] }, 'Write docs']);
    const w = startWatcher(t.root, args, env);
    cleanups.push(() => w.stop());
    await w.ready();
    return { root: t.root, board: t.board, w };
  }

  for (const how of ['in-place', 'rename'] as const) {
    it(`propagates a completion written by hand (${how})`, async () => {
      const { board, w } = await boardWithWatcher();
      editTask(board, 1, (t) => (t.status = 'completed'), how);
      await vi.waitFor(() => expect(readTaskFile(board, 2).blockedBy).toEqual([]), WAIT);
      await vi.waitFor(() => expect(w.events).toContainEqual(expect.objectContaining({ type: 'unblocked', task: 2, by: 1 })), WAIT);
      // The hand-edited file itself is left as the person wrote it.
      expect(readTaskFile(board, 1).blocks).toEqual([2]);
      // Logged as completed, by hand, before the unblocking it caused.
      const log = logEvents(board);
      const completed = log.filter((e) => e.type === 'completed');
      expect(completed).toEqual([expect.objectContaining({ task: 1, owner: 'watcher', by: 'hand' })]);
      expect(completed[0].seq).toBeLessThan(log.find((e) => e.type === 'unblocked' && e.task === 2)!.seq);
      expect(w.events).toContainEqual(expect.objectContaining({ type: 'completed', task: 1, by: 'hand' }));
    });
  }

  it('logs no second completed for a completion made through tasks done', async () => {
    const { root, board, w } = await boardWithWatcher();
    expect(tasks(root, ['done', '1']).code).toBe(0);
    editTask(board, 3, (t) => (t.status = 'completed'));
    await vi.waitFor(() => expect(w.events).toContainEqual(expect.objectContaining({ type: 'completed', task: 3, by: 'hand' })), WAIT);
    // Nothing more to wait for: what is under test is that nothing comes. The watcher looks at
    // each changed file once more 300 ms after its last event; give both files that look.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(
      logEvents(board)
        .filter((e) => e.type === 'completed')
        .map((e) => [e.task, e.by ?? 'store']),
    ).toEqual([
      [1, 'store'],
      [3, 'hand'],
    ]);
    expect(w.events.filter((e) => e.type === 'completed' && e.task === 1)).toEqual([]);
  });

  it("restores its repair when an editor saves an old copy over it, instead of removing the person's edge", async () => {
    const { board, w } = await boardWithWatcher();
    // #3 is open in an editor: its buffer holds the bytes as they are now.
    const staleBuffer = readFileSync(join(board, 'task_3.json'), 'utf8');
    // The person adds "#1 blocks #3" in #1's file; the watcher writes the other side into #3.
    editTask(board, 1, (t) => (t.blocks = [2, 3]));
    await vi.waitFor(() => expect(readTaskFile(board, 3).blockedBy, w.stderr() + JSON.stringify(w.events)).toEqual([1]), { ...WAIT, timeout: 10_000 });
    await vi.waitFor(() => expect(w.events).toContainEqual(expect.objectContaining({ type: 'repaired', task: 3, added: 1 })), WAIT);
    // The editor saves #3 from its old buffer.
    writeFileSync(join(board, 'task_3.json'), staleBuffer);
    await vi.waitFor(
      () =>
        expect(w.stderr(), JSON.stringify(w.events) + readFileSync(join(board, 'task_3.json'), 'utf8')).toContain(
          'saved from an old copy that undid a repair; repaired it again',
        ),
      { ...WAIT, timeout: 8000 },
    );
    await vi.waitFor(() => expect(readTaskFile(board, 3).blockedBy, w.stderr() + JSON.stringify(w.events)).toEqual([1]), { ...WAIT, timeout: 8000 });
    // Both halves of what the person wrote are still there.
    expect(readTaskFile(board, 1).blocks).toEqual([2, 3]);
    expect(w.events.filter((e) => e.type === 'repaired' && e.removed !== undefined)).toEqual([]);
    // A real edit of #3 that drops the edge is still mirrored.
    editTask(board, 3, (t) => (t.blockedBy = []));
    await vi.waitFor(() => expect(readTaskFile(board, 1).blocks).toEqual([2]), WAIT);
  });

  it('propagates a completion that arrives with git checkout', async () => {
    const t = tempBoard({ init: false });
    cleanups.push(t.cleanup);
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: t.root, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    expect(tasks(t.root, ['init']).code).toBe(0);
    await createTasks(t.board, ['Parse AST', { subject: 'Transform AST', blockedBy: [1] }]);
    git('add', '-A');
    git('commit', '-qm', 'two tasks');
    git('checkout', '-q', '-b', 'parsed');
    editTask(t.board, 1, (task) => (task.status = 'completed'));
    git('commit', '-qam', 'parse done, by hand');
    git('checkout', '-q', 'main');
    expect(readTaskFile(t.board, 1).status).toBe('pending');

    const w = startWatcher(t.root);
    cleanups.push(() => w.stop());
    await w.ready();
    git('checkout', '-q', 'parsed');
    await vi.waitFor(() => expect(readTaskFile(t.board, 2).blockedBy).toEqual([]), WAIT);
    await vi.waitFor(() => expect(w.events).toContainEqual(expect.objectContaining({ type: 'unblocked', task: 2, by: 1 })), WAIT);
  });

  it('handles a git checkout that changes hundreds of files at once', async () => {
    const t = tempBoard({ init: false });
    cleanups.push(t.cleanup);
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: t.root, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    expect(tasks(t.root, ['init']).code).toBe(0);
    // #1..#300 each block #301..#600, written as files the way git would bring them.
    const write = (id: number, status: string) => {
      const task = {
        id,
        subject: `Task ${id}`,
        description: '',
        status,
        owner: '',
        blockedBy: id > 300 ? [id - 300] : [],
        blocks: id <= 300 ? [id + 300] : [],
      };
      writeFileSync(join(t.board, `task_${id}.json`), JSON.stringify(task, null, 2) + '\n');
    };
    for (let id = 1; id <= 600; id++) write(id, 'pending');
    git('add', '-A');
    git('commit', '-qm', 'six hundred tasks');
    git('checkout', '-q', '-b', 'done');
    for (let id = 1; id <= 300; id++) write(id, 'completed');
    git('commit', '-qam', 'three hundred completed by hand');
    git('checkout', '-q', 'main');

    const w = startWatcher(t.root);
    cleanups.push(() => w.stop());
    await w.ready();
    git('checkout', '-q', 'done');
    await vi.waitFor(() => {
      const stillBlocked = [];
      for (let id = 301; id <= 600; id++) if ((readTaskFile(t.board, id).blockedBy as number[]).length) stillBlocked.push(id);
      expect(stillBlocked).toEqual([]);
    }, WAIT);
    await vi.waitFor(() => expect(w.events.filter((e) => e.type === 'unblocked')).toHaveLength(300), WAIT);
    // Each completion that arrived with the checkout is logged once, as made by hand.
    await vi.waitFor(() => expect(w.events.filter((e) => e.type === 'completed' && e.by === 'hand')).toHaveLength(300), WAIT);
    expect(new Set(w.events.filter((e) => e.type === 'completed').map((e) => e.task)).size).toBe(300);
    expect(w.events.filter((e) => e.type !== 'unblocked' && e.type !== 'completed')).toEqual([]);
  });

  it('writes the reverse side of a blockedBy added by hand', async () => {
    const { board, w } = await boardWithWatcher();
    editTask(board, 3, (t) => (t.blockedBy = [2]));
    await vi.waitFor(() => expect(readTaskFile(board, 2).blocks).toEqual([3]), WAIT);
    await vi.waitFor(() => expect(w.events).toContainEqual(expect.objectContaining({ type: 'repaired', task: 2, field: 'blocks', added: 3 })), WAIT);
    expect(tasks(join(board, '..'), ['list']).stdout).toContain('#3: Write docs (blocked by: #2)');
  });

  it('records a claim made by hand, so its owner cannot start a second task', async () => {
    const { root, board } = await boardWithWatcher();
    editTask(board, 3, (t) => {
      t.status = 'in_progress';
      t.owner = 'ann';
    });
    await vi.waitFor(() => expect(existsSync(join(board, '.runtime', 'leases', 'task_3.json'))).toBe(true), WAIT);
    const second = tasks(root, ['claim', '1', '--owner', 'ann']);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('ann already has task #3 in progress');
    // The person's file is left as written.
    expect(readTaskFile(board, 3)).toMatchObject({ status: 'in_progress', owner: 'ann' });
  });

  it('reports a cycle made by hand and leaves both files byte-for-byte', async () => {
    const { board, w } = await boardWithWatcher(['--reconcile-interval', '1']);
    const text1 = editTask(board, 1, (t) => (t.blockedBy = [2]));
    const text2 = readFileSync(join(board, 'task_2.json'), 'utf8');
    await vi.waitFor(
      () =>
        expect(w.events).toContainEqual(
          expect.objectContaining({ type: 'invalid', file: 'task_1.json', task: 1, problem: expect.stringContaining('cycle #1 -> #2 -> #1') }),
        ),
      WAIT,
    );
    // Let two full reconciles pass (the periodic pass makes one once the folder moved): they must not write either file, nor report the cycle again.
    const seen = w.reconciles();
    for (const n of [1, 2]) {
      nudgeBoard(board);
      await vi.waitFor(() => expect(w.reconciles()).toBeGreaterThanOrEqual(seen + n), WAIT);
    }
    expect(readFileSync(join(board, 'task_1.json'), 'utf8')).toBe(text1);
    expect(readFileSync(join(board, 'task_2.json'), 'utf8')).toBe(text2);
    expect(w.events.filter((e) => e.type === 'invalid')).toHaveLength(1);
    expect(w.events.filter((e) => e.type === 'repaired')).toHaveLength(0);
  });

  it('reports broken JSON, keeps running, and picks the file up once fixed', async () => {
    const { board, w } = await boardWithWatcher();
    const broken = '{\n  "id": 1,\n  "subject": "Parse AST",\n  "status": "completed"\n';
    writeFileSync(join(board, 'task_1.json'), broken);
    await vi.waitFor(
      () =>
        expect(w.events).toContainEqual(
          expect.objectContaining({ type: 'invalid', file: 'task_1.json', line: expect.any(Number), column: expect.any(Number) }),
        ),
      WAIT,
    );
    expect(readFileSync(join(board, 'task_1.json'), 'utf8')).toBe(broken);
    expect(readTaskFile(board, 2).blockedBy).toEqual([1]);
    expect(w.child.exitCode).toBeNull();
    writeFileSync(
      join(board, 'task_1.json'),
      JSON.stringify({ id: 1, subject: 'Parse AST', description: '', status: 'completed', owner: '', blockedBy: [], blocks: [2] }, null, 2),
    );
    await vi.waitFor(() => expect(readTaskFile(board, 2).blockedBy).toEqual([]), WAIT);
    await vi.waitFor(() => expect(w.events).toContainEqual(expect.objectContaining({ type: 'unblocked', task: 2 })), WAIT);
  });

  it('reflects the last of 20 quick edits to one file', async () => {
    const { board, w } = await boardWithWatcher(['--reconcile-interval', '1']);
    // #3 flips between waiting for #1, #2, both and none; the last edit says #2 only.
    const states = [[1], [2], [1, 2], [], [1]];
    for (let i = 0; i < 20; i++) {
      const blockedBy = i === 19 ? [2] : states[i % states.length];
      editTask(board, 3, (t) => (t.blockedBy = blockedBy), i % 2 ? 'rename' : 'in-place');
      await new Promise((r) => setTimeout(r, 10)); // the edit rhythm under test, not a wait for a result
    }
    const settled = () => {
      expect(readTaskFile(board, 3).blockedBy).toEqual([2]);
      expect(readTaskFile(board, 2).blocks).toEqual([3]);
      expect(readTaskFile(board, 1).blocks).toEqual([2]);
    };
    await vi.waitFor(settled, WAIT);
    const seen = w.reconciles();
    nudgeBoard(board);
    await vi.waitFor(() => expect(w.reconciles()).toBeGreaterThanOrEqual(seen + 1), WAIT);
    settled();
  });

  it('keeps watching when .tasks/ is removed and restored', async () => {
    const { root, board, w } = await boardWithWatcher();
    const backup = join(root, 'backup');
    cpSync(board, backup, { recursive: true });
    rmSync(board, { recursive: true, force: true });
    await vi.waitFor(() => expect(w.stderr()).toContain('is gone'), WAIT);
    cpSync(backup, board, { recursive: true });
    await vi.waitFor(() => expect(w.stderr()).toContain('is back'), WAIT);
    editTask(board, 1, (t) => (t.status = 'completed'), 'rename');
    await vi.waitFor(() => expect(readTaskFile(board, 2).blockedBy).toEqual([]), WAIT);
    expect(w.child.exitCode).toBeNull();
  });

  it('reconciles on start what changed while it was not running', async () => {
    const t = tempBoard();
    cleanups.push(t.cleanup);
    await createTasks(t.board, ['Parse AST', { subject: 'Transform AST', blockedBy: [1] }]);
    editTask(t.board, 1, (task) => (task.status = 'completed'));
    const w = startWatcher(t.root);
    cleanups.push(() => w.stop());
    await w.ready();
    expect(readTaskFile(t.board, 2).blockedBy).toEqual([]);
    expect(w.events).toContainEqual(expect.objectContaining({ type: 'unblocked', task: 2, by: 1 }));
  });

  it('lets one watcher per board run: the second says who watches and exits 1', async () => {
    const { root, w } = await boardWithWatcher();
    const second = spawnSync(process.execPath, [TASKS_BIN, 'watch'], { cwd: root, env: cleanEnv(), encoding: 'utf8', timeout: 60_000 });
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`already watched by process ${w.child.pid}`);
    expect(w.child.exitCode).toBeNull();
  });

  it('is not blocked by the record of a watcher that died', async () => {
    const t = tempBoard();
    cleanups.push(t.cleanup);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const record = { pid: Number(dead.stdout), host: hostname(), started: new Date().toISOString(), board: t.board };
    writeFileSync(join(t.board, '.runtime', 'watcher.json'), JSON.stringify(record));
    const w = startWatcher(t.root);
    cleanups.push(() => w.stop());
    await w.ready();
    const now = JSON.parse(readFileSync(join(t.board, '.runtime', 'watcher.json'), 'utf8')) as { pid: number };
    expect(now.pid).toBe(w.child.pid);
  });

  it('fails one fix with an event when a lock cannot be had, keeps running, and retries', async () => {
    // Locks give up after 300 ms here; a lock is stale only after 60 s, so ours holds.
    const { board, w } = await boardWithWatcher(['--reconcile-interval', '1'], { TASKS_LOCK_TIMEOUT_MS: '300', TASKS_LOCK_STALE_MS: '60000' });
    const boardLock = join(board, '.board.lock');
    mkdirSync(boardLock);
    editTask(board, 1, (t) => (t.status = 'completed'));
    await vi.waitFor(
      // The check of the changed file reads under the board lock, so that is the step that fails.
      () => expect(w.events).toContainEqual(expect.objectContaining({ type: 'watch.error', task: 1, action: 'check', code: 'E_LOCKED' })),
      WAIT,
    );
    expect(readTaskFile(board, 2).blockedBy).toEqual([1]);
    expect(w.child.exitCode).toBeNull();
    rmdirSync(boardLock);
    await vi.waitFor(() => expect(readTaskFile(board, 2).blockedBy).toEqual([]), WAIT);
    await vi.waitFor(() => expect(w.events).toContainEqual(expect.objectContaining({ type: 'unblocked', task: 2, by: 1 })), WAIT);
  });

  it('stops cleanly on SIGTERM and SIGINT: record gone, no locks left', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const { board, w } = await boardWithWatcher();
      expect(existsSync(join(board, '.runtime', 'watcher.json'))).toBe(true);
      editTask(board, 1, (t) => (t.status = 'completed'));
      w.child.kill(signal);
      const exit = await w.exited;
      expect(exit.code).toBe(0);
      expect(w.stderr()).toContain(`stopped (${signal})`);
      expect(existsSync(join(board, '.runtime', 'watcher.json'))).toBe(false);
      const locks = [...readdirSync(board), ...readdirSync(join(board, '.runtime'))].filter((n) => n.endsWith('.lock'));
      expect(locks).toEqual([]);
    }
  });
});
