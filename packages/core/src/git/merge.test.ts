import { describe, expect, it } from 'vitest';
import { mergeHighWaterMark, mergeTaskText, mergeTaskTextResolved } from './merge.js';

const task = (fields: Record<string, unknown>) =>
  JSON.stringify({ id: 3, subject: 'Emit output', description: '', status: 'pending', owner: '', blockedBy: [1], blocks: [4], ...fields }, null, 2) + '\n';

describe('mergeTaskText', () => {
  it('merges edges as sets: additions from both sides, removals from either', () => {
    const r = mergeTaskText(task({ blockedBy: [1, 2] }), task({ blockedBy: [2, 5] }), task({ blockedBy: [1, 2, 6] }));
    expect(r.conflicts).toEqual([]);
    expect(JSON.parse(r.text).blockedBy).toEqual([2, 5, 6]);
  });

  it('merges soft links as sets, like edges: a link one branch added and one the other removed, the field gone when empty', () => {
    const base = task({ related: [5, 6], discovered: [7] });
    const r = mergeTaskText(base, task({ related: [5, 6, 8], discovered: [7] }), task({ related: [6], discoveredFrom: [2] }));
    expect(r.conflicts).toEqual([]);
    expect(JSON.parse(r.text)).toMatchObject({ related: [6, 8], discoveredFrom: [2] });
    // Both branches removed #7 from one side each: nothing is left, and nothing writes an empty list.
    const gone = mergeTaskText(base, task({ related: [5, 6] }), task({ related: [5, 6], discovered: [] }));
    expect(JSON.parse(gone.text)).not.toHaveProperty('discovered');
  });

  it('merges metadata key by key and takes one-sided changes, removals included', () => {
    const base = task({ activeForm: 'emitting', metadata: { priority: 1, area: 'cli' } });
    const ours = task({ metadata: { priority: 2, area: 'cli' } }); // activeForm removed, priority changed
    const theirs = task({ activeForm: 'emitting', metadata: { priority: 1, area: 'cli', size: 'S' }, reviewer: 'ana' });
    const r = mergeTaskText(base, ours, theirs);
    expect(r.conflicts).toEqual([]);
    expect(r.text).toBe(
      JSON.stringify(
        {
          id: 3,
          subject: 'Emit output',
          description: '',
          status: 'pending',
          owner: '',
          blockedBy: [1],
          blocks: [4],
          metadata: { priority: 2, area: 'cli', size: 'S' },
          reviewer: 'ana',
        },
        null,
        2,
      ) + '\n',
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

describe('planning fields merge', () => {
  const note = (at: string, owner: string, text: string) => ({ at, owner, text });
  const a = note('2024-01-01T00:00:00.000Z', 'ann', 'base note');
  const b = note('2024-01-03T00:00:00.000Z', 'bob', 'ours');
  const c = note('2024-01-02T00:00:00.000Z', 'cy', 'theirs');

  it('notes as a union sorted by time, labels as a set, priority as a value', () => {
    const base = task({ labels: ['api', 'ui'], notes: [a] });
    const ours = task({ labels: ['api', 'bug', 'ui'], notes: [a, b], priority: 0 });
    const theirs = task({ labels: ['api'], notes: [a, c, b] });
    const r = mergeTaskText(base, ours, theirs);
    expect(r.conflicts).toEqual([]);
    const merged = JSON.parse(r.text);
    expect(merged.notes).toEqual([a, c, b]);
    expect(merged.labels).toEqual(['api', 'bug']);
    expect(merged.priority).toBe(0);
    expect(Object.keys(merged).slice(-3)).toEqual(['priority', 'labels', 'notes']);
  });

  it('two branches that both added notes to a task without any keep them all', () => {
    const r = mergeTaskText(task({}), task({ notes: [b] }), task({ notes: [c] }));
    expect(r.conflicts).toEqual([]);
    expect(JSON.parse(r.text).notes).toEqual([c, b]);
  });

  it('a priority changed differently on both sides is a conflict', () => {
    const r = mergeTaskText(task({}), task({ priority: 0 }), task({ priority: 4 }));
    expect(r.conflicts).toEqual([{ field: 'priority', base: undefined, ours: 0, theirs: 4 }]);
  });

  it('tasks sync (mergeTaskTextResolved) unions notes the same way', () => {
    const r = mergeTaskTextResolved(task({ notes: [a] }), task({ notes: [a, b], priority: 1 }), task({ notes: [a, c], priority: 3 }), 'theirs');
    expect(r.conflicts.map((x) => x.field)).toEqual(['priority']);
    const merged = JSON.parse(r.text);
    expect(merged.notes).toEqual([a, c, b]);
    expect(merged.priority).toBe(3);
  });

  it('keeps a review like the other fields: a verdict on one branch and a note on the other merge; two verdicts conflict', () => {
    const waiting = { status: 'in_progress', owner: 'ann', review: { required: true, state: 'waiting', since: '2026-01-01T00:00:00.000Z' } };
    const approved = { status: 'completed', owner: 'ann', review: { required: true, state: 'approved', by: 'bob', at: '2026-01-02T00:00:00.000Z' } };
    const rejected = { status: 'pending', owner: 'ann', review: { required: true, state: 'rejected', by: 'cy', at: '2026-01-02T00:00:00.000Z' } };
    const r = mergeTaskText(task(waiting), task(approved), task({ ...waiting, notes: [a] }));
    expect(r.conflicts).toEqual([]);
    expect(JSON.parse(r.text)).toMatchObject({ ...approved, notes: [a] });
    expect(JSON.parse(r.text).review).not.toHaveProperty('since');
    const both = mergeTaskTextResolved(task(waiting), task(approved), task(rejected), 'theirs');
    expect(both.conflicts.map((x) => x.field).sort()).toEqual(['review.by', 'review.state', 'status']);
    expect(JSON.parse(both.text)).toMatchObject(rejected);
  });
});
