import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readTaskFile, tasks, tempBoard } from '../helpers.js';
import { startTasks } from '../agents-helpers.js';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** A board in a git repository whose tracked files are `files`. */
function repoBoard(files: string[]): { root: string; board: string; cleanup: () => void } {
  const t = tempBoard({ init: false });
  git(t.root, 'init', '-q', '-b', 'main');
  git(t.root, 'config', 'user.name', 't');
  git(t.root, 'config', 'user.email', 't@example.invalid');
  for (const file of files) {
    mkdirSync(dirname(join(t.root, file)), { recursive: true });
    writeFileSync(join(t.root, file), 'x\n');
  }
  git(t.root, 'add', '.');
  git(t.root, 'commit', '-q', '-m', 'start');
  const init = tasks(t.root, ['init']);
  if (init.code !== 0) throw new Error(init.stderr);
  return t;
}

function create(root: string, subject: string, paths: string[]): number {
  const r = tasks(root, ['create', subject, '--json', ...paths.flatMap((p) => ['--path', p])]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { task: { id: number } }).task.id;
}

describe('file scopes (real processes)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('four workers never run two overlapping tasks at once, and still finish the board', { timeout: 240_000 }, async () => {
    const t = repoBoard(['src/a/x.ts', 'src/b/y.ts', 'docs/x.md']);
    const logDir = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-scopes-log-')));
    cleanup = () => {
      t.cleanup();
      rmSync(logDir, { recursive: true, force: true });
    };
    // Pairs that overlap: through a tracked file (a, b, d) and by prefix alone, for a file that does not exist yet (c).
    const pairs: [string[], string[]][] = [
      [['src/a/**'], ['src/a/x.ts', 'README.md']],
      [['src/**/y.ts'], ['src/b/**']],
      [['src/c/**'], ['src/c/new.ts']],
      [['docs/x.md'], ['docs/*.md']],
    ];
    const overlapping: [number, number][] = [];
    for (const [i, [first, second]] of pairs.entries()) overlapping.push([create(t.root, `P${i} one`, first), create(t.root, `P${i} two`, second)]);
    const free = create(t.root, 'No scope', []);

    const log = join(logDir, 'work.log');
    // The command logs its start and end with a timestamp, holding its task for a while in between.
    const script = [
      "const fs = require('fs');",
      `const log = ${JSON.stringify(log)};`,
      'fs.appendFileSync(log, `start ${process.env.TASK_ID} ${Date.now()}\\n`);',
      'setTimeout(() => fs.appendFileSync(log, `end ${process.env.TASK_ID} ${Date.now()}\\n`), 600);',
    ].join(' ');
    const workers = Array.from({ length: 4 }, (_, k) => startTasks(t.root, ['worker', '--owner', `w${k}`, '--', process.execPath, '-e', script]));
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r.code, r.stderr.slice(-2000)).toBe(0);

    const intervals = new Map<number, { start: number; end: number }>();
    for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
      const [kind, id, at] = line.split(' ');
      const entry = intervals.get(Number(id)) ?? { start: NaN, end: NaN };
      entry[kind as 'start' | 'end'] = Number(at);
      intervals.set(Number(id), entry);
    }
    const ids = [...overlapping.flat(), free];
    for (const id of ids) {
      expect(readTaskFile(t.board, id).status).toBe('completed');
      expect(intervals.get(id)?.end).toBeGreaterThanOrEqual(intervals.get(id)!.start);
    }
    for (const [a, b] of overlapping) {
      const x = intervals.get(a)!;
      const y = intervals.get(b)!;
      expect(x.end <= y.start || y.end <= x.start, `#${a} ${JSON.stringify(x)} and #${b} ${JSON.stringify(y)} ran at the same time`).toBe(true);
    }
    // And the workers did run side by side: scopes keep apart only what overlaps.
    const concurrent = ids.some((a) =>
      ids.some((b) => a !== b && intervals.get(a)!.start < intervals.get(b)!.end && intervals.get(b)!.start < intervals.get(a)!.end),
    );
    expect(concurrent).toBe(true);
  });

  it('a worker records the files its command changed outside the task paths', { timeout: 60_000 }, async () => {
    const t = repoBoard(['src/a/x.ts', 'src/b/y.ts']);
    cleanup = t.cleanup;
    const id = create(t.root, 'Work in a', ['src/a/**']);
    const script =
      "const fs = require('fs'); fs.writeFileSync('src/a/x.ts', 'changed'); fs.writeFileSync('src/a/new.ts', 'new'); fs.writeFileSync('src/b/y.ts', 'stray'); fs.writeFileSync('stray.txt', 'x');";
    const worker = startTasks(t.root, ['worker', '--owner', 'w', '--json', '--', process.execPath, '-e', script]);
    const r = await worker.done;
    expect(r.code, r.stderr).toBe(0);
    const task = readTaskFile(t.board, id) as { status: string; metadata: { outOfScope: string[] } };
    expect(task.status).toBe('completed');
    expect(task.metadata.outOfScope).toEqual(['src/b/y.ts', 'stray.txt']);
    const completed = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; outOfScope?: string[] })
      .find((e) => e.type === 'task.completed');
    expect(completed?.outOfScope).toEqual(['src/b/y.ts', 'stray.txt']);
  });
});
