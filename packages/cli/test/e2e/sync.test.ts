import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { TASKS_BIN, cleanEnv, collectOutput, tasks, tasksAsync } from '../helpers.js';
import { boardFiles as filesOf, copyRemote, createRemote, git, until as untilProgress, type RemoteFixture } from '../../../core/test/git-remote.js';

/**
 * Several machines, one board (`tasks sync`, `claim --sync`, `worker
 * --sync`): separate clones of one bare remote on this machine, sharing
 * nothing but the remote, as real processes. Every process a test starts is
 * stopped before its folder is removed, however the test ends.
 */

let fixture: RemoteFixture | undefined;
let root = '';
/** The size of the 4-machine board (SYNC_N overrides it). */
const N = Number(process.env.SYNC_N ?? 100);
/** The most clones a test takes. */
const CLONES = 4;
/** A bare remote and CLONES clones of it with `tasks init` done, made once: each test works on a copy. */
let template: RemoteFixture | undefined;
beforeAll(async () => {
  template = await createRemote({ prefix: 'dotasks-sync-template-' });
  for (let i = 1; i <= CLONES; i++) {
    const r = tasks(template.clone(`m${i}`), ['init']);
    if (r.code !== 0) throw new Error(r.stderr);
  }
});
afterAll(() => template?.cleanup());
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
  root = '';
});

/** A bare remote and `n` clones of it, each with `tasks init` done: a copy of the template, its clones' origin the copy's remote. */
async function clones(n: number): Promise<string[]> {
  if (n > CLONES) throw new Error(`the template has ${CLONES} clones`);
  fixture = copyRemote(template!, 'dotasks-sync-e2e-');
  root = fixture.root;
  return Array.from({ length: n }, (_, i) => join(root, `m${i + 1}`));
}

function boardFiles(dir: string): Record<string, string> {
  return filesOf(join(dir, '.tasks'));
}

