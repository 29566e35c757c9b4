import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTasks, readTaskFile } from '../helpers.js';
import { git, startTasks, tempRepo, type TasksProcess } from '../agents-helpers.js';

/**
 * The whole pipeline, end to end, with real processes and real git
 * (docs/protocol.md, "Review" and "The way back to main"): three workers
 * work a 20-task DAG in worktrees, each task's check passes and it waits for
 * review; one reviewer worker with --merge lands each one (its merge is the
 * approval), so main takes the branches one at a time, and a dependent is
 * claimed only once its blockers are in main, from a base that holds them.
 */

const IDENTITY = {
  GIT_AUTHOR_NAME: 'dotasks test',
  GIT_AUTHOR_EMAIL: 'test@dotasks.invalid',
  GIT_COMMITTER_NAME: 'dotasks test',
  GIT_COMMITTER_EMAIL: 'test@dotasks.invalid',
};

const COUNT = 20;
const WORKERS = ['w1', 'w2', 'w3'];

/** The DAG: three chains (each task waits for the one three before it) that cross at every fifth task. */
function blockersOf(id: number): number[] {
  const out = id > 3 ? [id - 3] : [];
  if (id % 5 === 0) out.push(id - 4);
  return out;
}

/** `git merge-base --is-ancestor`: whether `commit` is in the history of `of`. */
function isAncestor(repo: string, commit: string, of: string): boolean {
  return spawnSync('git', ['merge-base', '--is-ancestor', commit, of], { cwd: repo }).status === 0;
}

interface LoggedEvent {
  seq: number;
  type: string;
  task?: number;
  owner?: string;
}

const running: TasksProcess[] = [];
let cleanup = () => {};
afterEach(async () => {
  const left = running.splice(0);
  for (const p of left) p.child.kill('SIGKILL');
  await Promise.all(left.map((p) => p.done.catch(() => undefined)));
  cleanup();
  cleanup = () => {};
});

