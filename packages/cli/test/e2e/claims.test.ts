import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { cleanEnv, collectOutput, readTaskFile, tasks, tasksAsync, tempBoard, type RunResult, createTasks } from '../helpers.js';
import { readEventLog } from '../agents-helpers.js';

/**
 * A racer: one process that loads the CLI's claim command once, then for
 * each round waits for that round's go file and claims the round's task,
 * writing what the command returned (its exit status, stdout and stderr as
 * the CLI would print them) to a result file. Eight of these race fifty
 * times without paying for fifty times eight process start-ups.
 */
const RACER = `
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
const [dir, cliDist, rounds, k] = process.argv.slice(2);
const { claim } = await import(new URL('commands/claim.js', cliDist).href);
const { exitCodeFor } = await import(new URL('run.js', cliDist).href);
writeFileSync(\`\${dir}/ready-\${k}\`, '');
for (let round = 1; round <= Number(rounds); round++) {
  // A test that failed (its folder removed) must not leave racers polling for ever.
  while (!existsSync(\`\${dir}/go-\${round}\`)) {
    if (!existsSync(dir)) process.exit(1);
    await sleep(1);
  }
  let result;
  try {
    const out = await claim({ id: String(round), owner: \`racer-\${round}-\${k}\`, cwd: dir });
    result = { code: out.exitCode ?? 0, stdout: out.text ?? '', stderr: (out.warnings ?? []).join('\\n') };
  } catch (error) {
    result = { code: exitCodeFor(error.code), stdout: '', stderr: \`tasks: \${error.message}\` };
  }
  // Complete before it appears: the test reads it as soon as it exists.
  writeFileSync(\`\${dir}/partial-\${round}-\${k}\`, JSON.stringify(result));
  renameSync(\`\${dir}/partial-\${round}-\${k}\`, \`\${dir}/result-\${round}-\${k}.json\`);
}
`;

