import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempBoard } from '../test/helpers/temp-board.js';
import { explainRank, readyOrder } from './graph/ready-order.js';
import type { TaskStore } from './store.js';
import { filterTasks, searchTasks } from './views/render.js';

// The planning fields through the store: priority, labels, notes, the order
// of ready work and search (docs/protocol.md, "One task, one file" and "Ready").
let dir = '';
const board = () => {
  const made = tempBoard('dotasks-planning-');
  dir = made.root;
  return made.store;
};

/**
 * A known DAG (arrows: "blocks"):
 *   #1 P2 alone          #7 P1 alone
 *   #2 → #4 → #5         #8 P3 → #9 → #10 → #11
 *   #3 → #6              #12 P2 alone, completed: #13 behind it
 */
async function dag(store: TaskStore): Promise<void> {
  const c = (subject: string, extra: Parameters<TaskStore['createTask']>[0] = { subject }) => store.createTask({ ...extra, subject });
  await c('one');
  await c('two');
  await c('three');
  await c('four', { subject: '', blockedBy: [2] });
  await c('five', { subject: '', blockedBy: [4] });
  await c('six', { subject: '', blockedBy: [3] });
  await c('seven', { subject: '', priority: 1 });
  await c('eight', { subject: '', priority: 3 });
  await c('nine', { subject: '', blockedBy: [8] });
  await c('ten', { subject: '', blockedBy: [9] });
  await c('eleven', { subject: '', blockedBy: [10] });
  await c('twelve');
  await c('thirteen', { subject: '', blockedBy: [12] });
  await store.completeTask(12);
}

describe('the order of ready work', () => {
  it('is priority, then the longest chain of open work behind a task, then id', async () => {
    const store = board();
    await dag(store);
    const snapshot = store.loadBoard();
    const order = readyOrder(snapshot.tasks, (id) => snapshot.byId.get(id));
    expect(order.map((r) => r.id)).toEqual([7, 2, 3, 1, 13, 8]);
    expect(order.map(explainRank)).toEqual([
      'P1 · unblocks nothing · id 7',
      'P2 · unblocks 2 (#2 → #4 → #5) · id 2',
      'P2 · unblocks 1 (#3 → #6) · id 3',
      'P2 · unblocks nothing · id 1',
      'P2 · unblocks nothing · id 13',
      'P3 · unblocks 3 (#8 → #9 → #10 → #11) · id 8',
    ]);
  });

  it('claim --next hands tasks out in that order', async () => {
    const store = board();
    await dag(store);
    const claimed: number[] = [];
    for (let i = 0; i < 6; i++) claimed.push((await store.claimNext({ owner: `agent-${i}` })).task.id);
    expect(claimed).toEqual([7, 2, 3, 1, 13, 8]);
  });

  it('the longest chain wins over the most dependents, and a closed task ends a chain', async () => {
    const store = board();
    await store.createTask({ subject: 'fan' }); // #1 blocks #3, #4, #5 (each alone)
    await store.createTask({ subject: 'chain' }); // #2 → #6 → #7
    for (let i = 0; i < 3; i++) await store.createTask({ subject: `leaf ${i}`, blockedBy: [1] });
    await store.createTask({ subject: 'mid', blockedBy: [2] });
    await store.createTask({ subject: 'end', blockedBy: [6] });
    let snapshot = store.loadBoard();
    expect(readyOrder(snapshot.tasks, (id) => snapshot.byId.get(id)).map((r) => [r.id, r.unblocks])).toEqual([
      [2, 2],
      [1, 1],
    ]);
    await store.deleteTask(7);
    snapshot = store.loadBoard();
    expect(readyOrder(snapshot.tasks, (id) => snapshot.byId.get(id)).map((r) => [r.id, r.unblocks])).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });
});

