import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { createTasks, readTaskFile, tasks, tempBoard } from '../helpers.js';
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
  // What `tasks init` does in a repository without a remote (its own tests run the command).
  TaskStore.init(t.board);
  return t;
}

/** `tasks create SUBJECT --path …` as a command, for the create whose checks are the subject. */
function createCommand(root: string, subject: string, paths: string[]): number {
  const r = tasks(root, ['create', subject, '--json', ...paths.flatMap((p) => ['--path', p])]);
  if (r.code !== 0) throw new Error(r.stderr);
  return (JSON.parse(r.stdout) as { task: { id: number } }).task.id;
}

/** The same task made in process, through the core call the command makes (the scope is checked there), for a starting board. */
async function create(root: string, subject: string, paths: string[]): Promise<number> {
  const [id] = await createTasks(join(root, '.tasks'), [{ subject, ...(paths.length ? { paths } : {}) }]);
  return id;
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
    for (const [i, [first, second]] of pairs.entries()) overlapping.push([await create(t.root, `P${i} one`, first), await create(t.root, `P${i} two`, second)]);
    const free = await create(t.root, 'No scope', []);

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
    const id = await create(t.root, 'Work in a', ['src/a/**']);
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

  // Hostile globs, written into task files by hand (create refuses them): each once made every claim that met it
  // fail, hang or run out of memory, on every agent at once.
  const BRACE_RANGE = 'src/{1..100000}';
  const BRACE_PRODUCT = '{a,b,c}'.repeat(20);
  const BACKTRACKING = 'src/*a*a*a*a*a*a*a*a*a*a*a*a*a*b';
  const LONG_NAME = `src/${'a'.repeat(60)}`;

  /** Sets task `id`'s paths in its file, as a hand edit (or an import, or a merge) would. */
  function handEditPaths(board: string, id: number, paths: string[]): void {
    const file = join(board, `task_${id}.json`);
    const task = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...task, paths }, null, 2) + '\n');
  }

  it('a task with a hostile glob holds back itself alone: four workers finish everything else', { timeout: 240_000 }, async () => {
    const t = repoBoard(['src/a/x.ts', 'src/b/y.ts', 'docs/x.md', LONG_NAME]);
    cleanup = t.cleanup;
    const hostile: number[] = [];
    for (const [i, glob] of [BRACE_RANGE, BRACE_PRODUCT, BACKTRACKING].entries()) {
      const id = await create(t.root, `Hostile ${i}`, ['src/a/x.ts']);
      handEditPaths(t.board, id, [glob]);
      hostile.push(id);
    }
    // One more in progress for an owner who is away: the others' scopes are checked against it on every claim.
    const away = await create(t.root, 'Hostile in progress', ['src/b/y.ts']);
    // The claim 'tasks claim ID --owner away' makes (a lease without a process).
    await new TaskStore(t.board).claimTask(away, { owner: 'away', lease: {} });
    handEditPaths(t.board, away, [BRACE_RANGE]);
    const good: number[] = [];
    for (const [subject, paths] of [
      ['Good a', ['src/a/**']],
      ['Good b', ['src/b/**']],
      ['Good docs', ['docs/**']],
      ['Good long', ['src/aaa*']],
      ['Good new', ['src/c/new.ts']],
      ['No scope', []],
    ] as const)
      good.push(await create(t.root, subject, [...paths]));
    // A heap small enough that the brace product's old way (expand it all) dies at once instead of taking the machine.
    const env = { NODE_OPTIONS: '--max-old-space-size=256' };
    const workers = Array.from({ length: 4 }, (_, k) =>
      startTasks(t.root, ['worker', '--owner', `w${k}`, '--idle-exit', '1', '--', process.execPath, '-e', ''], env),
    );
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r.code, r.stderr.slice(-2000)).toBe(0);
    for (const id of good) expect(readTaskFile(t.board, id).status, `#${id}`).toBe('completed');
    for (const id of hostile) expect(readTaskFile(t.board, id)).toMatchObject({ status: 'pending', owner: '' });

    // What is left says why, and doctor names each task and the glob.
    const next = tasks(t.root, ['claim', '--next', '--owner', 'me'], env);
    expect(next.code).not.toBe(0);
    expect(next.stderr).toContain(`${hostile.map((id) => `#${id}`).join(', ')} have a file scope no claim can use`);
    const explicit = tasks(t.root, ['claim', String(hostile[0]), '--owner', 'me'], env);
    expect(explicit.code).not.toBe(0);
    expect(explicit.stderr).toContain(`task #${hostile[0]} has a file scope no claim can use: the path glob "${BRACE_RANGE}" expands to more than`);
    const doctor = tasks(t.root, ['doctor', '--json'], env);
    const findings = (JSON.parse(doctor.stdout) as { findings: { code: string; task: number; message: string }[] }).findings.filter(
      (f) => f.code === 'bad_scope',
    );
    expect(findings.map((f) => f.task).sort((a, b) => a - b)).toEqual([...hostile, away].sort((a, b) => a - b));
    expect(findings.find((f) => f.task === hostile[2])?.message).toContain('wildcards in the segment');

    // The way out: the bad glob leaves with the update that gives the task what was meant.
    const mend = tasks(t.root, ['update', String(hostile[0]), '--remove-path', BRACE_RANGE, '--path', 'src/{1..9}']);
    expect(mend.code, mend.stderr).toBe(0);
    expect(readTaskFile(t.board, hostile[0]).paths).toEqual(['src/{1..9}']);
    const claimed = tasks(t.root, ['claim', '--next', '--owner', 'me', '--json'], env);
    expect(claimed.code, claimed.stderr).toBe(0);
    expect((JSON.parse(claimed.stdout) as { task: { id: number } }).task.id).toBe(hostile[0]);
  });

  it('create and update refuse a glob past the limits or outside the repository, with the reason', () => {
    const t = repoBoard(['src/a/x.ts']);
    cleanup = t.cleanup;
    const refused: [string, string][] = [
      [BRACE_RANGE, 'expands to more than 256 globs'],
      [BRACE_PRODUCT, 'expands to more than 256 globs'],
      [BACKTRACKING, 'has more than 3 wildcards in the segment'],
      ['/etc/**', 'is absolute; paths are relative to the top of the repository'],
      ['../../**', 'climbs out with ..'],
      ['src/{a,..}/x', 'climbs out with ..'],
      ['~/notes/**', 'starts with ~'],
      ['**/**/**/**', 'repeats **'],
      ['x'.repeat(600), 'is 600 characters long'],
    ];
    for (const [glob, reason] of refused) {
      const r = tasks(t.root, ['create', 'Scoped', '--path', glob]);
      expect(r.code, glob).not.toBe(0);
      expect(r.stderr.trim().split('\n'), glob).toHaveLength(1);
      expect(r.stderr, glob).toContain(reason);
    }
    const many = tasks(t.root, ['create', 'Scoped', ...Array.from({ length: 101 }, (_, i) => ['--path', `f${i}`]).flat()]);
    expect(many.stderr).toContain('a scope holds at most 100');
    expect(readdirSync(t.board).filter((f) => f.startsWith('task_'))).toEqual([]);
    const id = createCommand(t.root, 'Scoped', ['src/**']);
    const r = tasks(t.root, ['update', String(id), '--path', '/etc/**']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('is absolute');
    expect(readTaskFile(t.board, id).paths).toEqual(['src/**']);
  });
});
