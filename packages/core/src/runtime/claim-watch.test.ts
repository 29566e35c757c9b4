import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { judgeClaim, watchClaim, type ClaimLoss, type ClaimSighting, type WatchedClaim } from './claim-watch.js';
import type { TaskEvent } from '../events/events.js';
import type { Task } from '../format/format.js';
import type { Lease } from './leases.js';
import { TaskStore } from '../store.js';

const CLAIM: WatchedClaim = { task: 3, owner: 'w1', claimedAt: '2030-01-01T00:00:00.000Z' };

function task(status: Task['status'], owner: string): Task {
  return { id: 3, subject: 'Build', description: '', status, owner, blockedBy: [], blocks: [], extra: {} };
}

function lease(owner: string, claimedAt = CLAIM.claimedAt, pid?: number): Lease {
  return { task: 3, owner, host: 'h', claimedAt, expiresAt: null, ...(pid === undefined ? {} : { pid }) };
}

let seq = 10;
function event(type: string, owner?: string, extra: Record<string, unknown> = {}): TaskEvent {
  return { seq: ++seq, at: '2030-01-01T00:00:01.000Z', type, task: 3, ...(owner ? { owner } : {}), ...extra };
}

function sighting(t: ClaimSighting['task'], l: Lease | undefined, events: TaskEvent[] = []): ClaimSighting {
  return { task: t, lease: l, events: () => events };
}

