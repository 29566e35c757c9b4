import { describe, expect, it } from 'vitest';
import { serializeTask, type Task } from '../format/format.js';
import { mergeBranchBoards, type BoardFiles } from './branch-merge.js';

/** The whole-board merge of two branches, in process (the e2e tests drive it through git). */

function task(id: number, subject: string, more: Partial<Task> = {}): string {
  return serializeTask({ id, subject, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {}, ...more } as Task);
}

function board(...files: [string, string][]): BoardFiles {
  return new Map(files);
}

describe('mergeBranchBoards', () => {
  it('a task both sides created under one subject (a cherry-pick seen twice) is one task, merged field by field', () => {
    const base = board(['task_1.json', task(1, 'one')], ['.highwatermark', '1\n']);
    const ours = board(...base, ['task_2.json', task(2, 'picked', { priority: 0 })], ['.highwatermark', '2\n']);
    const theirs = board(...base, ['task_2.json', task(2, 'picked', { labels: ['x'] })], ['.highwatermark', '2\n']);
    const result = mergeBranchBoards({ base, ours, theirs, branchPattern: 'task/{id}' });
    expect(result.renumbered).toEqual([]);
    expect([...result.files.keys()].sort()).toEqual(['.highwatermark', 'task_1.json', 'task_2.json']);
    expect(JSON.parse(result.files.get('task_2.json')!)).toMatchObject({ subject: 'picked', priority: 0, labels: ['x'] });
  });

  it('two tasks under one id: theirs moves above every id and mark, its branch and its side edges with it', () => {
    const base = board(['task_1.json', task(1, 'one')], ['.highwatermark', '7\n']);
    const ours = board(['task_1.json', task(1, 'one', { blocks: [2] })], ['task_2.json', task(2, 'ours', { blockedBy: [1] })], ['.highwatermark', '7\n']);
    const theirs = board(
      ['task_1.json', task(1, 'one', { blocks: [2] })],
      ['task_2.json', task(2, 'theirs', { blockedBy: [1], description: 'this is #2, not #20', metadata: { branch: 'task/2' } })],
      ['.highwatermark', '7\n'],
    );
    const result = mergeBranchBoards({ base, ours, theirs, branchPattern: 'task/{id}' });
    expect(result.renumbered).toEqual([{ from: 2, to: 8, subject: 'theirs', branch: { from: 'task/2', to: 'task/8' } }]);
    expect(JSON.parse(result.files.get('task_1.json')!).blocks).toEqual([2, 8]);
    expect(JSON.parse(result.files.get('task_8.json')!)).toMatchObject({
      id: 8,
      description: 'this is #8, not #20',
      blockedBy: [1],
      metadata: { branch: 'task/8' },
    });
    expect(JSON.parse(result.files.get('task_2.json')!).subject).toBe('ours');
    expect(result.files.get('.highwatermark')).toBe('8\n');
  });
});
