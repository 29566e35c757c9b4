import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TASKS_BIN, cleanEnv, createTasks, tasks, tasksAsync } from '../helpers.js';
import { git } from '../../../core/test/git-remote.js';
import { machines, ok, useMachines } from '../machines-helpers.js';

/**
 * Claims across machines by ref (docs/protocol.md, "Claims across
 * machines"), as real processes of the built `tasks` against `git daemon`
 * on 127.0.0.1: a claim is the push that creates the task's claim ref, so of
 * clones racing for tasks each task has exactly one holder, everywhere.
 */

const fixture = useMachines();

const show = (dir: string, id: number) => JSON.parse(tasks(dir, ['show', String(id), '--json']).stdout) as { status: string; owner: string };

/** The claims a clone kept, from its event log: claimed, and not released as a race lost on the remote. */
function keptClaims(dir: string): Map<number, string> {
  const held = new Map<number, string>();
  for (const line of readFileSync(join(dir, '.tasks', '.runtime', 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')) {
    const e = JSON.parse(line) as { type: string; task?: number; owner?: string; reason?: string };
    if (e.type === 'claimed' && e.task !== undefined) held.set(e.task, e.owner ?? '');
    if (e.type === 'released' && e.task !== undefined && /claimed on the remote/.test(e.reason ?? '')) held.delete(e.task);
  }
  return held;
}

/** The claim refs on the remote, by task. */
function remoteClaimRefs(): Map<number, string> {
  const listed = git(fixture().bare, 'for-each-ref', '--format=%(objectname) %(refname)', 'refs/dotasks/claims/tasks/');
  return new Map(
    listed
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [commit, ref] = l.split(' ');
        return [Number(/task_(\d+)$/.exec(ref)![1]), commit];
      }),
  );
}

