import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { createHash } from 'node:crypto';
import { TASKS_BIN, cleanEnv, collectOutput, createTasks, readTaskFile, tasks, tempBoard, type RunResult } from '../helpers.js';

/**
 * One writer, tested from outside (docs/decisions.md, "One writer"): real
 * `tasks` processes frozen with SIGSTOP at each step of a commit while
 * another process takes their stale locks over and writes; locks removed
 * from under a running command; a status change racing a claim; a
 * completion of 5,000 dependents racing edits; syscall failures injected by
 * strace at every rename. The assertions are on the files afterwards.
 */

type Board = ReturnType<typeof tempBoard>;
const boards: Board[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    try {
      if (child.pid) process.kill(child.pid, 'SIGCONT');
      child.kill('SIGKILL');
    } catch {
      // gone already
    }
  }
  for (const b of boards.splice(0)) b.cleanup();
});

/** A board whose locks go stale after 2 s (the shortest proper-lockfile allows). */
function staleBoard(): Board {
  const b = tempBoard();
  boards.push(b);
  writeFileSync(join(b.board, 'config.json'), JSON.stringify({ staleLockSeconds: 2, lockTimeoutSeconds: 60 }) + '\n');
  return b;
}

function ok(cwd: string, args: string[], env: Record<string, string> = {}): RunResult {
  const r = tasks(cwd, args, env);
  expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

/** Starts `tasks …args` and returns the child with a promise of its result. */
function start(cwd: string, args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<RunResult> } {
  const child = spawn(process.execPath, [TASKS_BIN, ...args], { cwd, env: cleanEnv(env) });
  children.push(child);
  return { child, done: collectOutput(child) };
}

/** Waits until the process has stopped itself (SIGSTOP at its pause point). */
async function stopped(child: ChildProcess, exited: Promise<RunResult>): Promise<void> {
  let gone: RunResult | undefined;
  void exited.then((r) => (gone = r));
  await vi.waitFor(
    () => {
      if (gone) throw new Error(`exited before its pause point: ${gone.code} ${gone.stderr}`);
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      expect(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)).toBe('T');
    },
    { timeout: 20_000, interval: 20 },
  );
}

