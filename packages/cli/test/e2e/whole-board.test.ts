import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TASKS_BIN, cleanEnv, tempBoard } from '../helpers.js';

// The whole-board commands never overflow the stack, whatever the board's
// size (docs/decisions.md, "A board of any size fits the stack"). The
// processes run with a tenth of Node's stack (100 KB), so a board of 20,000
// tasks overflows where the old code spread a board-sized array into one call
// (Math.min(...ring), lines.push(...links)) as 150,000 did with the default
// stack (doctor, and graph as text and as mermaid, did on it); the algorithms
// themselves run at 300,000 in packages/core (src/graph/board-size.test.ts).
const N = 20_000;
let board: ReturnType<typeof tempBoard>;

/** Every task waits for the one before and #1 for the last (one cycle through all), each related to its neighbours. */
function writeRing(dir: string): void {
  mkdirSync(join(dir, '.runtime'), { recursive: true });
  for (let id = 1; id <= N; id++) {
    const related = [id - 1, id + 1].filter((r) => r >= 1 && r <= N);
    const list = (ids: number[]) => `[\n${ids.map((n) => `    ${n}`).join(',\n')}\n  ]`;
    const fields = [
      `"id": ${id}`,
      `"subject": "Step ${id}"`,
      `"description": ""`,
      `"status": "pending"`,
      `"owner": ""`,
      `"blockedBy": ${list([id > 1 ? id - 1 : N])}`,
      `"blocks": ${list([id < N ? id + 1 : 1])}`,
      `"related": ${list(related)}`,
    ];
    writeFileSync(join(dir, `task_${id}.json`), `{\n  ${fields.join(',\n  ')}\n}\n`);
  }
  writeFileSync(join(dir, '.highwatermark'), `${N}\n`);
}

function small(args: string[]) {
  const r = spawnSync(process.execPath, ['--stack-size=100', TASKS_BIN, ...args], {
    cwd: board.root,
    env: cleanEnv(),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  board = tempBoard();
  writeRing(board.board);
});
afterAll(() => board?.cleanup());

describe(`a board of ${N.toLocaleString('en')} tasks in one cycle, on a small stack`, () => {
  it('tasks doctor names the cycle through all of them', () => {
    const r = small(['doctor']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`cycle #1 -> #2 -> #3`);
    expect(r.stdout).toContain(`#${N} -> #1: none of these tasks can ever become ready`);
    expect(r.stdout).toMatch(/^1 problem/m);
  });

  it('tasks graph draws it, with the related links (dot pushes its lines as mermaid does)', () => {
    for (const format of ['text', 'mermaid']) {
      const r = small(['graph', '--all', '-f', format]);
      expect({ format, code: r.code, stderr: r.stderr }).toEqual({ format, code: 0, stderr: '' });
      expect(r.stdout).toContain(format === 'text' ? `#${N - 1} ~ #${N} related` : `t${N - 1} -`);
    }
  });

  it('tasks export prints every task', () => {
    const r = small(['export']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { tasks: unknown[] }).tasks.length).toBe(N);
  });
});