describe('claims across machines by ref', () => {
  it('four clones racing claim --next --sync over git daemon: every task is claimed exactly once, and every clone agrees who holds it', async () => {
    const dirs = await machines(4, { daemon: true });
    const N = 8;
    // Made in process (creation is not what this is about): a `tasks create` each is a Node start.
    await createTasks(
      join(dirs[0], '.tasks'),
      Array.from({ length: N }, (_, i) => `task ${i + 1}`),
    );
    for (const dir of dirs) ok(dir, ['sync']);
    // Each clone claims with a new owner each time (an owner holds one task at a time) until nothing is ready.
    const claimedBy = new Map<number, string[]>();
    await Promise.all(
      dirs.map(async (dir, m) => {
        for (let n = 1; ; n++) {
          const owner = `m${m + 1}-a${n}`;
          const r = await tasksAsync(dir, ['claim', '--next', '--sync', '--owner', owner, '--json']);
          if (r.code === 3) return;
          expect(r.code, r.stderr).toBe(0);
          const { task } = JSON.parse(r.stdout) as { task: { id: number; owner: string } };
          expect(task.owner).toBe(owner);
          claimedBy.set(task.id, [...(claimedBy.get(task.id) ?? []), owner]);
        }
      }),
    );
    for (let id = 1; id <= N; id++) expect(claimedBy.get(id), `claims of #${id} that succeeded`).toHaveLength(1);
    for (let round = 0; round < 2; round++) for (const dir of dirs) ok(dir, ['sync']);
    // Every clone's file says the one winner holds it; the event logs of all clones keep exactly one claim of each.
    for (const dir of dirs) {
      // One listing a clone (a `tasks show` of every task costs a process each).
      const listed = new Map(
        (JSON.parse(tasks(dir, ['list', '--json']).stdout) as { tasks: { id: number; status: string; owner: string }[] }).tasks.map((t) => [t.id, t]),
      );
      for (let id = 1; id <= N; id++) expect(listed.get(id), `#${id} in ${dir}`).toMatchObject({ status: 'in_progress', owner: claimedBy.get(id)![0] });
    }
    const kept = new Map<number, string[]>();
    for (const dir of dirs) for (const [id, owner] of keptClaims(dir)) kept.set(id, [...(kept.get(id) ?? []), owner]);
    for (let id = 1; id <= N; id++) expect(kept.get(id), `claims of #${id} kept over all clones' events`).toEqual(claimedBy.get(id));
    // And on the remote: one claim ref per task, holding the winner's claim.
    const refs = remoteClaimRefs();
    expect([...refs.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    for (const [id, commit] of refs)
      expect(JSON.parse(git(fixture().bare, 'show', `${commit}:claim.json`)), `the claim ref of #${id}`).toMatchObject({
        task: id,
        owner: claimedBy.get(id)![0],
      });
  });

  it('two clones racing claim ID --sync for one task: exactly one wins, the other exits 3 and holds nothing; a completion frees nobody to claim it again', async () => {
    const [a, b] = await machines(2, { daemon: true });
    const rounds = 3;
    await createTasks(
      join(a, '.tasks'),
      Array.from({ length: rounds }, (_, i) => `contested ${i + 1}`),
    );
    ok(a, ['sync']);
    ok(b, ['sync']);
    for (let id = 1; id <= rounds; id++) {
      const results = await Promise.all([a, b].map((dir, i) => tasksAsync(dir, ['claim', String(id), '--sync', '--owner', `agent-${i + 1}-${id}`, '--json'])));
      const winners = results.filter((r) => r.code === 0);
      expect(winners, results.map((r) => r.stderr).join('\n')).toHaveLength(1);
      const loser = results.find((r) => r.code !== 0)!;
      expect(loser.code, loser.stderr).toBe(3);
      expect(JSON.parse(loser.stdout)).toMatchObject({ claimed: false, reason: 'already_claimed', task: id });
      const winner = results.indexOf(winners[0]);
      const [won, lost] = winner === 0 ? [a, b] : [b, a];
      const owner = `agent-${winner + 1}-${id}`;
      ok(lost, ['sync']);
      expect(show(lost, id)).toMatchObject({ status: 'in_progress', owner });
      expect(keptClaims(lost).has(id)).toBe(false);
      // Finished and synced: the ref stays a while as a marker of the closed task, and the loser's claim of it is refused.
      ok(won, ['done', String(id), '--owner', owner]);
      ok(won, ['sync']);
      expect(JSON.parse(git(fixture().bare, 'show', `${remoteClaimRefs().get(id)}:claim.json`))).toMatchObject({ task: id, owner, closed: true });
      const again = tasks(lost, ['claim', String(id), '--sync', '--owner', `late-${id}`]);
      expect(again.code, again.stderr).not.toBe(0);
      expect(show(lost, id)).toMatchObject({ status: 'completed', owner });
    }
  });

  it('a claim --sync starts no git to write objects and none for maintenance, and fewer gits in all (27; it started 41)', () => {
    expect(spawnSync('strace', ['-V']).status, 'strace is needed for this test (.ci/run installs it)').toBe(0);
    return (async () => {
      const [a, b] = await machines(2, { daemon: true });
      await createTasks(join(a, '.tasks'), ['one', 'two', 'three']);
      ok(a, ['sync']);
      ok(b, ['sync']);
      ok(a, ['claim', '1', '--sync', '--owner', 'agent-a']);
      // b claims the next task: its look brings a's claim ref in (the branch has it too), its push creates the ref of #2.
      const traced = spawnSync(
        'strace',
        ['-f', '-qq', '-e', 'trace=execve', process.execPath, TASKS_BIN, 'claim', '--next', '--sync', '--owner', 'agent-b', '--json'],
        {
          cwd: b,
          env: cleanEnv(),
          encoding: 'utf8',
          maxBuffer: 1 << 26,
        },
      );
      expect(traced.status, traced.stderr.slice(-2000)).toBe(0);
      expect(JSON.parse(traced.stdout)).toMatchObject({ task: { id: 2, owner: 'agent-b' } });
      const gits = traced.stderr
        .split('\n')
        .map((line) => /execve\("[^"]*\/git(?:-[a-z-]+)?", \[([^\]]*)\].* = 0$/.exec(line)?.[1])
        .filter((argv): argv is string => argv !== undefined)
        .map((argv) => argv.split(', ').slice(0, 2).join(' ').replace(/"/g, ''));
      expect(gits.filter((g) => /hash-object|mktree|maintenance| gc$/.test(g))).toEqual([]);
      expect(gits.length, gits.join('\n')).toBeLessThanOrEqual(27);
    })();
  });
});