function events(board: string): Record<string, unknown>[] {
  const file = join(board, '.runtime', 'events.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function lease(board: string, id: number): Record<string, unknown> | undefined {
  const file = join(board, '.runtime', 'leases', `task_${id}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : undefined;
}

/** Nothing left behind: no lock folder, no unfinished journal. */
function expectSettled(board: string): void {
  expect(readdirSync(board).filter((n) => n.endsWith('.lock'))).toEqual([]);
  const journal = join(board, '.runtime', 'journal');
  expect(existsSync(journal) ? readdirSync(journal) : []).toEqual([]);
}

const STEPS = ['locked', 'staged', 'committed', 'rename', 'renamed', 'logged'] as const;
/** Steps after which the frozen writer's change is committed (its journal is in place). */
const COMMITTED = new Set(['committed', 'rename', 'renamed', 'logged']);

describe('a writer frozen past the stale time at each step of a commit', () => {
  it('claim: another claimant takes the lock over; exactly one wins, and both say so truthfully', async () => {
    await Promise.all(
      STEPS.map(async (step) => {
        const b = staleBoard();
        await createTasks(b.board, ['contested']);
        const a = start(b.root, ['claim', '1', '--owner', 'A'], { TASKS_TEST_PAUSE: step });
        await stopped(a.child, a.done);
        // B waits for A's lock to go stale, takes it over (finishing A's committed change first, if any).
        const bResult = await start(b.root, ['claim', '1', '--owner', 'B']).done;
        process.kill(a.child.pid!, 'SIGCONT');
        const aResult = await a.done;
        const winner = COMMITTED.has(step) ? 'A' : 'B';
        const [won, lost] = winner === 'A' ? [aResult, bResult] : [bResult, aResult];
        expect(won.code, `${step}: the winner ${winner}: ${won.stderr}`).toBe(0);
        expect(lost.code, `${step}: the loser: ${lost.stderr}`).toBe(3);
        expect(lost.stderr).toContain(`already claimed by ${winner}`);
        expect(readTaskFile(b.board, 1), step).toMatchObject({ status: 'in_progress', owner: winner });
        expect(lease(b.board, 1), step).toMatchObject({ owner: winner });
        const claimed = events(b.board).filter((e) => e.type === 'claimed');
        expect(
          claimed.map((e) => e.owner),
          step,
        ).toEqual([winner]);
        expectSettled(b.board);
      }),
    );
  });

  it('completion: an edit to a dependent made meanwhile is kept, and the completion happens once', async () => {
    await Promise.all(
      STEPS.map(async (step) => {
        const b = staleBoard();
        await createTasks(b.board, ['hub', { subject: 'two', blockedBy: [1] }, { subject: 'three', blockedBy: [1] }]);
        const a = start(b.root, ['done', '1'], { TASKS_TEST_PAUSE: step });
        await stopped(a.child, a.done);
        const edit = await start(b.root, ['update', '2', '--meta', 'seen=1']).done;
        expect(edit.code, `${step}: ${edit.stderr}`).toBe(0);
        process.kill(a.child.pid!, 'SIGCONT');
        const done = await a.done;
        expect(done.code, `${step}: ${done.stderr}`).toBe(0);
        expect(readTaskFile(b.board, 1).status).toBe('completed');
        expect(readTaskFile(b.board, 2), step).toMatchObject({ blockedBy: [], metadata: { seen: 1 } });
        expect(readTaskFile(b.board, 3).blockedBy).toEqual([]);
        const log = events(b.board);
        expect(
          log.filter((e) => e.type === 'completed').map((e) => e.task),
          step,
        ).toEqual([1]);
        expect(
          log.filter((e) => e.type === 'unblocked').map((e) => e.task),
          step,
        ).toEqual([2, 3]);
        expect(new Set(log.map((e) => e.seq)).size, `${step}: seq handed out once`).toBe(log.length);
        expectSettled(b.board);
      }),
    );
  });
});

describe('locks removed from under a running command', () => {
  it('a board lock removed while a completion runs: it starts over and completes once', async () => {
    const b = staleBoard();
    await createTasks(b.board, ['hub', { subject: 'two', blockedBy: [1] }]);
    const a = start(b.root, ['done', '1'], { TASKS_TEST_PAUSE: 'staged' });
    await stopped(a.child, a.done);
    rmSync(join(b.board, '.board.lock'), { recursive: true });
    process.kill(a.child.pid!, 'SIGCONT');
    const done = await a.done;
    expect(done.code, done.stderr).toBe(0);
    expect(readTaskFile(b.board, 2).blockedBy).toEqual([]);
    expect(events(b.board).filter((e) => e.type === 'completed')).toHaveLength(1);
    expectSettled(b.board);
  });

  it('an owner lock removed while a claim runs: the owner still never holds two tasks', async () => {
    const b = staleBoard();
    await createTasks(b.board, ['one', 'two']);
    const a = start(b.root, ['claim', '1', '--owner', 'ann'], { TASKS_TEST_PAUSE: 'staged' });
    await stopped(a.child, a.done);
    const ownerLocks = readdirSync(join(b.board, '.runtime')).filter((n) => n.startsWith('owner-') && n.endsWith('.lock'));
    expect(ownerLocks).toHaveLength(1);
    rmSync(join(b.board, '.runtime', ownerLocks[0]), { recursive: true });
    // With the owner lock gone, a second claim by the same owner goes through at once.
    ok(b.root, ['claim', '2', '--owner', 'ann']);
    process.kill(a.child.pid!, 'SIGCONT');
    const first = await a.done;
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toContain('ann already has task #2 in progress');
    expect(readTaskFile(b.board, 1)).toMatchObject({ status: 'pending', owner: '' });
    expect(readTaskFile(b.board, 2)).toMatchObject({ status: 'in_progress', owner: 'ann' });
    expect(lease(b.board, 1)).toBeUndefined();
    expectSettled(b.board);
  });
});

describe('update --status in_progress racing a claim', () => {
  it('is a compare-and-swap: exactly one of them gets the task, the other is told it lost (exit 3)', async () => {
    const b = staleBoard();
    const rounds = 12;
    await new TaskStore(b.board).batchWrite(Array.from({ length: rounds }, (_, i) => ({ subject: `task ${i + 1}` })));
    // Four races at a time, each on its own task between its own two owners (single-in-progress stays out of it).
    const race = async (i: number) => {
      const [claim, update] = await Promise.all([
        start(b.root, ['claim', String(i), '--owner', `bob-${i}`]).done,
        start(b.root, ['update', String(i), '--status', 'in_progress'], { TASKS_OWNER: `ann-${i}` }).done,
      ]);
      const winners = [claim, update].filter((r) => r.code === 0);
      expect(winners, `round ${i}: ${claim.stderr} | ${update.stderr}`).toHaveLength(1);
      const loser = claim.code === 0 ? update : claim;
      expect(loser.code, loser.stderr).toBe(3);
      const owner = claim.code === 0 ? `bob-${i}` : `ann-${i}`;
      expect(readTaskFile(b.board, i)).toMatchObject({ status: 'in_progress', owner });
      expect(lease(b.board, i)).toMatchObject({ owner });
    };
    for (let i = 1; i <= rounds; i += 4) await Promise.all([i, i + 1, i + 2, i + 3].map(race));
  });
});

describe('a completion of 5,000 dependents racing edits (locks stale after 2 s)', () => {
  it('keeps every edit another process was told succeeded, and completes every dependent once', async () => {
    const b = staleBoard();
    const n = 5000;
    const canonical = (task: Record<string, unknown>) => JSON.stringify(task, null, 2) + '\n';
    writeFileSync(
      join(b.board, 'task_1.json'),
      canonical({ id: 1, subject: 'hub', description: '', status: 'pending', owner: '', blockedBy: [], blocks: Array.from({ length: n }, (_, i) => i + 2) }),
    );
    for (let id = 2; id <= n + 1; id++)
      writeFileSync(
        join(b.board, `task_${id}.json`),
        canonical({ id, subject: `dependent ${id}`, description: '', status: 'pending', owner: '', blockedBy: [1], blocks: [] }),
      );
    writeFileSync(join(b.board, '.highwatermark'), `${n + 1}\n`);

    const acknowledged: { id: number; key: string; value: number }[] = [];
    let running = true;
    const editor = async (k: number) => {
      for (let i = 0; running || i < 2; i++) {
        const id = 2 + ((k * 7919 + i * 104729) % n);
        const r = await start(b.root, ['update', String(id), '--meta', `e${k}=${i}`]).done;
        if (r.code === 0) acknowledged.push({ id, key: `e${k}`, value: i });
        else expect(r.stderr).toMatch(/^tasks: /);
      }
    };
    const completion = start(b.root, ['done', '1']);
    const editors = [editor(1), editor(2), editor(3)];
    const done = await completion.done;
    running = false;
    await Promise.all(editors);
    expect(done.code, done.stderr).toBe(0);
    expect(acknowledged.length).toBeGreaterThanOrEqual(6);
    expect(readTaskFile(b.board, 1).status).toBe('completed');
    const latest = new Map<string, number>();
    for (const a of acknowledged) latest.set(`${a.id}:${a.key}`, Math.max(latest.get(`${a.id}:${a.key}`) ?? -1, a.value));
    for (const [where, value] of latest) {
      const [id, key] = where.split(':');
      expect((readTaskFile(b.board, Number(id)).metadata as Record<string, unknown>)[key], `#${id} ${key}`).toBe(value);
    }
    for (let id = 2; id <= n + 1; id++) expect(readTaskFile(b.board, id).blockedBy, `#${id}`).toEqual([]);
    const log = events(b.board);
    expect(log.filter((e) => e.type === 'completed')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'unblocked')).toHaveLength(n);
    expectSettled(b.board);
  });
});