describe('claims (real processes)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('8 processes racing for the same ready task: exactly one wins, 50 times over', { timeout: 900_000 }, async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const ROUNDS = 50;
    const RACERS = 8;
    await new TaskStore(t.board).batchWrite(Array.from({ length: ROUNDS }, (_, i) => ({ subject: `Task ${i + 1}` })));
    const racer = join(t.root, 'racer.mjs');
    writeFileSync(racer, RACER);
    const cliDist = new URL('../../dist/', import.meta.url).href;
    // One owner per racer and round: single-in-progress is on, and winners keep their task.
    const racers = Array.from({ length: RACERS }, (_, k) =>
      collectOutput(spawn(process.execPath, [racer, t.root, cliDist, String(ROUNDS), String(k)], { cwd: t.root, env: cleanEnv() })),
    );
    await vi.waitFor(() => expect(readdirSync(t.root).filter((n) => n.startsWith('ready-'))).toHaveLength(RACERS), { timeout: 60_000, interval: 10 });
    for (let round = 1; round <= ROUNDS; round++) {
      writeFileSync(join(t.root, `go-${round}`), '');
      const files = Array.from({ length: RACERS }, (_, k) => join(t.root, `result-${round}-${k}.json`));
      await vi.waitFor(() => expect(files.every((f) => existsSync(f))).toBe(true), { timeout: 60_000, interval: 5 });
      const settled = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as RunResult);
      const winners = settled.filter((r) => r.code === 0);
      const losers = settled.filter((r) => r.code !== 0);
      expect(winners, `round ${round}: ${settled.map((r) => r.stderr).join('|')}`).toHaveLength(1);
      for (const loser of losers) {
        expect(loser.code, loser.stderr).toBe(3);
        expect(loser.stderr).toContain('already_claimed');
      }
      const winner = /owner: (racer-\d+-\d)/.exec(winners[0].stdout)?.[1];
      expect(readTaskFile(t.board, round)).toMatchObject({ status: 'in_progress', owner: winner });
    }
    for (const r of await Promise.all(racers)) expect(r.code, r.stderr).toBe(0);
    const claimed = readEventLog(t.board).filter((e) => e.type === 'claimed');
    expect(claimed.map((e) => e.task)).toEqual(Array.from({ length: ROUNDS }, (_, i) => i + 1));
  });

  it('claim --next moves on to the next ready task when it loses a race', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(
      t.board,
      Array.from({ length: 8 }, (_, i) => `Task ${i + 1}`),
    );
    const results = await Promise.all(Array.from({ length: 8 }, (_, k) => tasksAsync(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: `agent-${k}` })));
    expect(results.map((r) => r.code)).toEqual(Array(8).fill(0));
    const ids = results.map((r) => (JSON.parse(r.stdout) as { task: { id: number } }).task.id).sort((a, b) => a - b);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const none = tasks(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: 'late' });
    expect(none.code).toBe(3);
    expect(JSON.parse(none.stdout)).toMatchObject({ claimed: false, reason: 'nothing_ready' });
  });

  it('prints the claimed task or the reason with --json; owner_busy names the task held', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['One', 'Two', { subject: 'Three', blockedBy: [1] }]);
    const ok = tasks(t.root, ['claim', '1', '--json', '--owner', 'alice']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      claimed: true,
      alreadyHeld: false,
      task: { id: 1, status: 'in_progress', owner: 'alice' },
      lease: { owner: 'alice' },
    });
    const again = tasks(t.root, ['claim', '1', '--json', '--owner', 'alice']);
    expect(JSON.parse(again.stdout)).toMatchObject({ claimed: true, alreadyHeld: true });

    const busy = tasks(t.root, ['claim', '2', '--json', '--owner', 'alice']);
    expect(busy.code).toBe(1);
    expect(JSON.parse(busy.stdout)).toMatchObject({ claimed: false, reason: 'owner_busy', task: 2, heldTask: 1, owner: 'alice' });
    expect(busy.stderr).toContain('#1');

    const lost = tasks(t.root, ['claim', '1', '--owner', 'bob']);
    expect(lost.code).toBe(3);
    expect(lost.stderr).toMatch(/already_claimed: task #1 is already claimed by alice/);

    const blocked = tasks(t.root, ['claim', '3', '--json', '--owner', 'bob']);
    expect(blocked.code).toBe(1);
    expect(JSON.parse(blocked.stdout)).toMatchObject({ reason: 'blocked', blockedBy: [1] });

    const missing = tasks(t.root, ['claim', '9', '--json', '--owner', 'bob']);
    expect(JSON.parse(missing.stdout)).toMatchObject({ claimed: false, reason: 'not_found', task: 9 });
  });

  it("releasing or completing someone else's task needs --force", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['One', 'Two']);
    tasks(t.root, ['claim', '1', '--owner', 'alice']);
    tasks(t.root, ['claim', '2', '--owner', 'carol']);

    const refused = tasks(t.root, ['release', '1', '--owner', 'bob']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('belongs to alice');
    expect(refused.stderr).toContain('--force');
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice' });

    const forced = tasks(t.root, ['release', '1', '--force', '--owner', 'bob']);
    expect(forced.code).toBe(0);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
    expect(existsSync(join(t.board, '.runtime', 'leases', 'task_1.json'))).toBe(false);
    expect(readEventLog(t.board).at(-1)).toMatchObject({ type: 'released', task: 1, owner: 'bob', previousOwner: 'alice' });

    expect(tasks(t.root, ['done', '2', '--owner', 'bob']).code).toBe(1);
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'in_progress' });
    expect(tasks(t.root, ['done', '2', '--force', '--owner', 'bob']).code).toBe(0);
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'completed' });

    const own = tasks(t.root, ['claim', '1', '--owner', 'alice']);
    expect(own.code).toBe(0);
    expect(tasks(t.root, ['release', '1', '--owner', 'alice']).code).toBe(0);
  });

  it('whoami: --owner, TASKS_OWNER, then the user name', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(JSON.parse(tasks(t.root, ['whoami', '--json', '--owner', 'flag-owner'], { TASKS_OWNER: 'env-owner' }).stdout)).toEqual({
      owner: 'flag-owner',
      source: '--owner',
    });
    expect(tasks(t.root, ['whoami'], { TASKS_OWNER: 'env-owner' }).stdout.trim()).toBe('env-owner (from TASKS_OWNER)');
    expect(JSON.parse(tasks(t.root, ['whoami', '--json'], { USER: 'someone' }).stdout)).toEqual({ owner: 'someone', source: 'user' });
  });

  it('heartbeat renews a lease; only the owner can', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['One']);
    tasks(t.root, ['claim', '1', '--owner', 'alice', '--lease', '60']);
    const leaseFile = join(t.board, '.runtime', 'leases', 'task_1.json');
    const before = JSON.parse(readFileSync(leaseFile, 'utf8')) as { expiresAt: string; claimedAt: string };
    const renewed = tasks(t.root, ['heartbeat', '1', '--owner', 'alice', '--lease', '600', '--json']);
    expect(renewed.code).toBe(0);
    const after = JSON.parse(readFileSync(leaseFile, 'utf8')) as { expiresAt: string; claimedAt: string };
    expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.parse(before.expiresAt) + 500_000);
    expect(after.claimedAt).toBe(before.claimedAt);
    expect(JSON.parse(renewed.stdout).leases[0]).toMatchObject({ task: 1, owner: 'alice' });

    const other = tasks(t.root, ['heartbeat', '1', '--owner', 'bob']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('not in progress for bob');
    // Without an id: every lease the owner holds.
    expect(tasks(t.root, ['heartbeat', '--owner', 'alice']).stdout).toContain('renewed #1');
  });

  it('reap --dry-run shows an expired lease without touching it; reap releases it with a reaped event', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['One', 'Two']);
    // What 'tasks claim 1 --owner crashed --lease 1' and 'tasks start 2 --owner human' do, in process.
    const store = new TaskStore(t.board);
    await store.claimTask(1, { owner: 'crashed', lease: { ttlSeconds: 1 } });
    await store.startTask(2, { owner: 'human', actor: 'human' });
    // The lease's end read from its record (a reap --dry-run every 200 ms cost a Node start each), then reap says so.
    const expiresAt = (JSON.parse(readFileSync(join(t.board, '.runtime', 'leases', 'task_1.json'), 'utf8')) as { expiresAt: string }).expiresAt;
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(Date.parse(expiresAt)), { timeout: 30_000, interval: 100 });
    const dry = tasks(t.root, ['reap', '--dry-run', '--json']);
    expect(JSON.parse(dry.stdout)).toEqual({ dryRun: true, reaped: [{ task: 1, owner: 'crashed', reason: 'expired' }] });
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'in_progress', owner: 'crashed' });
    const reaped = tasks(t.root, ['reap', '--owner', 'janitor']);
    expect(reaped.code).toBe(0);
    expect(reaped.stdout).toContain('released #1 (owner crashed: lease expired)');
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
    // A person's claim has no lease that expires.
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'in_progress', owner: 'human' });
    expect(readEventLog(t.board).filter((e) => e.type === 'reaped')).toMatchObject([
      { task: 1, owner: 'janitor', previousOwner: 'crashed', reason: 'expired' },
    ]);
    expect(tasks(t.root, ['reap']).stdout.trim()).toBe('nothing to reap');
  });

  it('reap releases a claim whose process is gone', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['One']);
    const gone = spawn(process.execPath, ['-e', '0']);
    const pid = gone.pid!;
    await new Promise((resolve) => gone.on('close', resolve));
    expect(tasks(t.root, ['claim', '1', '--owner', 'agent', '--pid', String(pid)]).code).toBe(0);
    const r = tasks(t.root, ['reap', '--json']);
    expect(JSON.parse(r.stdout).reaped).toEqual([{ task: 1, owner: 'agent', reason: 'process_gone' }]);
  });

  it('events --since prints only newer events, one JSON object a line', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['One', 'Two']);
    const all = tasks(t.root, ['events', '--json'])
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number });
    expect(all.map((e) => e.seq)).toEqual([1, 2]);
    tasks(t.root, ['claim', '2', '--owner', 'alice']);
    const newer = tasks(t.root, ['events', '--since', '2', '--json'])
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(newer).toMatchObject([{ seq: 3, type: 'claimed', task: 2, owner: 'alice' }]);
    expect(tasks(t.root, ['events', '--since', '3']).stdout.trim()).toBe('(no events yet)');
    expect(tasks(t.root, ['events', '--since', '2']).stdout).toMatch(/^3 \S+ claimed #2 by alice/);
  });
});
