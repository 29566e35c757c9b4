import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore, isRunning } from '@dotasks/core/internal';
import { runWorker, waitingOn, type WorkerEvent } from '../src/index.js';

describe('a worker whose task is taken away (in-process)', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const board = () => {
    dir = mkdtempSync(join(tmpdir(), 'dotasks-worker-'));
    return TaskStore.init(join(dir, '.tasks'));
  };

  it('stops the command within a few checks, records why, and leaves the task as the releaser left it', async () => {
    const store = board();
    await store.createTask({ subject: 'Endless' });
    const events: WorkerEvent[] = [];
    const done = runWorker({ store, owner: 'w1', command: ['sleep', '30'], claimCheckMs: 50, onEvent: (e) => events.push(e) });
    await vi.waitFor(() => expect(events.map((e) => e.type)).toContain('task.claimed'), { timeout: 10_000, interval: 10 });
    await store.releaseTask(1, { actor: 'ann', force: true });
    const released = Date.now();
    const summary = await done;
    expect(Date.now() - released).toBeLessThan(1000);

    // It does not claim the task straight back: whoever released it meant it to stop.
    expect(summary).toMatchObject({ reason: 'drained', completed: [], failed: [], lost: [1] });
    expect(events.find((e) => e.type === 'task.lost')).toMatchObject({ task: 1, reason: 'released', message: 'task #1 was released by ann (now pending)' });
    const stopped = store.readEvents().find((e) => e.type === 'work.stopped');
    expect(stopped).toMatchObject({ task: 1, owner: 'w1', reason: 'released', message: 'task #1 was released by ann (now pending)' });
    expect(isRunning(stopped!.pid as number)).toBe(false);
    expect(store.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
    expect(store.readEvents().map((e) => e.type)).toEqual(['created', 'claimed', 'released', 'work.stopped']);
  });

  it('waits for a task another owner holds, unless it left that task to others', async () => {
    const store = board();
    await store.createTask({ subject: 'Held' });
    await store.claimTask(1, { owner: 'w2' });
    expect(waitingOn(store, 'w1')).toEqual([1]);
    expect(waitingOn(store, 'w1', new Set([1]))).toBeUndefined();
  });
});
