import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchBoard, type WatchEvent } from '../src/index.js';
import { WAIT, tasks, tempBoard } from './helpers.js';

describe('watchBoard (library)', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('delivers events, allows one watcher per board, and frees the board on close', async () => {
    const t = tempBoard();
    cleanups.push(t.cleanup);
    expect(tasks(t.root, ['create', 'Parse AST']).code).toBe(0);
    expect(tasks(t.root, ['create', 'Transform AST', '--blocked-by', '1']).code).toBe(0);
    const events: WatchEvent[] = [];
    const first = watchBoard(t.board, { onEvent: (e) => events.push(e) });
    cleanups.push(() => first.close());
    await first.ready;
    expect(first.record).toMatchObject({ pid: process.pid, board: t.board });

    const second = watchBoard(t.board);
    await expect(second.ready).rejects.toMatchObject({ code: 'E_LOCKED', message: expect.stringContaining(`process ${process.pid}`) });

    const file = join(t.board, 'task_1.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"pending"', '"completed"'));
    await vi.waitFor(() => expect(events).toContainEqual(expect.objectContaining({ type: 'unblocked', task: 2, by: 1, seq: expect.any(Number) })), WAIT);

    await first.close();
    const third = watchBoard(t.board, { reconcileIntervalMs: 0, reapIntervalMs: 0 });
    cleanups.push(() => third.close());
    await third.ready;
    expect(third.record?.started).not.toBe(first.record?.started);
  });
});
