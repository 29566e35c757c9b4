import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TASKS_BIN, cleanEnv, tasks, tempBoard, type RunResult } from '../helpers.js';

/**
 * One index refresh per change, where the change commits (docs/decisions.md,
 * "The write engine's rooms"): a change that makes a task more claimable
 * rewrites the board index once, in the transaction that made it, and no
 * command reads the board twice because the store called back into itself.
 * Seen from outside: the system calls of a real `tasks` process, under strace.
 */

const boards: ReturnType<typeof tempBoard>[] = [];
afterEach(() => {
  for (const b of boards.splice(0)) b.cleanup();
});

const hasStrace = spawnSync('strace', ['-V']).status === 0;

interface Traced extends RunResult {
  /** Successful opens of the board index file. */
  indexOpens: number;
  /** Stats (by path) of each task file, by file name. */
  stats: Map<string, number>;
}

/** Runs `tasks …args` under strace, counting the opens of the board index and the stats of task files. */
function traced(cwd: string, args: string[]): Traced {
  const dir = mkdtempSync(join(tmpdir(), 'dotasks-trace-'));
  try {
    const trace = join(dir, 'strace.txt');
    const r = spawnSync(
      'strace',
      ['-f', '-qq', '-e', 'trace=openat,open,stat,lstat,newfstatat,statx', '-e', 'signal=none', '-o', trace, process.execPath, TASKS_BIN, ...args],
      { cwd, env: cleanEnv(), encoding: 'utf8', timeout: 60_000 },
    );
    if (r.error) throw r.error;
    let indexOpens = 0;
    const stats = new Map<string, number>();
    for (const line of readFileSync(trace, 'utf8').split('\n')) {
      if (/= -1 E/.test(line)) continue;
      const m = /\b(open(?:at)?|stat|lstat|newfstatat|statx)\((?:[^,"]*, )?"([^"]*)"/.exec(line);
      if (!m) continue;
      const [, call, path] = m;
      if (call.startsWith('open')) {
        if (path.endsWith('/.runtime/board-index.v3')) indexOpens++;
        continue;
      }
      const name = /\/(task_[0-9]+\.json)$/.exec(path)?.[1];
      if (name) stats.set(name, (stats.get(name) ?? 0) + 1);
    }
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, indexOpens, stats };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A board with #1 blocking #2, #3 on its own, and an index written by a listing. */
function boardWithEdge(): string {
  const b = tempBoard();
  boards.push(b);
  for (const args of [['create', 'one'], ['create', 'two', '--blocked-by', '1'], ['create', 'three'], ['list']]) {
    const r = tasks(b.root, args);
    expect(r.code, r.stderr).toBe(0);
  }
  return b.root;
}

describe('the board index under strace', () => {
  it('strace is here', () => {
    expect(hasStrace, 'strace is needed for these tests (.ci/run installs it)').toBe(true);
  });

  it.runIf(hasStrace)('tasks dep rm opens the index once and stats each task file once', () => {
    const root = boardWithEdge();
    const r = traced(root, ['dep', 'rm', '2', '1']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.indexOpens).toBe(1);
    expect(r.stats.get('task_3.json')).toBe(1);
  });

  it.runIf(hasStrace)('every other change refreshes the index at most once', () => {
    const root = boardWithEdge();
    for (const args of [
      ['dep', 'add', '3', '1'],
      ['update', '3', '--priority', '1'],
      ['note', '3', 'looked at it'],
      ['claim', '1', '--owner', 'ann'],
      ['release', '1', '--owner', 'ann'],
      ['claim', '1', '--owner', 'ann'],
      ['done', '1', '--owner', 'ann'],
    ]) {
      const r = traced(root, args);
      expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.indexOpens, `tasks ${args.join(' ')}`).toBeLessThanOrEqual(1);
      expect(r.stats.get('task_2.json') ?? 0, `tasks ${args.join(' ')}`).toBeLessThanOrEqual(1);
    }
  });
});