describe('priority and labels through the store', () => {
  it('create and update set them; the default and no labels leave the file without them', async () => {
    const store = board();
    const { task } = await store.createTask({ subject: 'a', priority: 0, labels: ['ui', ' api ', 'ui'] });
    expect(task).toMatchObject({ priority: 0, labels: ['api', 'ui'] });
    await store.updateTask(1, { priority: null, addLabels: ['bug'], removeLabels: ['ui', 'api'] });
    expect(store.getTask(1)).toMatchObject({ labels: ['bug'] });
    expect(store.getTask(1).priority).toBeUndefined();
    await store.updateTask(1, { priority: 2, removeLabels: ['bug'] });
    expect(readFileSync(store.taskPath(1), 'utf8')).not.toMatch(/priority|labels/);
    await expect(store.updateTask(1, { priority: 5 })).rejects.toMatchObject({ code: 'E_INVALID' });
    await expect(store.createTask({ subject: 'b', labels: [''] })).rejects.toMatchObject({ code: 'E_INVALID' });
  });

  it('a batch replaces labels and sets priority', async () => {
    const store = board();
    await store.batchWrite([{ subject: 'x', labels: ['a', 'b'], priority: 4 }]);
    await store.batchWrite([{ id: 1, labels: ['c'] }]);
    expect(store.getTask(1)).toMatchObject({ labels: ['c'], priority: 4 });
  });

  it('list filters by label and priority', async () => {
    const store = board();
    await store.createTask({ subject: 'a', labels: ['ui'] });
    await store.createTask({ subject: 'b', priority: 0 });
    await store.createTask({ subject: 'c', labels: ['api'], priority: 0 });
    const snapshot = store.loadBoard();
    expect(filterTasks(snapshot, { labels: ['ui', 'api'] }).map((t) => t.id)).toEqual([1, 3]);
    expect(filterTasks(snapshot, { priorities: [0] }).map((t) => t.id)).toEqual([2, 3]);
    expect(filterTasks(snapshot, { priorities: [2] }).map((t) => t.id)).toEqual([1]);
  });
});

describe('notes', () => {
  it('addNote appends {at, owner, text} in the file, oldest first, with an updated event', async () => {
    const store = board();
    await store.createTask({ subject: 'a' });
    await store.addNote(1, '  first  ', { actor: 'ann', at: new Date('2024-01-01T00:00:00Z') });
    const { task, events } = await store.addNote(1, 'second\nline', { actor: 'bot', at: new Date('2024-01-02T00:00:00Z') });
    expect(task.notes).toEqual([
      { at: '2024-01-01T00:00:00.000Z', owner: 'ann', text: 'first' },
      { at: '2024-01-02T00:00:00.000Z', owner: 'bot', text: 'second\nline' },
    ]);
    expect(events).toMatchObject([{ type: 'updated', task: 1, owner: 'bot', fields: ['notes'] }]);
    expect(JSON.parse(readFileSync(store.taskPath(1), 'utf8')).notes).toHaveLength(2);
    await store.completeTask(1);
    await store.addNote(1, 'after the fact');
    expect(store.getTask(1).notes).toHaveLength(3);
    await expect(store.addNote(1, '   ')).rejects.toMatchObject({ code: 'E_INVALID' });
    await expect(store.addNote(9, 'x')).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
  });
});

describe('search', () => {
  it('is case-insensitive over subject, labels, description and notes, ranked by field then id', async () => {
    const store = board();
    await store.createTask({ subject: 'notes only' });
    await store.addNote(1, 'the PARSER crashed');
    await store.createTask({ subject: 'description', description: 'rewrite the parser' });
    await store.createTask({ subject: 'labelled', labels: ['parser-v2'] });
    await store.createTask({ subject: 'Parser in the subject' });
    await store.createTask({ subject: 'unrelated' });
    await store.createTask({ subject: 'deleted parser' });
    await store.deleteTask(6);
    const snapshot = store.loadBoard();
    expect(searchTasks(snapshot, 'parser').map((h) => [h.task.id, h.field])).toEqual([
      [4, 'subject'],
      [3, 'labels'],
      [2, 'description'],
      [1, 'notes'],
    ]);
    expect(searchTasks(snapshot, 'PARSER', { all: true }).map((h) => h.task.id)).toEqual([4, 6, 3, 2, 1]);
    expect(filterTasks(snapshot, { grep: 'Parser' }).map((t) => t.id)).toEqual([1, 2, 3, 4]);
    expect(searchTasks(snapshot, '  ')).toEqual([]);
  });
});

describe('claim --next ranks on the board index and still sees at once what makes a task more claimable', () => {
  it('a raised priority, a release, and a task its blocker just unblocked are taken next', async () => {
    const store = board();
    for (const subject of ['a', 'b', 'c', 'd', 'e']) await store.createTask({ subject });
    await store.createTask({ subject: 'after c', blockedBy: [3] });
    await store.createTask({ subject: 'after after c', blockedBy: [6] });
    store.loadBoard(); // the index every claim below starts from

    await store.updateTask(4, { priority: 0 });
    expect((await store.claimNext({ owner: 'ann' })).task.id).toBe(4);

    // #3 heads the longest chain (3 → 6 → 7). Claimed and indexed as in progress, then released: it is next again.
    await store.claimTask(3, { owner: 'bob' });
    store.loadBoard();
    await store.releaseTask(3, { actor: 'bob' });
    expect((await store.claimNext({ owner: 'cat' })).task.id).toBe(3);

    // Completing it makes #6, which the index still has blocked, the task with the most work behind it.
    await store.completeTask(3, { actor: 'cat' });
    expect((await store.claimNext({ owner: 'dan' })).task.id).toBe(6);
  });
});