describe('tasks sync across clones', () => {
  it('prints what came in and went out, and the same as JSON', async () => {
    const [a, b] = await clones(2);
    expect(tasks(a, ['create', 'shared work']).code).toBe(0);
    const out = tasks(a, ['sync']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^out  #1 created$/m);
    expect(out.stdout).toMatch(/synced with origin\/tasks at [0-9a-f]{10} \(0 in, 1 out\)/);
    const got = tasks(b, ['sync', '--json']);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ remote: 'origin', branch: 'tasks', incoming: [{ id: 1, what: 'created' }], outgoing: [] });
    expect(tasks(b, ['sync']).stdout).toMatch(/^up to date with origin\/tasks$/m);
    const bad = tasks(b, ['sync', '--remote', 'nowhere']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/no git remote named 'nowhere'/);
  });

  it('claim --sync: of two machines claiming one task at once, exactly one wins; the other exits 3 and holds nothing', async () => {
    const machines = await clones(4);
    expect(tasks(machines[0], ['create', 'contested']).code).toBe(0);
    expect(tasks(machines[0], ['sync']).code).toBe(0);
    for (const m of machines.slice(1)) expect(tasks(m, ['sync']).code).toBe(0);
    for (let round = 0; round < 2; round++) {
      const results = await Promise.all(machines.map((m, i) => tasksAsync(m, ['claim', '1', '--sync', '--owner', `agent-${i + 1}`, '--json'])));
      const winners = results.filter((r) => r.code === 0);
      expect(winners, results.map((r) => r.stderr).join('\n')).toHaveLength(1);
      for (const r of results.filter((x) => x.code !== 0)) expect(r.code, r.stderr).toBe(3);
      const winner = JSON.parse(winners[0].stdout).task.owner as string;
      for (const m of machines) expect(tasks(m, ['sync']).code).toBe(0);
      for (const m of machines) expect(JSON.parse(tasks(m, ['show', '1', '--json']).stdout)).toMatchObject({ status: 'in_progress', owner: winner });
      // Only the winner's machine has a claim record.
      const records = machines.filter(
        (m) => existsSync(join(m, '.tasks', '.runtime', 'leases')) && readdirSync(join(m, '.tasks', '.runtime', 'leases')).length > 0,
      );
      expect(records).toHaveLength(1);
      expect(tasks(machines[0], ['release', '1', '--force']).code).toBe(0);
      expect(tasks(machines[0], ['sync']).code).toBe(0);
      for (const m of machines) expect(tasks(m, ['sync']).code).toBe(0);
    }
  });

  it('a machine that dies holding a claim loses it within one lease: another clone reaps it and finishes the task', async () => {
    const [a, b] = await clones(2);
    expect(tasks(a, ['create', 'long job']).code).toBe(0);
    expect(tasks(a, ['sync']).code).toBe(0);
    expect(tasks(b, ['sync']).code).toBe(0);
    // A worker on machine a works #1 with a 2 s lease, renewing (and publishing) it while its command runs.
    const worker = fixture!.track(
      spawn(process.execPath, [TASKS_BIN, 'worker', '--sync', '--lease', '2', '--owner', 'agent-a', '--', 'sleep', '60'], {
        cwd: a,
        env: cleanEnv(),
        detached: true,
        stdio: 'ignore',
      }),
    );
    const claimedOnRemote = () => JSON.parse(tasks(b, ['show', '1', '--json']).stdout).owner === 'agent-a';
    await until(() => tasks(b, ['sync']).code === 0 && claimedOnRemote(), 20_000);
    // Alive: over twice the lease, b's syncs (a few a second, as a watcher's would be) leave the claim alone.
    const aliveUntil = Date.now() + 4500;
    while (Date.now() < aliveUntil) {
      const r = tasks(b, ['sync', '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).reaped).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(claimedOnRemote()).toBe(true);
    // The machine dies: no more renewals. Within a lease (and the clock grace) b reaps the task.
    process.kill(-worker.pid!, 'SIGKILL');
    let reaped: { id: number; owner: string }[] = [];
    await until(() => {
      const r = tasks(b, ['sync', '--json']);
      reaped = r.code === 0 ? JSON.parse(r.stdout).reaped : [];
      return reaped.length > 0;
    }, 20_000);
    expect(reaped).toMatchObject([{ id: 1, owner: 'agent-a' }]);
    expect(JSON.parse(tasks(b, ['show', '1', '--json']).stdout)).toMatchObject({ status: 'pending', owner: '' });
    const claim = tasks(b, ['claim', '1', '--sync', '--owner', 'agent-b']);
    expect(claim.code, claim.stderr).toBe(0);
    expect(tasks(b, ['done', '1', '--owner', 'agent-b']).code).toBe(0);
    expect(tasks(b, ['sync']).code).toBe(0);
    expect(tasks(a, ['sync']).code).toBe(0);
    expect(JSON.parse(tasks(a, ['show', '1', '--json']).stdout)).toMatchObject({ status: 'completed', owner: 'agent-b' });
  });

  it('watch --sync shares the board without anyone typing sync: changes go out at once and come in within the interval', async () => {
    const [a, b] = await clones(2);
    const watcher = fixture!.track(
      spawn(process.execPath, [TASKS_BIN, 'watch', '--sync', '--sync-interval', '1', '--json'], {
        cwd: b,
        env: cleanEnv(),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let out = '';
    watcher.stdout.on('data', (d) => (out += d));
    try {
      // From a to b: a syncs by hand, b's watcher brings it in.
      expect(tasks(a, ['create', 'made on a']).code).toBe(0);
      expect(tasks(a, ['sync']).code).toBe(0);
      await until(() => tasks(b, ['show', '1']).code === 0, 20_000);
      // From b to a: a change on b goes out by itself.
      expect(tasks(b, ['create', 'made on b']).code).toBe(0);
      await until(() => {
        tasks(a, ['sync']);
        return tasks(a, ['show', '2']).code === 0;
      }, 20_000);
      expect(JSON.parse(tasks(a, ['show', '2', '--json']).stdout).subject).toBe('made on b');
    } finally {
      watcher.kill('SIGTERM');
      await new Promise((r) => watcher.on('close', r));
    }
    // Read once the watcher is gone: the synchronous calls above keep its output waiting in the pipe.
    expect(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).type),
      out,
    ).toContain('synced');
  });

  it(
    `four machines, two workers each, work a random DAG of ${N} tasks: each task once, never before its blockers, all boards identical`,
    { timeout: 600_000 },
    async () => {
      const machines = await clones(4);
      const store = new TaskStore(join(machines[0], '.tasks'));
      let seed = 7;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
      const blockers = new Map<number, number[]>();
      for (let id = 1; id <= N; id++) {
        const deps = [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => 1 + Math.floor(random() * (id - 1))))].filter((d) => d >= 1 && d < id);
        blockers.set(id, deps);
        await store.createTask({ subject: `task ${id}`, blockedBy: deps });
      }
      for (const m of machines) expect(tasks(m, ['sync']).code).toBe(0);

      const log = join(root, 'work.log');
      writeFileSync(log, '');
      // Each line is one append (O_APPEND), as fs.appendFileSync would make it, from a shell: a Node process per task cost more than its task.
      const script = 'echo "start $TASK_ID $MACHINE" >> "$WORK_LOG"; echo "end $TASK_ID $MACHINE" >> "$WORK_LOG"';
      const workers = machines.flatMap((m, i) =>
        [1, 2].map((w) =>
          collectOutput(
            fixture!.track(
              spawn(process.execPath, [TASKS_BIN, 'worker', '--sync', '--idle-exit', '20', '--owner', `m${i + 1}-w${w}`, '--', 'sh', '-c', script], {
                cwd: m,
                // TASKS_DEBUG: an unexpected error comes with its stack (CI once saw a JSON syntax error with none).
                env: cleanEnv({ WORK_LOG: log, MACHINE: `m${i + 1}`, TASKS_DEBUG: '1' }),
                detached: true,
              }),
            ),
          ),
        ),
      );
      // On a busy machine this takes what it takes: the wait fails only when the work stops moving for a minute.
      let finished = false;
      const all = Promise.all(workers).finally(() => (finished = true));
      await untilProgress(() => finished, { what: 'the workers to work the board', ms: 60_000, every: 250, progress: () => readFileSync(log, 'utf8').length });
      const results = await all;
      for (const r of results) expect(r.code, r.stderr.slice(-2000)).toBe(0);
      for (const m of machines) expect(tasks(m, ['sync']).code).toBe(0);

      const lines = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '));
      const starts = lines.filter((l) => l[0] === 'start').map((l) => Number(l[1]));
      expect(starts.sort((x, y) => x - y)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
      const ended = new Set<number>();
      for (const [what, id] of lines) {
        if (what === 'end') ended.add(Number(id));
        else for (const d of blockers.get(Number(id))!) expect(ended.has(d), `#${id} started before its blocker #${d} ended`).toBe(true);
      }
      const files = machines.map(boardFiles);
      for (const f of files.slice(1)) expect(f).toEqual(files[0]);
      const board = new TaskStore(join(machines[3], '.tasks')).loadBoard();
      expect(board.tasks.every((t) => t.status === 'completed')).toBe(true);
      // Each machine did some of the work, and the branch tells the story.
      expect(new Set(lines.map((l) => l[2])).size).toBeGreaterThan(1);
      expect(git(fixture!.bare, 'log', '--format=%s', 'tasks')).toMatch(/completed #\d+/);

      // From every clone's events: each task has exactly one claim that was never withdrawn, over all machines.
      const kept = new Map<number, string[]>();
      for (const m of machines) {
        const events = readFileSync(join(m, '.tasks', '.runtime', 'events.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { type: string; task?: number; owner?: string; reason?: string });
        const held = new Map<number, string>();
        for (const e of events) {
          if (e.type === 'claimed' && e.task !== undefined) held.set(e.task, e.owner ?? '');
          if (e.type === 'released' && e.task !== undefined && /claimed on the remote/.test(e.reason ?? '')) held.delete(e.task);
        }
        for (const [task, owner] of held) kept.set(task, [...(kept.get(task) ?? []), owner]);
      }
      for (let id = 1; id <= N; id++) expect(kept.get(id), `claims of #${id} kept on the machines`).toHaveLength(1);
      // And from the branch's history: every task is completed in exactly one commit.
      const history = git(fixture!.bare, 'log', '--format=%B', 'tasks');
      for (let id = 1; id <= N; id++) expect(history.match(new RegExp(`^completed #${id}$`, 'gm')), `completions of #${id} on the branch`).toHaveLength(1);
    },
  );
});

/**
 * Polls until `check` holds; `ms` is what it takes on a quiet machine, and a busy one gets three times that. Each
 * check starts `tasks` processes (a sync, a show), so it looks twice a second, not ten times, which kept a core busy.
 */
function until(check: () => boolean, ms: number): Promise<void> {
  return untilProgress(check, { what: 'the machines to agree', ms: ms * 3, every: 500 });
}
