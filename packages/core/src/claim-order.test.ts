import { afterEach, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

// Every rename of a task file into place is checked: a file that says
// in_progress must already have its claim record, or a concurrent doctor or
// watcher would take the claim for one made by hand and record it again.
const renamed: { file: string; inProgress: boolean; recorded: boolean }[] = [];
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const renameSync: typeof fs.renameSync = (from, to) => {
    const target = String(to);
    const name = basename(target);
    if (/^task_\d+\.json$/.test(name)) {
      const inProgress = JSON.parse(fs.readFileSync(from, 'utf8')).status === 'in_progress';
      const recorded = fs.existsSync(join(dirname(target), '.runtime', 'leases', name));
      renamed.push({ file: name, inProgress, recorded });
    }
    return fs.renameSync(from, to);
  };
  return { ...fs, renameSync, default: { ...fs, renameSync } };
});

const { TaskStore } = await import('./store.js');

let root = '';
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  renamed.length = 0;
});

describe('claim records come first', () => {
  it('claim, start and update to in_progress write the record before the task file', async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-order-')));
    const store = TaskStore.init(join(root, '.tasks'));
    for (let i = 1; i <= 3; i++) await store.createTask({ subject: `t${i}` });
    await store.claimTask(1, { owner: 'a' });
    await store.startTask(2, { owner: 'b' });
    await store.updateTask(3, { status: 'in_progress' }, { actor: 'c' });
    await store.createTask({ subject: 't4', status: 'in_progress', owner: 'd' });
    const starts = renamed.filter((r) => r.inProgress);
    expect(starts.map((r) => r.file)).toEqual(['task_1.json', 'task_2.json', 'task_3.json', 'task_4.json']);
    expect(starts.every((r) => r.recorded)).toBe(true);
    expect(existsSync(join(root, '.tasks', '.runtime', 'leases', 'task_4.json'))).toBe(true);
    expect(JSON.parse(readFileSync(join(root, '.tasks', 'task_4.json'), 'utf8')).owner).toBe('d');
  });
});