describe('judgeClaim: is a claim still ours?', () => {
  it('holds while the task is in progress for us under our claim, with or without a lease record', () => {
    expect(judgeClaim(CLAIM, sighting(task('in_progress', 'w1'), lease('w1')))).toEqual({ state: 'held' });
    // A renewal rewrites expiresAt but keeps claimedAt.
    expect(judgeClaim(CLAIM, sighting(task('in_progress', 'w1'), { ...lease('w1'), expiresAt: '2031-01-01T00:00:00.000Z' }))).toEqual({ state: 'held' });
    expect(judgeClaim(CLAIM, sighting(task('in_progress', 'w1'), undefined))).toEqual({ state: 'held' });
  });

  it('follows a new claim record of the same owner that never let go (the command ran `tasks claim`)', () => {
    const verdict = judgeClaim(
      CLAIM,
      sighting(task('in_progress', 'w1'), lease('w1', '2030-01-01T00:00:05.000Z'), [event('updated', 'w1', { fields: ['activeForm'] })]),
    );
    expect(verdict).toEqual({ state: 'held', claimedAt: '2030-01-01T00:00:05.000Z' });
  });

  it('a task file that does not read, or is caught mid-edit, is no loss', () => {
    expect(judgeClaim(CLAIM, sighting('unreadable', lease('w1')))).toEqual({ state: 'held' });
    expect(judgeClaim(CLAIM, sighting('unreadable', undefined))).toEqual({ state: 'held' });
  });

  it('a release is a loss at once, named with who did it and what the task is now', () => {
    const verdict = judgeClaim(CLAIM, sighting(task('pending', ''), undefined, [event('released', 'ann', { previousOwner: 'w1' })]));
    expect(verdict).toEqual({
      state: 'lost',
      loss: { task: 3, reason: 'released', by: 'ann', now: { status: 'pending', owner: '' }, message: 'task #3 was released by ann (now pending)' },
    });
  });

  it('a release followed by another owner’s claim names both', () => {
    const verdict = judgeClaim(
      CLAIM,
      sighting(task('in_progress', 'agent-2'), lease('agent-2', '2030-01-01T00:00:09.000Z'), [event('released', 'boss'), event('claimed', 'agent-2')]),
    );
    expect(verdict).toMatchObject({
      state: 'lost',
      loss: { reason: 'released', by: 'boss', message: 'task #3 was released by boss (now claimed by agent-2)' },
    });
  });

  it('a claim by another owner with no event to explain it (yet) says who holds it, and waits one look for the log', () => {
    // The transaction appends its events just after its renames: a look in between sees the file first.
    const verdict = judgeClaim(CLAIM, sighting(task('in_progress', 'agent-2'), lease('agent-2')));
    expect(verdict).toMatchObject({ state: 'suspect', loss: { reason: 'claimed', by: 'agent-2', message: 'task #3 was claimed by agent-2' } });
    const explained = judgeClaim(CLAIM, sighting(task('in_progress', 'agent-2'), lease('agent-2'), [event('claimed', 'agent-2')]));
    expect(explained).toMatchObject({ state: 'lost', loss: { reason: 'claimed', by: 'agent-2', message: 'task #3 was claimed by agent-2' } });
  });

  it('a reap says why the lease lapsed', () => {
    const verdict = judgeClaim(CLAIM, sighting(task('pending', ''), undefined, [event('reaped', 'w2', { previousOwner: 'w1', reason: 'expired' })]));
    expect(verdict).toMatchObject({
      state: 'lost',
      loss: { reason: 'reaped', by: 'w2', message: 'task #3 was reaped by w2: its lease expired (now pending)' },
    });
  });

  it('reaped and claimed again under the same owner name by another process is a loss', () => {
    const verdict = judgeClaim(
      CLAIM,
      sighting(task('in_progress', 'w1'), lease('w1', '2030-01-01T00:00:09.000Z', 4242), [
        event('reaped', 'boss', { reason: 'process_gone' }),
        event('claimed', 'w1'),
      ]),
    );
    expect(verdict).toMatchObject({
      state: 'lost',
      loss: { reason: 'reaped', message: 'task #3 was reaped by boss: its process was gone (now claimed again by w1 under another claim, pid 4242)' },
    });
  });

  it('another owner’s lease on a task still ours is only suspect (a claim half written)', () => {
    const verdict = judgeClaim(CLAIM, sighting(task('in_progress', 'w1'), lease('agent-2', '2030-01-01T00:00:09.000Z')));
    expect(verdict).toMatchObject({ state: 'suspect', loss: { reason: 'claimed', message: 'task #3 was claimed by agent-2' } });
    expect(judgeClaim(CLAIM, sighting('unreadable', lease('agent-2')))).toMatchObject({ state: 'suspect' });
  });

  it('a task file that is gone is suspect; a hand-over by `tasks update --owner` is a loss', () => {
    expect(judgeClaim(CLAIM, sighting('missing', undefined))).toMatchObject({
      state: 'suspect',
      loss: { reason: 'removed', message: 'task #3 has no file any more' },
    });
    const verdict = judgeClaim(CLAIM, sighting(task('in_progress', 'bob'), lease('bob'), [event('updated', 'ann', { fields: ['owner'] })]));
    expect(verdict).toMatchObject({ state: 'lost', loss: { reason: 'reassigned', by: 'ann', message: 'task #3 was reassigned to bob by ann' } });
  });

  it('completed by the owner itself closes the watch quietly; by someone else it is a loss', () => {
    expect(judgeClaim(CLAIM, sighting(task('completed', 'w1'), undefined, [event('completed', 'w1')]))).toEqual({ state: 'closed' });
    expect(judgeClaim(CLAIM, sighting(task('deleted', 'w1'), undefined, [event('deleted', 'w1')]))).toEqual({ state: 'closed' });
    // The event trails the file by a moment.
    expect(judgeClaim(CLAIM, sighting(task('completed', 'w1'), undefined))).toMatchObject({ state: 'suspect' });
    expect(judgeClaim(CLAIM, sighting(task('completed', 'w1'), undefined, [event('completed', 'ann')]))).toMatchObject({
      state: 'lost',
      loss: { reason: 'completed', message: 'task #3 was completed by ann' },
    });
  });
});

