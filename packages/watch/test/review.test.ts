import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WAIT, readTaskFile, startWatcher, tasks, tempBoard } from './helpers.js';

const leaseFile = (board: string, id: number) => join(board, '.runtime', 'leases', `task_${id}.json`);

describe('a task waiting for review is never reaped (real processes)', () => {
  const cleanups: (() => void | Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** #1 claimed by alice and finished into review, #2 claimed by bob and left: both with a 1-second lease. */
  function twoShortClaims(): { root: string; board: string } {
    const t = tempBoard();
    cleanups.push(t.cleanup);
    tasks(t.root, ['create', 'Reviewed', '--review']);
    tasks(t.root, ['create', 'Left running']);
    expect(tasks(t.root, ['claim', '1', '--owner', 'alice', '--lease', '1']).code).toBe(0);
    expect(tasks(t.root, ['claim', '2', '--owner', 'bob', '--lease', '1']).code).toBe(0);
    expect(tasks(t.root, ['done', '1', '--owner', 'alice']).stdout).toContain('waits for review');
    return t;
  }

  it('tasks reap releases the expired claim and leaves the task in review alone', async () => {
    const { root, board } = twoShortClaims();
    // Polled until bob's lease has run out (no clock in the assertion): then alice's would have too.
    await vi.waitFor(() => expect(tasks(root, ['reap']).stdout).toContain('#2'), WAIT);
    expect(readTaskFile(board, 2)).toMatchObject({ status: 'pending', owner: '' });
    expect(readTaskFile(board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice', review: { state: 'waiting' } });
    expect(tasks(root, ['reap', '--dry-run']).stdout).not.toContain('#1');
    // doctor finds nothing to adopt: a task in review has no claim record on purpose.
    expect(tasks(root, ['doctor']).stdout).not.toContain('untracked_claim');
    expect(tasks(root, ['doctor', '--fix']).code).toBe(0);
    expect(existsSync(leaseFile(board, 1))).toBe(false);
  });

  it('the watcher reaps the expired claim and neither reaps nor adopts the task in review', async () => {
    const { root, board } = twoShortClaims();
    const w = startWatcher(root, ['--reap-interval', '0.2', '--reconcile-interval', '1']);
    cleanups.push(() => w.stop());
    await w.ready();
    await vi.waitFor(() => expect(w.events).toContainEqual(expect.objectContaining({ type: 'reaped', task: 2 })), WAIT);
    // A full reconcile after it (it adopts claims made by hand), and the file of #1 seen changing.
    const reconciled = w.reconciles();
    tasks(root, ['note', '1', 'looked at it', '--owner', 'bob']);
    await vi.waitFor(() => expect(w.reconciles()).toBeGreaterThan(reconciled), WAIT);
    expect(readTaskFile(board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice', review: { state: 'waiting' } });
    expect(existsSync(leaseFile(board, 1))).toBe(false);
    expect(w.events.filter((e) => e.task === 1 && e.type === 'reaped')).toEqual([]);
    // And it is approved as ever.
    expect(tasks(root, ['approve', '1', '--owner', 'bob']).code).toBe(0);
  });
});
