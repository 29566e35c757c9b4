import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore, checkBoard } from '@dotasks/core/internal';
import { fileSystemClock, nothingMoved, quietMark } from '../src/quiet-look.js';

/** The idle watcher's mark (quiet-look.ts), on a real board folder: what a full reconcile read is what the mark covers. */
describe('the mark a full reconcile leaves', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
    root = undefined;
  });

  async function board(): Promise<{ dir: string; store: TaskStore }> {
    root = mkdtempSync(join(tmpdir(), 'dotasks-quiet-'));
    const dir = join(root, '.tasks');
    const store = TaskStore.init(dir);
    await store.createTask({ subject: 'one' });
    await store.createTask({ subject: 'two' });
    return { dir, store };
  }

  it('covers a quiet board: nothing moved until a file is made there', async () => {
    const { dir, store } = await board();
    const mark = quietMark(dir, fileSystemClock(store.runtimeDir)!, checkBoard(store))!;
    expect(mark).toBeDefined();
    expect(nothingMoved(dir, mark)).toBe(true);
    writeFileSync(join(dir, 'notes.txt'), '');
    expect(nothingMoved(dir, mark)).toBe(false);
  });

  it('is not left when a task file came after the read and before the stamp (the next pass reconciles)', async () => {
    const { dir, store } = await board();
    const since = fileSystemClock(store.runtimeDir)!;
    const check = checkBoard(store);
    // Made while the reconcile ran, after its read: by another process, with a file event the watcher may have missed.
    writeFileSync(join(dir, 'task_3.json.tmp'), JSON.stringify({ id: 3, subject: 'three', description: '', status: 'pending', blockedBy: [], blocks: [] }));
    renameSync(join(dir, 'task_3.json.tmp'), join(dir, 'task_3.json'));
    expect(quietMark(dir, since, check)).toBeUndefined();
  });

  it('is not left when a task file the reconcile read is gone before the stamp', async () => {
    const { dir, store } = await board();
    const since = fileSystemClock(store.runtimeDir)!;
    const check = checkBoard(store);
    rmSync(join(dir, 'task_2.json'));
    expect(quietMark(dir, since, check)).toBeUndefined();
  });
});
