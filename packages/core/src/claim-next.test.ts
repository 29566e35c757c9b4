import { mkdirSync, utimesSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { tempBoard } from '../test/helpers/temp-board.js';
import { ClaimError } from './errors.js';
import { readLease } from './runtime/leases.js';
import { TaskStore } from './store.js';

describe('claimNext and leases (core)', () => {
  let dir = '';
  const board = () => {
    const made = tempBoard('dotasks-core-claims-');
    dir = made.root;
    return made.store;
  };

  it('takes the lowest-id ready task, skipping excluded ids, and says nothing_ready at the end', async () => {
    const store = board();
    await store.createTask({ subject: 'One' });
    await store.createTask({ subject: 'Two', blockedBy: [1] });
    await store.createTask({ subject: 'Three' });
    const first = await store.claimNext({ owner: 'a', exclude: [1] });
    expect(first.task.id).toBe(3);
    await store.completeTask(3, { actor: 'a' });
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(1);
    await expect(store.claimNext({ owner: 'b' })).rejects.toMatchObject({ reason: 'nothing_ready' });
    await store.completeTask(1, { actor: 'a' });
    expect((await store.claimNext({ owner: 'b' })).task.id).toBe(2);
  });

  it('passes over a task whose lock is held right now, and takes over one whose lock a dead process left', async () => {
    const store = board();
    await store.createTask({ subject: 'One' });
    await store.createTask({ subject: 'Two' });
    await store.createTask({ subject: 'Three' });
    // Held right now (its folder fresh): another claimant is on #1, so #2 comes first.
    mkdirSync(store.taskLockPath(1));
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(2);
    // Left by a process that died (its folder older than the stale time): #1 is claimed in its turn, before #3.
    const old = (Date.now() - store.lockOptions.staleMs - 5000) / 1000;
    utimesSync(store.taskLockPath(1), old, old);
    expect((await store.claimNext({ owner: 'b' })).task.id).toBe(1);
  });

  it('a store that saw a task completed still finds the tasks made after clear, which never reuses an id', async () => {
    const store = board();
    await store.createTask({ subject: 'Old' });
    await store.claimNext({ owner: 'a' });
    await store.completeTask(1, { actor: 'a' });
    await expect(store.claimNext({ owner: 'a' })).rejects.toBeInstanceOf(ClaimError);
    // Another process clears the board and creates a new #1.
    const other = new TaskStore(store.dir);
    await other.clearBoard({ confirm: true });
    await other.createTask({ subject: 'New' });
    await vi.waitFor(
      async () => {
        const claim = await store.claimNext({ owner: 'a' });
        expect(claim.task).toMatchObject({ id: 2, subject: 'New' });
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it("heartbeat keeps a person's claim without expiry, and renews a worker's lease", async () => {
    const store = board();
    await store.createTask({ subject: 'Person' });
    await store.createTask({ subject: 'Worker' });
    await store.startTask(1, { owner: 'alice' });
    await store.heartbeat({ owner: 'alice', id: 1 });
    expect(readLease(store.runtimeDir, 1)?.expiresAt).toBeNull();
    await store.claimTask(2, { owner: 'bot', lease: { ttlSeconds: 5, pid: process.pid } });
    const before = readLease(store.runtimeDir, 2)!;
    const [renewed] = await store.heartbeat({ owner: 'bot', id: 2, ttlSeconds: 500, worktree: '/tmp/wt' });
    expect(Date.parse(renewed.expiresAt!)).toBeGreaterThan(Date.parse(before.expiresAt!));
    expect(readLease(store.runtimeDir, 2)).toMatchObject({ pid: process.pid, worktree: '/tmp/wt', claimedAt: before.claimedAt });
  });

  it('heldBy refuses to complete or release a task the worker no longer holds', async () => {
    const store = board();
    await store.createTask({ subject: 'One' });
    await store.claimTask(1, { owner: 'bot' });
    await store.releaseTask(1, { actor: 'boss', force: true });
    await expect(store.completeTask(1, { actor: 'bot', heldBy: 'bot' })).rejects.toMatchObject({ code: 'E_NOT_OWNER' });
    await expect(store.releaseTask(1, { actor: 'bot', heldBy: 'bot' })).rejects.toMatchObject({ code: 'E_NOT_OWNER' });
    expect(store.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
  });
});
