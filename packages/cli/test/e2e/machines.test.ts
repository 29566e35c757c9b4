import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TASKS_BIN, cleanEnv, tasks, tasksAsync } from '../helpers.js';
import { boardFiles, createRemote, git, pushToBoardBranch, stopChild, until, type RemoteFixture } from '../../../core/test/git-remote.js';

/**
 * Several machines and what happens to them, as real processes of the built
 * `tasks`: a board branch deleted, force-pushed and replaced while `watch
 * --sync` runs in two clones; clocks ten minutes off (libfaketime); syncs
 * SIGKILLed at random points; fresh clones joining; `.runtime/` removed; a
 * board moving between the code branch and its board branch.
 */

let fixture: RemoteFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

/** Debian's libfaketime (package faketime), wherever its architecture puts it. */
const LIBFAKETIME =
  readdirSync('/usr/lib')
    .map((dir) => join('/usr/lib', dir, 'faketime', 'libfaketime.so.1'))
    .find((path) => existsSync(path)) ?? '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** Clones of one remote, each with `tasks init` done (no board committed). */
async function machines(n: number, options: { daemon?: boolean } = {}): Promise<string[]> {
  fixture = await createRemote({ daemon: options.daemon, prefix: 'dotasks-machines-' });
  return Array.from({ length: n }, (_, i) => {
    const dir = fixture!.clone(`m${i + 1}`);
    const r = tasks(dir, ['init']);
    if (r.code !== 0) throw new Error(r.stderr);
    return dir;
  });
}

