import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core/internal';
import { readBoardState } from './board-state.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('the page state', () => {
  it('puts a parent with open children among the waiting, naming them, and ready once they are done', async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-web-state-')));
    const store = TaskStore.init(join(root, '.tasks'));
    await store.createTask({ subject: 'Epic' });
    await store.createTask({ subject: 'Child one', parent: 1 });
    await store.createTask({ subject: 'Child two', parent: 1 });
    const before = readBoardState(store, 'ann', new Map()).tasks.find((t) => t.id === 1)!;
    expect(before).toMatchObject({ column: 'blocked', ready: false, openBlockers: [], openChildren: [2, 3], progress: { done: 0, total: 2 } });
    expect(readBoardState(store, 'ann', new Map()).tasks.find((t) => t.id === 2)).not.toHaveProperty('progress');
    await store.completeTask(2, {});
    await store.completeTask(3, {});
    const after = readBoardState(store, 'ann', new Map()).tasks.find((t) => t.id === 1)!;
    expect(after).toMatchObject({ column: 'ready', ready: true, openChildren: [], progress: { done: 2, total: 2 } });
  });
});
