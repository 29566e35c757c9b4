import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTaskFile, tasks, tasksAsync } from '../helpers.js';
import { until } from '../../../core/test/git-remote.js';
import { LIBFAKETIME, machines, ok, useMachines, watchSync } from '../machines-helpers.js';

/**
 * Clocks that disagree, as real processes: one clone ten minutes fast or
 * slow under libfaketime while claims and heartbeats race, and a fast clone
 * that dies holding a task.
 */

const fixture = useMachines();

describe('clocks that disagree', () => {
  it.each([
    ['ten minutes fast', '+10m'],
    ['ten minutes slow', '-10m'],
  ])('one of three clones %s: claims and heartbeats race, and no task ever has two holders', async (_what, offset) => {
    if (!existsSync(LIBFAKETIME)) throw new Error(`${LIBFAKETIME} is missing: apt-get install -y faketime (as .ci/run does)`);
    const dirs = await machines(3);
    const skewed = { LD_PRELOAD: LIBFAKETIME, FAKETIME: offset, FAKETIME_DONT_RESET: '1' };
    for (let i = 1; i <= 3; i++) ok(dirs[0], ['create', `task ${i}`]);
    for (const dir of dirs) ok(dir, ['sync']);
    const log = join(fixture().root, 'work.log');
    writeFileSync(log, '');
    const script = join(fixture().root, 'work.cjs');
    // Each task's work takes longer than its lease (4 s), so only heartbeats keep it; renewed every 1.3 s, and
    // released by another clone only after it saw no renewal for 6 s.
    writeFileSync(
      script,
      "const fs = require('fs'); fs.appendFileSync(process.env.WORK_LOG, `start ${process.env.TASK_ID}\\n`); setTimeout(() => fs.appendFileSync(process.env.WORK_LOG, `end ${process.env.TASK_ID}\\n`), 4500);\n",
    );
    const workers = dirs.map((dir, i) =>
      tasksAsync(dir, ['worker', '--sync', '--lease', '4', '--idle-exit', '2', '--owner', `w${i + 1}`, '--', process.execPath, script], {
        WORK_LOG: log,
        ...(i === 2 ? skewed : {}),
      }),
    );
    const results = await Promise.all(workers);
    for (const r of results) expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    const starts = lines.filter((l) => l.startsWith('start ')).map((l) => Number(l.split(' ')[1]));
    // Every task was worked exactly once: no claim was taken from a live holder. A failure shows each clone's
    // claims, reaps and losses, to tell a claim taken from a live holder from two winners of one race.
    const story = dirs.map((dir, i) => `clone ${i + 1}:\n${claimStory(dir)}`).join('\n');
    expect(
      starts.sort((x, y) => x - y),
      story,
    ).toEqual([1, 2, 3]);
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
    // The waits read the honest clone's task file (a `tasks show` per look, ten a second, kept a core busy); the
    // board is then read once through tasks.
    const task = () => readTaskFile(join(honest, '.tasks'), 1);
    await until(() => task().owner === 'fast-agent', { what: 'the claim to arrive' });
    const arrived = Date.now();
    await until(() => task().status === 'pending', { what: 'the honest clone to reap #1', ms: 60_000 });
    const reapedAfter = (Date.now() - arrived) / 1000;
    expect(JSON.parse(tasks(honest, ['show', '1', '--json']).stdout)).toMatchObject({ status: 'pending', owner: '' });
    // Not before the honest clone saw the claim unrenewed for its whole lease, by its own clock …
    expect(reapedAfter).toBeGreaterThanOrEqual(3);
    // … and nowhere near the ten minutes the fast clone's own expiresAt says (lease + grace + a few sync intervals).
    expect((Date.now() - published) / 1000).toBeLessThan(60);
    expect(readFileSync(join(honest, '.tasks', '.runtime', 'events.jsonl'), 'utf8')).toMatch(/"type":"reaped"/);
  });
});

/** One clone's claims, reaps, renewals refused and losses, from its event log, a line each. */
function claimStory(dir: string): string {
  const log = join(dir, '.tasks', '.runtime', 'events.jsonl');
  if (!existsSync(log)) return '  (no event log)';
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => /"type":"(claimed|reaped|released|work\.stopped|synced|completed)"/.test(line))
    .map((line) => `  ${line.slice(0, 400)}`)
    .join('\n');
}
