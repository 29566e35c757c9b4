import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskStore } from '@dotasks/core';
import { readTaskFile, tasks, tasksAsync, tempBoard } from '../helpers.js';

let cleanup = () => {};
afterEach(() => cleanup());

describe('concurrent CLI processes', () => {
  it('8 processes each setting a different metadata key on one task: all 8 keys present', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(tasks(t.root, ['create', 'shared']).code).toBe(0);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => tasksAsync(t.root, ['update', '1', '--meta', `key${i}=${i}`])));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(readTaskFile(t.board, 1).metadata).toEqual(Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`key${i}`, i])));
  });

  it('two processes adding the two edges of a would-be cycle at once, 20 times: never a cycle on disk', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    // The tasks are set up through the library; the race is between two real processes.
    await new TaskStore(t.board).batchWrite(Array.from({ length: 40 }, (_, i) => ({ subject: `${i % 2 ? 'b' : 'a'}${i >> 1}` })));
    for (let round = 0; round < 20; round++) {
      const a = 2 * round + 1;
      const b = a + 1;
      const [one, two] = await Promise.all([
        tasksAsync(t.root, ['dep', 'add', String(a), String(b)]),
        tasksAsync(t.root, ['dep', 'add', String(b), String(a)]),
      ]);
      const codes = [one.code, two.code].sort();
      expect(codes, `${one.stderr}${two.stderr}`).toEqual([0, 1]);
      const refused = one.code === 1 ? one : two;
      // (a line saying it waited for the board lock may come first, on a slow machine)
      expect(refused.stderr).toMatch(/^tasks: refused: that edge would close a cycle #(\d+) -> #(\d+) -> #\1$/m);
      const ta = readTaskFile(t.board, a);
      const tb = readTaskFile(t.board, b);
      const aWaitsB = (ta.blockedBy as number[]).includes(b);
      const bWaitsA = (tb.blockedBy as number[]).includes(a);
      expect(aWaitsB !== bWaitsA).toBe(true);
      // both sides written for the edge that won
      if (aWaitsB) expect(tb.blocks).toEqual([a]);
      else expect(ta.blocks).toEqual([b]);
    }
    expect(readdirSync(t.board).filter((n) => n.endsWith('.lock') || n.startsWith('.tmp-'))).toEqual([]);
    // every event line is whole and seq never repeats
    const seqs = readFileSync(join(t.board, '.runtime', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).seq as number);
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});