describe('the pipeline: workers, a reviewer that merges, main', () => {
  it('20 tasks in a DAG: each reviewed by the reviewer, merged into main in an order the DAG allows, completed once, started from its blockers', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    // The check logs each run (a passing check writes no event): the task, where it ran, and whether the task waited for review then.
    const checks = join(r.root, 'checks.log');
    const verify = `echo "$TASK_ID $(pwd -P) $(grep -c '"state": *"waiting"' "$TASKS_DIR/task_$TASK_ID.json")" >> '${checks}' && test -s "task_$TASK_ID.txt"`;
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ review: true, verify }) + '\n');
    await createTasks(
      r.board,
      Array.from({ length: COUNT }, (_, i) => ({ subject: `Task ${i + 1}`, blockedBy: blockersOf(i + 1) })),
    );
    // The work: a file named after the task, committed on its branch in its worktree.
    const work = 'echo "$TASK_ID" > "task_$TASK_ID.txt" && git add "task_$TASK_ID.txt" && git commit -q -m "work of #$TASK_ID"';
    for (const owner of WORKERS) running.push(startTasks(r.repo, ['worker', '--worktree', '--owner', owner, '--idle-exit', '120', '--', work], IDENTITY));
    // The review: the work is there, in the task's worktree.
    const reviewer = startTasks(
      r.repo,
      ['worker', '--review', '--merge', '--owner', 'rev', '--json', '--idle-exit', '120', '--', 'test -s "task_$TASK_ID.txt"'],
      IDENTITY,
    );
    running.push(reviewer);

    const ids = Array.from({ length: COUNT }, (_, i) => i + 1);
    const allCompleted = vi.waitFor(() => expect(ids.filter((id) => readTaskFile(r.board, id).status !== 'completed')).toEqual([]), {
      timeout: 120_000,
      interval: 200,
    });
    // A worker or the reviewer that fails ends the wait at once, with what it said.
    const failed = running.map((p) =>
      p.done.then((end) => {
        if (end.code !== 0) throw new Error(`a worker exited ${end.code}: ${end.stderr.trim().split('\n').slice(-12).join('\n')}`);
        return new Promise<never>(() => {});
      }),
    );
    await Promise.race([allCompleted, ...failed]);
    // With nothing left, every worker and the reviewer stop by themselves.
    for (const p of running) {
      const end = await p.done;
      expect(end.code, end.stderr).toBe(0);
    }

    const mainLog = git(r.repo, ['log', '--format=%H %s', 'main']).trim().split('\n');
    const workCommit = (id: number) => mainLog.find((l) => l.endsWith(` work of #${id}`))?.split(' ')[0];
    const merged = new Map<number, string>();
    for (const id of ids) {
      const task = readTaskFile(r.board, id) as { owner: string; review: unknown; metadata: { merged: { into: string; commit: string } } };
      // Worked by a worker, approved by the reviewer (the merge was the approval), merged into main.
      expect(WORKERS).toContain(task.owner);
      expect(task.review).toMatchObject({ state: 'approved', by: 'rev' });
      expect(task.metadata.merged.into).toBe('main');
      merged.set(id, task.metadata.merged.commit);
      expect(workCommit(id), `main holds the work of #${id}`).toBeDefined();
      expect(git(r.repo, ['show', `main:task_${id}.txt`])).toBe(`${id}\n`);
    }

    // Completed exactly once each, approved once each, by the merge.
    const events = readFileSync(join(r.board, '.runtime', 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LoggedEvent);
    const count = (type: string, id: number) => events.filter((e) => e.type === type && e.task === id).length;
    expect(ids.map((id) => count('completed', id))).toEqual(ids.map(() => 1));
    expect(ids.map((id) => count('review.approved', id))).toEqual(ids.map(() => 1));

    // main's first-parent history: one merge commit per task, one after the other.
    const merges = git(r.repo, ['log', '--first-parent', '--reverse', '--format=%H %s', 'main'])
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => {
        const [sha, ...subject] = l.split(' ');
        return { sha, id: Number(/^Merge task\/(\d+) into main/.exec(subject.join(' '))?.[1]) };
      });
    expect(merges.map((m) => m.id).sort((a, b) => a - b)).toEqual(ids);
    for (const m of merges) expect(merged.get(m.id)).toBe(m.sha);
    const position = new Map(merges.map((m, i) => [m.id, i]));

    const seqOf = (type: string, id: number) => events.find((e) => e.type === type && e.task === id)!.seq;
    for (const waiter of ids)
      for (const blocker of blockersOf(waiter)) {
        const edge = `#${blocker} → #${waiter}`;
        // Merged in an order the DAG allows.
        expect(position.get(blocker)!, edge).toBeLessThan(position.get(waiter)!);
        // The waiter's work was made on top of its blocker's merge: its branch started from a main that held it.
        expect(isAncestor(r.repo, merged.get(blocker)!, workCommit(waiter)!), edge).toBe(true);
        // And it was claimed only after its blocker completed.
        expect(seqOf('claimed', waiter), edge).toBeGreaterThan(seqOf('completed', blocker));
      }

    // Each task's check ran twice: in its worktree before it went into review (the worker's), then, while it waited, in the
    // merge's scratch checkout of the merged commit, gone now; nowhere else, never in the main checkout.
    const runs = readFileSync(checks, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    // Where a worker's claim puts it: "worktreeDir" by default, next to the repository (its record went with it).
    const worktreeOf = (id: number) => join(r.root, 'repo.worktrees', `task-${id}`);
    for (const id of ids) {
      const mine = runs.filter(([task]) => task === String(id));
      expect(
        mine.map(([, cwd, waiting]) => [cwd === worktreeOf(id) ? 'worktree' : cwd, waiting]),
        `the checks of #${id}`,
      ).toEqual([
        ['worktree', '0'],
        [expect.not.stringMatching(`^${r.root}`), '1'],
      ]);
      expect(existsSync(mine[1][1]), `#${id}'s scratch checkout`).toBe(false);
    }
    expect(runs).toHaveLength(2 * COUNT);

    const reviews = reviewer.done.then((d) => d.stdout);
    const stopped = (await reviews)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; approved?: number[]; rejected?: number[] })
      .find((e) => e.type === 'reviewer.stopped');
    expect(stopped).toMatchObject({ rejected: [] });
    expect([...stopped!.approved!].sort((a, b) => a - b)).toEqual(ids);
  }, 180_000);
});
