import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTasks, tasks, tempBoard } from '../helpers.js';

/**
 * The summary's ready ids are kept under the key of the board index they
 * were ranked from (docs/decisions.md, "The summary's ready ids are kept"):
 * a listing of an unchanged board names them without ranking again, and any
 * change to a task (a hand edit too) ranks afresh.
 */

const boards: ReturnType<typeof tempBoard>[] = [];
afterEach(() => {
  for (const b of boards.splice(0)) b.cleanup();
});

const summaryOf = (out: string) => out.trim().split('\n').at(-1)!;
const cacheFile = (board: string) => join(board, '.runtime', 'list-summary.json');

/** Lists until the index holds every file (a file changed a moment ago is read every time, and keeps nothing). */
function listUntilKept(root: string, board: string): string {
  for (let i = 0; i < 50; i++) {
    const r = tasks(root, ['list']);
    expect(r.code).toBe(0);
    if (existsSync(cacheFile(board))) return r.stdout;
  }
  throw new Error('the summary was never kept');
}

describe('the summary of tasks list', () => {
  it('names the kept ids while the board is unchanged, ranks afresh after a hand edit, and ignores ids kept for another board', async () => {
    const b = tempBoard();
    boards.push(b);
    await createTasks(b.board, [{ subject: 'low', priority: 3 }, { subject: 'normal' }, { subject: 'urgent', priority: 1 }]);
    expect(summaryOf(listUntilKept(b.root, b.board))).toContain('ready: #3, #2, #1');
    const kept = JSON.parse(readFileSync(cacheFile(b.board), 'utf8')) as { key: string; ready: number[] };
    expect(kept.ready).toEqual([3, 2, 1]);

    // The kept ids are what an unchanged board's listing names: here, ids written by hand under the same key.
    writeFileSync(cacheFile(b.board), JSON.stringify({ ...kept, ready: [2] }));
    expect(summaryOf(tasks(b.root, ['list']).stdout)).toMatch(/ready: #2$/);

    // A hand edit changes the index, so its key: the order is ranked again and kept anew.
    const file = join(b.board, 'task_1.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"priority": 3', '"priority": 0'));
    expect(summaryOf(tasks(b.root, ['list']).stdout)).toContain('ready: #1, #3, #2');

    // Ids kept under another key (another board's index, or this one's before a change) are not used.
    writeFileSync(cacheFile(b.board), JSON.stringify({ ...kept, key: '1-00000000', ready: [2] }));
    expect(summaryOf(tasks(b.root, ['list']).stdout)).toContain('ready: #1, #3, #2');
  });

  it('a filtered listing ranks what it shows, whatever is kept', async () => {
    const b = tempBoard();
    boards.push(b);
    await createTasks(b.board, [
      { subject: 'a', labels: ['x'] },
      { subject: 'b', priority: 0 },
    ]);
    listUntilKept(b.root, b.board);
    expect(summaryOf(tasks(b.root, ['list', '--label', 'x']).stdout)).toContain('ready: #1');
  });
});
