import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskStore } from '@dotasks/core';
import { tasks } from '../../cli/test/helpers.js';
import { createBoardFeed, type BoardFeed } from './board-feed.js';
import type { WebState } from './wire.js';

let dir: string | undefined;
let feed: BoardFeed | undefined;
afterEach(() => {
  feed?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  feed = dir = undefined;
});

const doneOrder = (state: WebState) =>
  state.tasks
    .filter((t) => t.column === 'done')
    .sort((a, b) => (b.completedSeq ?? 0) - (a.completedSeq ?? 0))
    .map((t) => [t.id, t.completedSeq]);

describe('the board feed', () => {
  it('a refresh right after a write already knows the seq of its completion, so Done is latest first', async () => {
    dir = mkdtempSync(join(tmpdir(), 'dotasks-feed-'));
    expect(tasks(dir, ['init']).code).toBe(0);
    const store = new TaskStore(join(dir, '.tasks'));
    for (const subject of ['one', 'two', 'three']) await store.createTask({ subject }, { actor: 'ann' });
    await store.completeTask(1, { actor: 'ann' });
    // No poll and no settling while the test runs: only what refresh() itself reads counts.
    feed = createBoardFeed(store, { actor: 'ann', pollMs: 3_600_000, settleMs: 3_600_000 });
    // Another process completes #3, then #2. spawnSync holds this event loop, so the log's watch
    // has not fired when refresh() runs, as when the server refreshes after a write, before it answers.
    for (const id of ['3', '2']) expect(tasks(dir, ['done', id, '--owner', 'ann']).code).toBe(0);
    feed.refresh();
    const state = JSON.parse(feed.stateJson()) as WebState;
    const order = doneOrder(state);
    expect(order.map(([id]) => id)).toEqual([2, 3, 1]);
    expect(order.every(([, seq]) => typeof seq === 'number')).toBe(true);
  });
});
