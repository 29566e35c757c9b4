import { describe, expect, it } from 'vitest';
import { mergeHighWaterMark, mergeTaskText } from './merge.js';

const task = (fields: Record<string, unknown>) =>
  JSON.stringify({ id: 3, subject: 'Emit output', description: '', status: 'pending', owner: '', blockedBy: [1], blocks: [4], ...fields }, null, 2) + '\n';

describe('mergeTaskText', () => {
  it('merges edges as sets: additions from both sides, removals from either', () => {
    const r = mergeTaskText(task({ blockedBy: [1, 2] }), task({ blockedBy: [2, 5] }), task({ blockedBy: [1, 2, 6] }));
    expect(r.conflicts).toEqual([]);
    expect(JSON.parse(r.text).blockedBy).toEqual([2, 5, 6]);
  });

  it('merges metadata key by key and takes one-sided changes, removals included', () => {
    const base = task({ activeForm: 'emitting', metadata: { priority: 1, area: 'cli' } });
    const ours = task({ metadata: { priority: 2, area: 'cli' } }); // activeForm removed, priority changed
    const theirs = task({ activeForm: 'emitting', metadata: { priority: 1, area: 'cli', size: 'S' }, reviewer: 'ana' });
    const r = mergeTaskText(base, ours, theirs);
    expect(r.conflicts).toEqual([]);
    expect(r.text).toBe(
      JSON.stringify({ id: 3, subject: 'Emit output', description: '', status: 'pending', owner: '', blockedBy: [1], blocks: [4], metadata: { priority: 2, area: 'cli', size: 'S' }, reviewer: 'ana' }, null, 2) + '\n',
    );
  });

  it('reports a nested conflict and shows the whole field from each side', () => {
    const r = mergeTaskText(task({ metadata: { priority: 1 } }), task({ metadata: { priority: 2, a: 1 } }), task({ metadata: { priority: 3 } }));
    expect(r.conflicts).toEqual([{ field: 'metadata.priority', base: 1, ours: 2, theirs: 3 }]);
    expect(r.text).toMatchInlineSnapshot(`
      "{
        "id": 3,
        "subject": "Emit output",
        "description": "",
        "status": "pending",
        "owner": "",
        "blockedBy": [
          1
        ],
        "blocks": [
          4
        ],
      <<<<<<< ours
        "metadata": {
          "priority": 2,
          "a": 1
        }
      =======
        "metadata": {
          "priority": 3,
          "a": 1
        }
      >>>>>>> theirs
      }
      "
    `);
  });

  it('falls back to a line merge when a side is not JSON', () => {
    const r = mergeTaskText(task({}), '{ broken', task({ subject: 'x' }));
    expect(r.fallback).toContain('ours is not a JSON object');
    expect(r.conflicts.length).toBe(1);
    expect(r.text).toContain('<<<<<<< ours');
  });

  it('merges .highwatermark to the maximum', () => {
    expect(mergeHighWaterMark('3\n', '5\n', '4\n')).toBe('5\n');
    expect(mergeHighWaterMark('', '2', '<<<<<<< x\n9\n')).toBe('9\n');
  });
});