describe('input the board could not read back', () => {
  it('a 2 MB description on stdin and a 100 kB subject are refused in one line, and nothing is written', () => {
    const b = staleBoard();
    const big = tasks(b.root, ['create', 'big', '-d', '-'], {}, 'x'.repeat(2 * 1024 * 1024));
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/^tasks: task #1 would be 2\.0 MB, over the 1 MiB limit for a task file; nothing was written/);
    expect(big.stderr.trim().split('\n')).toHaveLength(1);
    const long = tasks(b.root, ['create', 's'.repeat(100_000)]);
    expect(long.code).toBe(1);
    expect(long.stderr).toContain('at most 500 characters (this one has 100000)');
    expect(readdirSync(b.board).filter((n) => n.startsWith('task_'))).toEqual([]);
    expect(readFileSync(join(b.board, '.highwatermark'), 'utf8')).toBe('0\n');
    // A description read from stdin is kept as written.
    ok(b.root, ['create', 'small', '-d', '-'], {}).stdout;
  });

  it('a folder named task_N.json is reported by list, ready, graph, export and doctor, and skipped', async () => {
    const b = staleBoard();
    await createTasks(b.board, ['one']);
    mkdirSync(join(b.board, 'task_14.json'));
    const list = tasks(b.root, ['list']);
    expect(list.code).toBe(1);
    expect(list.stdout).toContain('#1: one');
    expect(list.stderr).toMatch(/task_14\.json.*not a regular file/);
    for (const args of [['ready'], ['graph'], ['export', '--format', 'json']]) {
      const r = tasks(b.root, args);
      expect(r.stderr, args.join(' ')).not.toMatch(/unexpected error|EISDIR/);
    }
    const doctor = tasks(b.root, ['doctor', '--fix']);
    expect(doctor.stdout + doctor.stderr).toMatch(/task_14\.json is not a regular file/);
    expect(doctor.stderr).not.toMatch(/unexpected error|EISDIR/);
  });

  it('a .highwatermark with conflict markers stops create until doctor --fix sets it past every id seen', async () => {
    const b = staleBoard();
    await createTasks(b.board, ['one']);
    writeFileSync(join(b.board, '.highwatermark'), '<<<<<<< HEAD\n7\n=======\n9\n>>>>>>> theirs\n');
    const refused = tasks(b.root, ['create', 'two']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('.highwatermark must hold one plain integer');
    expect(refused.stderr).toContain('tasks doctor --fix');
    ok(b.root, ['doctor', '--fix']);
    expect(readFileSync(join(b.board, '.highwatermark'), 'utf8')).toBe('9\n');
    expect(ok(b.root, ['create', 'two']).stdout).toBe('created #10: two\n');
  });
});

const hasStrace = spawnSync('strace', ['-V']).status === 0;

describe('rename failures injected by strace into a real process', () => {
  it('at every rename of a completion: one line, exit 1, the board exactly as before', async () => {
    expect(hasStrace, 'strace is needed for this test (.ci/run installs it)').toBe(true);
    const b = staleBoard();
    await createTasks(b.board, ['hub', ...[0, 1, 2].map((i) => ({ subject: `dependent ${i}`, blockedBy: [1] }))]);
    // The claim 'tasks claim 1 --owner ann' makes (a lease without a process), in process: the completion is the subject.
    await new TaskStore(b.board).claimTask(1, { owner: 'ann', lease: {} });
    const digest = () => {
      const h = createHash('sha1');
      for (const name of readdirSync(b.board).sort())
        if (/^task_\d+\.json$|^\.highwatermark$/.test(name)) h.update(name).update(readFileSync(join(b.board, name)));
      const leases = join(b.board, '.runtime', 'leases');
      for (const name of existsSync(leases) ? readdirSync(leases).sort() : []) h.update(name).update(readFileSync(join(leases, name)));
      return h.digest('hex');
    };
    const run = (inject: string[]) =>
      spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', ...inject, process.execPath, TASKS_BIN, 'done', '1'], {
        cwd: b.root,
        env: cleanEnv({ TASKS_OWNER: 'ann' }),
        encoding: 'utf8',
      });
    // Count the renames of the completion on a copy of the board first.
    const copy = join(b.root, 'copy');
    spawnSync('cp', ['-a', b.board, copy]);
    const counted = spawnSync('strace', ['-f', '-qq', '-e', 'trace=rename', process.execPath, TASKS_BIN, 'done', '1', '--dir', copy], {
      cwd: b.root,
      env: cleanEnv({ TASKS_OWNER: 'ann' }),
      encoding: 'utf8',
    });
    expect(counted.status, counted.stderr).toBe(0);
    const renames = counted.stderr.split('\n').filter((l) => /rename\(/.test(l)).length;
    expect(renames).toBe(5); // the journal and four task files
    const before = digest();
    const logged = events(b.board).length;
    for (let k = 1; k <= renames; k++) {
      const r = run(['-e', `inject=rename:error=EIO:when=${k}`]);
      expect(r.status, `rename ${k}: ${r.stderr}`).toBe(1);
      expect(r.stderr.trim().split('\n'), `rename ${k}`).toHaveLength(1);
      expect(r.stderr).toMatch(/^tasks: cannot write .*: EIO .*nothing was changed$/m);
      expect(digest(), `rename ${k}`).toBe(before);
      expect(events(b.board)).toHaveLength(logged);
      expectSettled(b.board);
    }
    ok(b.root, ['done', '1'], { TASKS_OWNER: 'ann' });
    expect(readTaskFile(b.board, 2).blockedBy).toEqual([]);
    statSync(b.board);
  });

  it("writes in the order a power cut needs: each file fsync'd before its rename, the journal and its folder first, the folders and the log after", async () => {
    expect(hasStrace, 'strace is needed for this test (.ci/run installs it)').toBe(true);
    const b = staleBoard();
    await createTasks(b.board, ['hub', { subject: 'two', blockedBy: [1] }, { subject: 'three', blockedBy: [1] }]);
    await new TaskStore(b.board).claimTask(1, { owner: 'ann', lease: {} });
    const traced = spawnSync('strace', ['-f', '-qq', '-y', '-e', 'trace=fsync,rename,unlink,write', process.execPath, TASKS_BIN, 'done', '1'], {
      cwd: b.root,
      env: cleanEnv({ TASKS_OWNER: 'ann' }),
      encoding: 'utf8',
    });
    expect(traced.status, traced.stderr).toBe(0);
    // One syscall a line, in order; an fsync split by strace across threads counts when it started (it returns before the next step awaits it).
    const calls = traced.stderr
      .split('\n')
      .map((l) => l.replace(/^\[pid +\d+\] |^\d+ +/, ''))
      .filter((l) => /^(fsync|rename|unlink|write)\(/.test(l))
      .map((l) => {
        const fsync = /^fsync\(\d+<([^>]*)>/.exec(l);
        if (fsync) return { call: 'fsync', path: fsync[1] };
        const rename = /^rename\("([^"]*)", "([^"]*)"\)/.exec(l);
        if (rename) return { call: 'rename', path: rename[1], to: rename[2] };
        const unlink = /^unlink\("([^"]*)"\)/.exec(l);
        if (unlink) return { call: 'unlink', path: unlink[1] };
        const write = /^write\(\d+<([^>]*)>/.exec(l);
        return { call: 'write', path: write ? write[1] : '' };
      });
    const at = (test: (c: (typeof calls)[number]) => boolean) => calls.findIndex(test);
    const last = (test: (c: (typeof calls)[number]) => boolean) => calls.map(test).lastIndexOf(true);
    const renames = calls.filter((c) => c.call === 'rename');
    expect(renames.map((r) => r.to!.slice(b.board.length + 1))).toEqual(['.runtime/journal/board.json', 'task_1.json', 'task_2.json', 'task_3.json']);
    for (const r of renames)
      expect(
        at((c) => c.call === 'fsync' && c.path === r.path),
        `fsync before rename of ${r.path}`,
      ).toBeLessThan(calls.indexOf(r));
    const journalRename = calls.indexOf(renames[0]);
    const journalFolderSync = at((c) => c.call === 'fsync' && c.path === join(b.board, '.runtime', 'journal'));
    expect(journalFolderSync).toBeGreaterThan(journalRename);
    expect(journalFolderSync).toBeLessThan(calls.indexOf(renames[1]));
    const lastRename = calls.indexOf(renames.at(-1)!);
    const leaseRemoved = at((c) => c.call === 'unlink' && c.path.endsWith('leases/task_1.json'));
    expect(leaseRemoved).toBeGreaterThan(lastRename);
    const boardSync = last((c) => c.call === 'fsync' && c.path === b.board);
    expect(boardSync).toBeGreaterThan(lastRename);
    const logWrite = at((c) => c.call === 'write' && c.path.endsWith('events.jsonl'));
    expect(logWrite).toBeGreaterThan(boardSync);
    expect(at((c) => c.call === 'fsync' && c.path.endsWith('events.jsonl'))).toBeGreaterThan(logWrite);
    expect(at((c) => c.call === 'unlink' && c.path.endsWith('journal/board.json'))).toBeGreaterThan(logWrite);
  });
});

describe('a writer killed after its commit point', () => {
  it('has its change finished, events once, by the next command that takes its locks', async () => {
    const b = staleBoard();
    await createTasks(b.board, ['hub', { subject: 'two', blockedBy: [1] }]);
    const a = start(b.root, ['done', '1'], { TASKS_TEST_PAUSE: 'renamed' });
    await stopped(a.child, a.done);
    a.child.kill('SIGKILL');
    await a.done;
    // Renamed but not logged: the files say so already, the log does not.
    expect(readTaskFile(b.board, 1).status).toBe('completed');
    expect(events(b.board).filter((e) => e.type === 'completed')).toEqual([]);
    // Once its lock is stale (2 s here), doctor reports the change as unfinished rather than in flight. The lock's
    // age is watched in process (doctor, run every 250 ms until then, cost a Node start each), then doctor says so.
    const lockAge = () => Date.now() - (statSync(join(b.board, '.board.lock'), { throwIfNoEntry: false })?.mtimeMs ?? 0);
    await vi.waitFor(() => expect(lockAge()).toBeGreaterThan(2000), { timeout: 15_000, interval: 100 });
    await vi.waitFor(() => expect(tasks(b.root, ['doctor']).stdout).toMatch(/committed but not finished/), { timeout: 15_000, interval: 250 });
    ok(b.root, ['doctor', '--fix']);
    const log = events(b.board);
    expect(log.filter((e) => e.type === 'completed').map((e) => e.task)).toEqual([1]);
    expect(log.filter((e) => e.type === 'unblocked').map((e) => e.task)).toEqual([2]);
    expect(log.find((e) => e.type === 'recovered')).toMatchObject({ applied: [] });
    expectSettled(b.board);
    expect(tasks(b.root, ['doctor']).code).toBe(0);
  });
});
