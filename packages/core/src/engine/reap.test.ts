import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Counts the claim records read outside a transaction, by task id.
const reads = vi.hoisted(() => ({ ids: [] as number[] }));
vi.mock('../runtime/leases.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../runtime/leases.js')>();
  return {
    ...original,
    readLease: (runtimeDir: string, id: number) => {
      reads.ids.push(id);
      return original.readLease(runtimeDir, id);
    },
  };
});

import { TaskStore } from '../store.js';
import { serializeTask, type Task } from '../format/format.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  reads.ids.length = 0;
});

describe('adopting claims made by hand', () => {
  it('looks for the records of held tasks only, not of the board’s history', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dotasks-reap-'));
    dirs.push(root);
    const dir = join(root, '.tasks');
    TaskStore.init(dir);
    const task = (id: number, status: Task['status'], owner = ''): Task =>
      ({ id, subject: `#${id}`, description: '', status, owner, blockedBy: [], blocks: [], extra: {} }) as Task;
    for (let id = 1; id <= 40; id++) writeFileSync(join(dir, `task_${id}.json`), serializeTask(task(id, 'completed', 'someone')));
    writeFileSync(join(dir, `task_41.json`), serializeTask(task(41, 'pending')));
    // Set in progress by hand (or pulled through git): no claim record.
    writeFileSync(join(dir, `task_42.json`), serializeTask(task(42, 'in_progress', 'alice')));
    writeFileSync(join(dir, '.highwatermark'), '42\n');
    const store = new TaskStore(dir);
    expect(await store.adoptUntrackedClaims()).toEqual([42]);
    expect(reads.ids).toEqual([42]);
  });
});
