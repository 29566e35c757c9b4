import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TASKS_BIN, cleanEnv, tasks, tasksAsync, tempBoard } from '../helpers.js';

const WAIT = { timeout: 45_000, interval: 40 };

/** `tasks wait ...args` as a child; `waiting()` resolves once it says it is waiting. */
function startWait(cwd: string, args: string[]) {
  const child = spawn(process.execPath, [TASKS_BIN, 'wait', ...args], { cwd, env: cleanEnv() });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const result = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { result, waiting: () => vi.waitFor(() => expect(stderr).toContain('waiting for #'), WAIT) };
}

describe('tasks wait', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('returns 0 when another process completes the task', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(tasks(t.root, ['create', 'Parse AST']).code).toBe(0);
    const waiting = startWait(t.root, ['1', '--json']);
    await waiting.waiting();
    expect(tasks(t.root, ['done', '1']).code).toBe(0);
    const r = await waiting.result;
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ task: 1, status: 'completed' });
  });

  it('waits through a running process until the task is completed by hand', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(tasks(t.root, ['create', 'Parse AST']).code).toBe(0);
    const waiting = startWait(t.root, ['1']);
    await waiting.waiting();
    const file = join(t.board, 'task_1.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"pending"', '"completed"'));
    const r = await waiting.result;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('task #1 is completed');
  });

  it('exits 124 on timeout and 1 when the task is deleted', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(tasks(t.root, ['create', 'Parse AST']).code).toBe(0);
    const timedOut = await tasksAsync(t.root, ['wait', '1', '--timeout', '0.3']);
    expect(timedOut.code).toBe(124);
    expect(timedOut.stderr).toContain('task #1 is still pending after 0.3 s');
    const deleted = startWait(t.root, ['1']);
    await deleted.waiting();
    expect(tasks(t.root, ['delete', '1']).code).toBe(0);
    const r = await deleted.result;
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('deleted');
    expect(tasks(t.root, ['wait', '9']).code).toBe(1);
    expect(tasks(t.root, ['wait', '1', '--timeout', '-1']).code).toBe(2);
  });
});

describe('tasks events --follow', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('streams the log as it grows, holding a partial last line until it is whole', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(tasks(t.root, ['create', 'Parse AST']).code).toBe(0);
    const child = spawn(process.execPath, [TASKS_BIN, 'events', '--follow', '--json', '--since', '1'], { cwd: t.root, env: cleanEnv() });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const exited = new Promise<{ code: number | null }>((resolve) => child.on('close', (code) => resolve({ code })));
    const lines = () =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { seq: number; type: string; task?: number });

    expect(tasks(t.root, ['create', 'Transform AST', '--blocked-by', '1']).code).toBe(0);
    await vi.waitFor(() => expect(lines().map((e) => e.type)).toEqual(['created']), WAIT);
    expect(lines()[0]).toMatchObject({ seq: 2, task: 2 });

    expect(tasks(t.root, ['done', '1']).code).toBe(0);
    await vi.waitFor(() => expect(lines().map((e) => e.type)).toEqual(['created', 'completed', 'unblocked']), WAIT);

    // A writer caught half-way through a line: the follower reads the chunk
    // (it prints the complete line before it) and holds the partial one.
    const log = join(t.board, '.runtime', 'events.jsonl');
    appendFileSync(log, '{"seq":99,"at":"2026-01-01T00:00:00.000Z","type":"marker"}\n{"seq":100,"at":"2026-01-01T00:00:00.000Z","type":"no');
    await vi.waitFor(() => expect(lines().map((e) => e.type)).toContain('marker'), WAIT);
    appendFileSync(log, 'te","task":1}\n');
    await vi.waitFor(() => expect(lines().map((e) => e.type)).toContain('note'), WAIT);
    expect(lines().filter((e) => e.type === 'note')).toEqual([{ seq: 100, at: '2026-01-01T00:00:00.000Z', type: 'note', task: 1 }]);

    child.kill('SIGTERM');
    expect((await exited).code).toBe(0);
  });

  it('follows a board whose log does not exist yet, without a watcher', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const child = spawn(process.execPath, [TASKS_BIN, 'events', '--follow'], { cwd: t.root, env: cleanEnv() });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const exited = new Promise<{ code: number | null }>((resolve) => child.on('close', (code) => resolve({ code })));
    expect(tasks(t.root, ['create', 'Parse AST']).code).toBe(0);
    await vi.waitFor(() => expect(stdout).toMatch(/^1 \S+ created #1 .*subject=Parse AST$/m), WAIT);
    child.kill('SIGINT');
    expect((await exited).code).toBe(0);
  });
});