describe('watchClaim (a real board, in-process)', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const board = () => {
    dir = mkdtempSync(join(tmpdir(), 'dotasks-core-claim-watch-'));
    return TaskStore.init(join(dir, '.tasks'));
  };

  async function claimed(store: TaskStore, owner = 'w1') {
    await store.createTask({ subject: 'Build' });
    const claim = await store.claimTask(1, { owner, lease: { pid: process.pid } });
    return { task: 1, owner, claimedAt: claim.lease.claimedAt };
  }

  it('reports a forced release once, within a few ticks, and stops looking', async () => {
    const store = board();
    const claim = await claimed(store);
    const losses: ClaimLoss[] = [];
    const watch = watchClaim(store, claim, { intervalMs: 20, onLost: (l) => losses.push(l) });
    try {
      await store.heartbeat({ owner: 'w1', id: 1 });
      expect(watch.check()).toEqual({ state: 'held' });
      await store.releaseTask(1, { actor: 'ann', force: true });
      await vi.waitFor(() => expect(losses).toHaveLength(1), { timeout: 2000, interval: 10 });
      expect(losses[0]).toMatchObject({ reason: 'released', by: 'ann', message: 'task #1 was released by ann (now pending)' });
      expect(watch.lost).toBe(losses[0]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(losses).toHaveLength(1);
    } finally {
      watch.stop();
    }
  });

  it('a task file caught half-written is not a loss; a removed one is, on the second look', async () => {
    const store = board();
    const claim = await claimed(store);
    const lost = vi.fn();
    const watch = watchClaim(store, claim, { intervalMs: 60_000, onLost: lost });
    try {
      const text = store.readTaskText(1)!;
      writeFileSync(store.taskPath(1), text.slice(0, 20));
      expect(watch.check()).toEqual({ state: 'held' });
      writeFileSync(store.taskPath(1), text);
      expect(watch.check()).toEqual({ state: 'held' });
      rmSync(store.taskPath(1));
      expect(watch.check()).toMatchObject({ state: 'suspect' });
      expect(lost).not.toHaveBeenCalled();
      writeFileSync(store.taskPath(1), text);
      expect(watch.check()).toEqual({ state: 'held' }); // back before the second look: nothing happened
      rmSync(store.taskPath(1));
      watch.check();
      watch.check();
      expect(lost).toHaveBeenCalledOnce();
      expect(lost.mock.calls[0][0]).toMatchObject({ reason: 'removed' });
    } finally {
      watch.stop();
    }
  });

  it('the owner claiming again while it holds the task is followed, not a loss; a reap and re-claim is', async () => {
    const store = board();
    const claim = await claimed(store);
    const lost = vi.fn();
    const watch = watchClaim(store, claim, { intervalMs: 60_000, onLost: lost });
    try {
      await new Promise((resolve) => setTimeout(resolve, 5));
      // `tasks claim 1` run by the command itself: a new claimedAt, no release.
      const again = await store.claimTask(1, { owner: 'w1', lease: {} });
      expect(again.alreadyHeld).toBe(true);
      expect(watch.check()).toEqual({ state: 'held', claimedAt: again.lease.claimedAt });
      expect(watch.check()).toEqual({ state: 'held' });
      // The lease lapses, someone reaps it, and another process named w1 claims it.
      await store.heartbeat({ owner: 'w1', id: 1, ttlSeconds: 0 });
      expect(await store.reap({ actor: 'boss' })).toHaveLength(1);
      await store.claimTask(1, { owner: 'w1', lease: { pid: 1 } });
      expect(watch.check()).toMatchObject({ state: 'lost', loss: { reason: 'reaped', by: 'boss' } });
      expect(lost).toHaveBeenCalledOnce();
    } finally {
      watch.stop();
    }
  });

  it('a completion by the owner itself ends the watch without a loss', async () => {
    const store = board();
    const claim = await claimed(store);
    const lost = vi.fn();
    const watch = watchClaim(store, claim, { intervalMs: 60_000, onLost: lost });
    await store.completeTask(1, { actor: 'w1' });
    expect(watch.check()).toEqual({ state: 'closed' });
    expect(watch.check()).toEqual({ state: 'closed' });
    expect(lost).not.toHaveBeenCalled();
  });
});