function ok(dir: string, args: string[], env: Record<string, string> = {}): string {
  const r = tasks(dir, args, env);
  expect(r.code, `tasks ${args.join(' ')} in ${dir}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

function subjects(dir: string): string[] {
  return Object.values(boardFiles(join(dir, '.tasks')))
    .filter((text) => text.startsWith('{'))
    .map((text) => (JSON.parse(text) as { subject: string }).subject)
    .sort();
}

/** A `tasks watch --sync` whose output is kept. */
function watchSync(dir: string, interval = '1'): { child: ChildProcess; out: () => string; err: () => string } {
  const child = fixture!.track(
    spawn(process.execPath, [TASKS_BIN, 'watch', '--sync', '--sync-interval', interval, '--json'], { cwd: dir, env: cleanEnv(), detached: true }),
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return { child, out: () => out, err: () => err };
}

describe('the board branch is deleted, rewritten or replaced while watch --sync runs in two clones', () => {
  it('every clone stops syncing with its files as they were, and the fix command restores the remote for both', async () => {
    const [a, b] = await machines(2, { daemon: true });
    for (const s of ['one', 'two', 'three']) ok(a, ['create', s]);
    ok(a, ['sync']);
    const first = git(fixture!.bare, 'rev-parse', 'tasks');
    const wa = watchSync(a);
    const wb = watchSync(b);
    await until(() => subjects(b).length === 3, { what: 'b to bring the board in' });

    // Deleted.
    git(fixture!.bare, 'branch', '-D', 'tasks');
    ok(b, ['create', 'four, made while the branch is gone']);
    await until(() => /is gone from the remote/.test(wa.err()) && /is gone from the remote/.test(wb.err()), { what: 'both watchers to refuse' });
    expect(subjects(a)).toEqual(['one', 'three', 'two']);
    expect(subjects(b)).toHaveLength(4);
    expect(wb.err()).toMatch(/tasks sync --republish/);
    // Said once, not every interval.
    expect(wb.err().match(/is gone from the remote/g)).toHaveLength(1);
    ok(a, ['sync', '--republish']);
    await until(() => subjects(a).length === 4 && subjects(b).length === 4, { what: 'both boards to have all four tasks' });

    // Force-pushed back to the first commit: #1's completion and #4 are not on it.
    ok(a, ['done', '1']);
    const completed = (dir: string) => JSON.parse(readFileSync(join(dir, '.tasks', 'task_1.json'), 'utf8')).status === 'completed';
    await until(() => completed(b), { what: 'the completion to reach b' });
    git(fixture!.bare, 'update-ref', 'refs/heads/tasks', first);
    await until(() => /was rewritten/.test(wa.err()) && /was rewritten/.test(wb.err()), { what: 'both watchers to refuse the rewrite' });
    for (const dir of [a, b]) {
      expect(subjects(dir)).toHaveLength(4);
      expect(JSON.parse(readFileSync(join(dir, '.tasks', 'task_1.json'), 'utf8')).status).toBe('completed');
    }
    ok(b, ['sync', '--republish']);
    await until(() => /"status": "completed"/.test(git(fixture!.bare, 'show', 'tasks:task_1.json')), { what: 'the republished board' });
    ok(a, ['create', 'five']);
    await until(() => subjects(b).length === 5, { what: 'a new task to travel again' });

    // Replaced by a code branch of that name.
    const code = pushToBoardBranch(fixture!, { 'README.md': '# tasks service\n' }, { orphan: true });
    await until(() => /is not a board branch: it holds README\.md/.test(wa.err()) && /is not a board branch/.test(wb.err()), {
      what: 'the foreign branch to be refused',
    });
    expect(git(fixture!.bare, 'rev-parse', 'tasks')).toBe(code);
    for (const dir of [a, b]) expect(subjects(dir)).toHaveLength(5);
    // Its owner moves it away; the board goes back where it was.
    git(fixture!.bare, 'branch', '-m', 'tasks', 'tasks-service');
    ok(a, ['sync', '--republish']);
    ok(b, ['create', 'six']);
    await until(() => subjects(a).length === 6 && subjects(b).length === 6, { what: 'the boards to meet again' });
    expect(boardFiles(join(a, '.tasks'))).toEqual(boardFiles(join(b, '.tasks')));
  });
});

describe('clocks that disagree', () => {
  it.each([
    ['ten minutes fast', '+10m'],
    ['ten minutes slow', '-10m'],
  ])('one of three clones %s: claims and heartbeats race, and no task ever has two holders', async (_what, offset) => {
    if (!existsSync(LIBFAKETIME)) throw new Error(`${LIBFAKETIME} is missing: apt-get install -y faketime (as .ci/run does)`);
    const dirs = await machines(3);
    const skewed = { LD_PRELOAD: LIBFAKETIME, FAKETIME: offset, FAKETIME_DONT_RESET: '1' };
    for (let i = 1; i <= 9; i++) ok(dirs[0], ['create', `task ${i}`]);
    for (const dir of dirs) ok(dir, ['sync']);
    const log = join(fixture!.root, 'work.log');
    writeFileSync(log, '');
    const script = join(fixture!.root, 'work.cjs');
    // Each task's work takes longer than its lease, so only heartbeats keep it.
    writeFileSync(
      script,
      "const fs = require('fs'); fs.appendFileSync(process.env.WORK_LOG, `start ${process.env.TASK_ID}\\n`); setTimeout(() => fs.appendFileSync(process.env.WORK_LOG, `end ${process.env.TASK_ID}\\n`), 2500);\n",
    );
    const workers = dirs.map((dir, i) =>
      tasksAsync(dir, ['worker', '--sync', '--lease', '2', '--idle-exit', '4', '--owner', `w${i + 1}`, '--', process.execPath, script], {
        WORK_LOG: log,
        ...(i === 2 ? skewed : {}),
      }),
    );
    const results = await Promise.all(workers);
    for (const r of results) expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    const starts = lines.filter((l) => l.startsWith('start ')).map((l) => Number(l.split(' ')[1]));
    // Every task was worked exactly once: no claim was taken from a live holder.
    expect(starts.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const dir of dirs) ok(dir, ['sync']);
    for (const dir of dirs)
      expect(JSON.parse(tasks(dir, ['list', '--json']).stdout).tasks.every((t: { status: string }) => t.status === 'completed')).toBe(true);
  });

  it('a fast clone that dies holding a task loses it to a clone that keeps syncing, within its lease and the stated bound', async () => {
    if (!existsSync(LIBFAKETIME)) throw new Error(`${LIBFAKETIME} is missing: apt-get install -y faketime (as .ci/run does)`);
    const [honest, fast] = await machines(2);
    ok(honest, ['create', 'held by the fast clone']);
    ok(honest, ['sync']);
    ok(fast, ['sync'], { LD_PRELOAD: LIBFAKETIME, FAKETIME: '+10m' });
    const watcher = watchSync(honest, '1');
    await until(() => /"type":"synced"|watching/.test(watcher.out() + watcher.err()), { what: 'the watcher to start' });
    // The fast clone claims with a 3 s lease and dies: it never renews.
    ok(fast, ['claim', '1', '--sync', '--lease', '3', '--owner', 'fast-agent'], { LD_PRELOAD: LIBFAKETIME, FAKETIME: '+10m' });
    const published = Date.now();
    await until(() => JSON.parse(tasks(honest, ['show', '1', '--json']).stdout).owner === 'fast-agent', { what: 'the claim to arrive' });
    const arrived = Date.now();
    await until(() => JSON.parse(tasks(honest, ['show', '1', '--json']).stdout).status === 'pending', { what: 'the honest clone to reap #1', ms: 60_000 });
    const reapedAfter = (Date.now() - arrived) / 1000;
    // Not before the honest clone saw the claim unrenewed for its whole lease, by its own clock …
    expect(reapedAfter).toBeGreaterThanOrEqual(3);
    // … and nowhere near the ten minutes the fast clone's own expiresAt says (lease + grace + a few sync intervals).
    expect((Date.now() - published) / 1000).toBeLessThan(60);
    expect(readFileSync(join(honest, '.tasks', '.runtime', 'events.jsonl'), 'utf8')).toMatch(/"type":"reaped"/);
  });
});

describe('syncs killed at random points', () => {
  it('after 50 SIGKILLs every clone syncs again without a person, and no task is lost or doubled', async () => {
    const dirs = await machines(3);
    let made = 0;
    const create = (dir: string) => ok(dir, ['create', `task ${++made} from ${dir.slice(-2)}`]);
    for (const dir of dirs) create(dir);
    for (const dir of dirs) ok(dir, ['sync']);
    // First, for certain, the kill that wedged a clone: its git dies holding the lock of the ref it updates
    // (strace delivers SIGKILL at git's second call on the lock file, after it was created).
    create(dirs[1]);
    ok(dirs[1], ['sync']);
    const lock = join(dirs[0], '.git', 'refs', 'dotasks', 'remote', 'origin', 'tasks.lock');
    const killed = spawnSync(
      'strace',
      ['-f', '-qq', '-o', '/dev/null', '-P', lock, '-e', 'inject=all:signal=SIGKILL:when=2', process.execPath, TASKS_BIN, 'sync'],
      {
        cwd: dirs[0],
        env: cleanEnv(),
        encoding: 'utf8',
      },
    );
    expect(killed.status, killed.stderr).toBe(1);
    expect(existsSync(lock)).toBe(true);
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let kill = 0; kill < 50; kill++) {
      const dir = dirs[Math.floor(random() * dirs.length)];
      if (random() < 0.6) create(dir);
      const child = spawn(process.execPath, [TASKS_BIN, 'sync'], { cwd: dir, env: cleanEnv(), detached: true, stdio: 'ignore' });
      fixture!.track(child);
      await new Promise((r) => setTimeout(r, random() * 250));
      // Half the time only tasks itself dies (its git goes on alone), half the time its git with it.
      try {
        process.kill(random() < 0.5 ? child.pid! : -child.pid!, 'SIGKILL');
      } catch {
        // it had finished
      }
      await stopChild(child);
    }
    // Plain syncs: each clone, twice round, and every one of them succeeds (the left lock is cleared on the way).
    for (let round = 0; round < 2; round++)
      for (const dir of dirs) {
        const r = tasks(dir, ['sync']);
        expect(r.code, `${dir}: ${r.stderr}`).toBe(0);
      }
    const files = dirs.map((dir) => boardFiles(join(dir, '.tasks')));
    expect(files[1]).toEqual(files[0]);
    expect(files[2]).toEqual(files[0]);
    const all = subjects(dirs[0]);
    expect(all).toHaveLength(made);
    expect(new Set(all).size).toBe(made);
  });
});

describe('a second machine joins', () => {
  /** A repository whose board syncs: its config and .gitignore committed on main, its tasks on the board branch. */
  async function syncedRepository(): Promise<string> {
    const [a] = await machines(1);
    for (const s of ['one', 'two', 'three']) ok(a, ['create', s]);
    ok(a, ['sync']);
    git(a, 'add', '.tasks');
    git(a, 'commit', '-q', '-m', 'the board syncs');
    git(a, 'push', '-q', 'origin', 'main');
    return a;
  }

  it('in fresh clones of a repository with its board committed, every --sync command works the first time', async () => {
    await syncedRepository();
    expect(git(fixture!.bare, 'ls-tree', '--name-only', 'main:.tasks').split('\n').sort()).toEqual(['.gitignore', 'config.json']);
    const fresh = (name: string) => {
      const dir = fixture!.clone(name);
      expect(existsSync(join(dir, '.tasks', '.runtime'))).toBe(false);
      return dir;
    };
    expect(ok(fresh('s'), ['sync'])).toMatch(/^in {3}#1 created$/m);
    expect(ok(fresh('c'), ['claim', '--next', '--sync', '--owner', 'c-agent'])).toMatch(/^claimed #1: one/m);
    const w = tasks(fresh('w'), ['worker', '--sync', '--max-tasks', '1', '--owner', 'w-agent', '--', 'true']);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stderr).toMatch(/completed #2/);
    const r = fresh('r');
    expect(ok(r, ['reap', '--sync'])).toMatch(/nothing to reap/);
    const watcher = watchSync(fresh('v'));
    await until(() => watcher.out().includes('"type":"synced"'), { what: 'watch --sync to sync a fresh clone' });
    ok(r, ['sync']);
    expect(JSON.parse(tasks(r, ['show', '1', '--json']).stdout)).toMatchObject({ status: 'in_progress', owner: 'c-agent' });
    expect(JSON.parse(tasks(r, ['show', '2', '--json']).stdout).status).toBe('completed');
  });

  it('in a fresh clone with no board, sync and init set it up from the remote and say so', async () => {
    const [a] = await machines(1);
    ok(a, ['create', 'made on a']);
    ok(a, ['sync']);
    const s = fixture!.clone('s');
    expect(ok(s, ['sync'])).toMatch(/set up the board in .* from origin\/tasks[\s\S]*in {3}#1 created/);
    const i = fixture!.clone('i');
    expect(ok(i, ['init'])).toMatch(/origin\/tasks already holds a board: set up .* from it \(1 task\)/);
    expect(subjects(i)).toEqual(['made on a']);
    // Where the remote has no board, the old advice stands.
    rmSync(join(a, '.tasks'), { recursive: true, force: true });
    git(fixture!.bare, 'branch', '-D', 'tasks');
    const none = tasks(a, ['sync']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no task board found .* and origin has no board branch 'tasks'; run 'tasks init'/);
  });

  it('.runtime/ removed between commands and while they run costs leases and caches at most', async () => {
    const [a, b] = await machines(2);
    for (let i = 1; i <= 6; i++) ok(a, ['create', `task ${i}`]);
    ok(a, ['sync']);
    ok(b, ['sync']);
    const runtime = join(b, '.tasks', '.runtime');
    // Between commands: every one of them works as if nothing had happened.
    for (const args of [
      ['sync'],
      ['claim', '--next', '--sync', '--owner', 'b-agent'],
      ['heartbeat', '--sync', '--owner', 'b-agent'],
      ['reap', '--sync'],
      ['list'],
    ]) {
      rmSync(runtime, { recursive: true, force: true });
      ok(b, args);
    }
    ok(b, ['release', '1', '--owner', 'b-agent']);
    // While they run: a command may fail, in one line that says nothing was lost, and never takes the board for gone.
    let removing = true;
    const remover = (async () => {
      while (removing) {
        try {
          rmSync(runtime, { recursive: true, force: true });
        } catch {
          // a command made a file in it meanwhile: the next round removes it
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const outcomes: string[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        for (const args of [['claim', '--next', '--sync', '--owner', 'b-agent'], ['done', String(i + 1), '--owner', 'b-agent'], ['sync']]) {
          const r = await tasksAsync(b, args);
          // Whatever it met, a command says so in one line, never a stack.
          if (r.code !== 0) {
            expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
            expect(r.stderr).not.toMatch(/was the board removed/);
          }
          outcomes.push(`${args[0]}:${r.code}`);
        }
      }
    } finally {
      removing = false;
      await remover;
    }
    // Afterwards, with .runtime/ left alone, the board settles and nothing was lost.
    for (let i = 1; i <= 6; i++) tasks(b, ['done', String(i), '--force']);
    ok(b, ['sync']);
    ok(a, ['sync']);
    expect(subjects(a)).toHaveLength(6);
    expect(boardFiles(join(a, '.tasks'))).toEqual(boardFiles(join(b, '.tasks')));
    expect(JSON.parse(tasks(a, ['list', '--json']).stdout).tasks.every((t: { status: string }) => t.status === 'completed')).toBe(true);
    expect(outcomes.filter((o) => o.endsWith(':0')).length).toBeGreaterThan(0);
  });
});

describe('the two homes of a board', () => {
  it('a board committed with the code is refused by sync, adopted in one commit, and retired back in another', async () => {
    const [a] = await machines(1);
    for (const s of ['one', 'two']) ok(a, ['create', s]);
    git(a, 'add', '.tasks');
    git(a, 'commit', '-q', '-m', 'the board');
    writeFileSync(join(a, 'README.md'), '# staged, not part of the move\n');
    git(a, 'add', 'README.md');
    const refused = tasks(a, ['sync']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the board's tasks are committed on the code branch \(3 file\(s\).*tasks sync --adopt/);
    expect(git(fixture!.bare, 'branch', '--list', 'tasks')).toBe('');

    expect(ok(a, ['sync', '--adopt'])).toMatch(/adopted: 3 board file\(s\) left the code branch in commit [0-9a-f]{10}/);
    expect(git(a, 'ls-tree', '--name-only', 'HEAD:.tasks').split('\n').sort()).toEqual(['.gitignore', 'config.json']);
    expect(git(a, 'log', '-1', '--format=%s')).toBe('tasks: the board moves to origin/tasks');
    // What else was staged stays staged, and out of the commit.
    expect(git(a, 'status', '--porcelain')).toBe('M  README.md');
    expect(git(fixture!.bare, 'ls-tree', '--name-only', 'tasks')).toMatch(/task_1\.json[\s\S]*task_2\.json/);
    git(a, 'commit', '-q', '-m', 'readme');
    git(a, 'push', '-q', 'origin', 'main');
    // Kept in both places again (a task file added by force): doctor names it and the fix.
    git(a, 'add', '-f', '.tasks/task_1.json');
    const twice = tasks(a, ['doctor']);
    expect(twice.code).toBe(1);
    expect(twice.stdout).toMatch(/the board syncs through origin\/tasks .* and 1 of its files are also committed on the code branch[\s\S]*tasks sync --adopt/);
    git(a, 'rm', '-q', '--cached', '.tasks/task_1.json');
    expect(tasks(a, ['doctor']).code).toBe(0);
    const b = fixture!.clone('b');
    expect(ok(b, ['sync'])).toMatch(/in {3}#2 created/);
    ok(b, ['create', 'three']);
    ok(b, ['sync']);

    // Back to the code branch.
    expect(ok(a, ['sync', '--retire'])).toMatch(/retired origin\/tasks: the board is committed on the code branch again in commit/);
    expect(git(a, 'ls-tree', '--name-only', 'HEAD:.tasks').split('\n').sort()).toEqual([
      '.gitignore',
      '.highwatermark',
      'config.json',
      'task_1.json',
      'task_2.json',
      'task_3.json',
    ]);
    expect(git(a, 'status', '--porcelain')).toBe('');
    git(a, 'push', '-q', 'origin', 'main');
    const late = tasks(b, ['sync']);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/origin\/tasks no longer holds the board: it went back to the code branch .* git pull brings it/);
    git(b, 'pull', '-q', '--no-rebase', 'origin', 'main');
    expect(
      readdirSync(join(b, '.tasks'))
        .filter((n) => n.startsWith('task_'))
        .sort(),
    ).toEqual(['task_1.json', 'task_2.json', 'task_3.json']);
    expect(git(b, 'status', '--porcelain')).toBe('');
  });
});
