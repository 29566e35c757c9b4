import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore, inReview } from '@dotasks/core';
import { createTasks, readTaskFile, tasks, tasksAsync, tempBoard } from '../helpers.js';
import { git, isAlive, startTasks, tempRepo } from '../agents-helpers.js';

/** Generous: two cores are shared with other builds and tests. */
const WAIT = { timeout: 30_000, interval: 50 };

type Note = { at: string; owner: string; text: string };
const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * A board that requires review, with a task finished by each of `owners` (each now waiting for review), made in
 * process through the calls `tasks create`, `tasks start --owner` and `tasks done --owner` make: the reviewers are
 * the subject (three processes a task made the two reviewers' board of eight cost 2 s of CPU).
 */
async function boardInReview(board: string, owners: string[]): Promise<void> {
  writeFileSync(join(board, 'config.json'), JSON.stringify({ review: true }));
  const store = new TaskStore(board);
  const ids = await createTasks(
    board,
    owners.map((_, i) => `Task ${i + 1}`),
  );
  for (const [i, owner] of owners.entries()) {
    await store.startTask(ids[i], { owner, actor: owner });
    const done = await store.finishTask(ids[i], { actor: owner });
    if (!inReview(done.task)) throw new Error(`#${ids[i]} did not enter review`);
  }
}

describe('reviewer workers: tasks worker --review -- CMD (real processes)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it("approves a second owner's task on exit 0 (its dependents unblock), sends another back with the output's tail, never reviews its own", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await boardInReview(t.board, ['alice', 'carol', 'rev']);
    tasks(t.root, ['create', 'After 1', '--blocked-by', '1']);
    // #1 was worked in a worktree of its own: the review runs there.
    mkdirSync(join(t.root, 'wt-1'));
    tasks(t.root, ['update', '1', '--meta', 'worktree=wt-1', '--owner', 'alice']);
    const log = join(t.root, 'reviews.log');
    const command = `echo "$TASK_ID $TASKS_OWNER $TASK_AUTHOR $(pwd)" >> ${log}; echo "looked at $TASK_SUBJECT"; printf '\\033[31mred\\033[0m\\n'; test "$TASK_ID" = 1`;

    const r = await tasksAsync(t.root, ['worker', '--review', '--owner', 'rev', '--json', '--idle-exit', '0', '--', command]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([`1 rev alice ${join(t.root, 'wt-1')}`, `2 rev carol ${t.root}`]);

    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', owner: 'alice', review: { state: 'approved', by: 'rev' } });
    expect(readTaskFile(t.board, 4).blockedBy).toEqual([]);
    const sentBack = readTaskFile(t.board, 2);
    expect(sentBack).toMatchObject({ status: 'pending', owner: 'carol', review: { state: 'rejected', by: 'rev' } });
    const note = (sentBack.notes as Note[]).at(-1)!;
    expect(note.owner).toBe('rev');
    // The tail, bounded and with its escape sequences removed, is the note.
    expect(note.text).toBe('sent back in review: the review command failed (exit 1); its output ended:\nlooked at Task 2\nred');
    // Its own owner's work is never reviewed by it.
    expect(readTaskFile(t.board, 3)).toMatchObject({ status: 'in_progress', owner: 'rev', review: { state: 'waiting' } });

    const events = jsonLines(r.stdout);
    expect(events.map((e) => `${e.type}${e.task ? ` #${e.task}` : ''}`)).toEqual([
      'reviewer.started',
      'review.claimed #1',
      'review.approved #1',
      'review.claimed #2',
      'review.rejected #2',
      'reviewer.stopped',
    ]);
    expect(events[2]).toMatchObject({ unblocked: [4] });
    expect(events.at(-1)).toMatchObject({ reason: 'idle', approved: [1], rejected: [2], lost: [] });
    expect(r.stderr).toContain('[rev] approved #1');
  });

  it('two reviewer workers never review one task twice', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const count = 8;
    await boardInReview(
      t.board,
      Array.from({ length: count }, () => 'alice'),
    );
    const log = join(t.root, 'reviews.log');
    // The pause is the rhythm under test: both reviewers are busy at once, each looking for the next task meanwhile.
    const command = `echo "$TASK_ID $TASKS_OWNER" >> ${log}; sleep 0.1`;
    const [a, b] = await Promise.all(
      ['rev-a', 'rev-b'].map((owner) => tasksAsync(t.root, ['worker', '--review', '--owner', owner, '--json', '--idle-exit', '0', '--', command])),
    );
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const reviews = readFileSync(log, 'utf8').trim().split('\n');
    expect(reviews.map((l) => Number(l.split(' ')[0])).sort((x, y) => x - y)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    for (let id = 1; id <= count; id++) {
      const task = readTaskFile(t.board, id);
      expect(task.status).toBe('completed');
      // Approved by the reviewer that ran the command on it.
      expect(reviews).toContain(`${id} ${(task.review as { by: string }).by}`);
    }
    const approved = [a, b].flatMap((r) =>
      jsonLines(r.stdout)
        .filter((e) => e.type === 'review.approved')
        .map((e) => e.task),
    );
    expect(approved).toHaveLength(count);
  });

  it("a reviewer that dies loses its review: its claim's process is gone, and the next reviewer takes the task", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await boardInReview(t.board, ['alice']);
    const pidFile = join(t.root, 'cmd.pid');
    const first = startTasks(t.root, ['worker', '--review', '--owner', 'rev-a', '--', `echo $$ > ${pidFile}; exec sleep 60`]);
    await vi.waitFor(() => expect(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '').toBe(true), WAIT);
    const lease = JSON.parse(readFileSync(join(t.board, '.runtime', 'leases', 'task_1.json'), 'utf8')) as Record<string, unknown>;
    expect(lease).toMatchObject({ task: 1, owner: 'rev-a', review: true, pid: first.child.pid });
    expect(tasks(t.root, ['review']).stdout).toContain('reviewing: rev-a');
    first.child.kill('SIGKILL');
    await first.done;
    const cmd = Number(readFileSync(pidFile, 'utf8'));
    try {
      const second = await tasksAsync(t.root, ['worker', '--review', '--owner', 'rev-b', '--json', '--idle-exit', '0', '--', 'true']);
      expect(second.code, second.stderr).toBe(0);
      expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', review: { state: 'approved', by: 'rev-b' } });
    } finally {
      if (isAlive(cmd)) process.kill(cmd, 'SIGKILL');
    }
  });

  it("a worker's exit 0 on a task that requires review puts it in review (task.in_review) and moves on; its dependents wait for the approval", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [{ subject: 'First', review: true }, { subject: 'Second', blockedBy: [1] }, 'Elsewhere']);
    const r = await tasksAsync(t.root, ['worker', '--owner', 'w1', '--json', '--idle-exit', '0', '--', 'true']);
    expect(r.code, r.stderr).toBe(0);
    const events = jsonLines(r.stdout);
    expect(events.filter((e) => String(e.type).startsWith('task.')).map((e) => `${e.type} #${e.task}`)).toEqual([
      'task.claimed #1',
      'task.in_review #1',
      'task.claimed #3',
      'task.completed #3',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'worker.stopped', completed: [3], inReview: [1] });
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'in_progress', owner: 'w1', review: { state: 'waiting' } });
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'pending', blockedBy: [1] });
    expect(r.stderr).toContain('[w1] finished #1');
  });

  it('with --merge, exit 0 lands the task: its branch merged into main and the task approved and completed in one; a conflicting one goes back with the reason', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ review: true, verify: 'test -f "task_$TASK_ID.txt"' }));
    for (const [i, text] of ['one', 'two'].entries()) {
      const id = String(i + 1);
      tasks(r.repo, ['create', `Task ${id}`]);
      const claim = tasks(r.repo, ['claim', id, '--worktree', '--owner', 'alice', '--json']);
      const path = (JSON.parse(claim.stdout) as { worktree: { path: string } }).worktree.path;
      writeFileSync(join(path, `task_${id}.txt`), `${text}\n`);
      git(path, ['add', '-A']);
      git(path, ['commit', '-q', '-m', `task ${id}`]);
      expect(tasks(r.repo, ['done', id, '--owner', 'alice']).stdout).toContain('waits for review');
    }
    // main gains a task_2.txt of its own: #2's branch no longer merges cleanly.
    writeFileSync(join(r.repo, 'task_2.txt'), 'main\n');
    git(r.repo, ['add', 'task_2.txt']);
    git(r.repo, ['commit', '-q', '-m', 'task_2.txt on main']);

    // --merge is the reviewer's: a worker without --review refuses it, one line, exit 2.
    const alone = tasks(r.repo, ['worker', '--merge', '--', 'true']);
    expect(alone).toMatchObject({ code: 2, stdout: '', stderr: 'tasks: --merge goes with --review: a reviewer lands what it approves\n' });

    const run = await tasksAsync(r.repo, ['worker', '--review', '--merge', '--owner', 'rev', '--json', '--idle-exit', '0', '--', 'true']);
    expect(run.code, run.stderr).toBe(0);
    const main = git(r.repo, ['rev-parse', 'main']).trim();
    expect(readTaskFile(r.board, 1)).toMatchObject({
      status: 'completed',
      review: { state: 'approved', by: 'rev' },
      metadata: { merged: { into: 'main', commit: main } },
    });
    expect(git(r.repo, ['show', 'main:task_1.txt'])).toBe('one\n');
    expect(existsSync(join(r.root, 'repo.worktrees', 'task-1'))).toBe(false);
    const sentBack = readTaskFile(r.board, 2);
    expect(sentBack).toMatchObject({ status: 'pending', owner: 'alice', review: { state: 'rejected', by: 'rev' } });
    expect((sentBack.notes as Note[]).at(-1)!.text).toMatch(/^sent back in review: the merge failed: task\/2 of #2 conflicts with main in task_2.txt/);
    expect(git(r.repo, ['show', 'main:task_2.txt'])).toBe('main\n');
    const events = jsonLines(run.stdout);
    expect(events.map((e) => `${e.type}${e.task ? ` #${e.task}` : ''}`)).toEqual([
      'reviewer.started',
      'review.claimed #1',
      'review.approved #1',
      'review.claimed #2',
      'review.rejected #2',
      'reviewer.stopped',
    ]);
    expect(events[2]).toMatchObject({ merged: { into: 'main', commit: main } });
    const completions = readFileSync(join(r.board, '.runtime', 'events.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"completed"'));
    expect(completions).toHaveLength(1);
  });
  it('with --merge, the review claim is renewed while the merge runs its check, so no other reviewer takes the task meanwhile', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    // The check waits for the test's go-ahead once armed: the merge's run of it holds the claim past its lease.
    const armed = join(r.root, 'armed');
    const started = join(r.root, 'started');
    const go = join(r.root, 'go');
    const check = join(r.root, 'check.sh');
    writeFileSync(check, `[ -f '${armed}' ] || exit 0\ntouch '${started}'\nwhile [ ! -f '${go}' ]; do sleep 0.05; done\n`);
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ review: true, verify: `sh '${check}'` }));
    tasks(r.repo, ['create', 'Task 1']);
    const claim = tasks(r.repo, ['claim', '1', '--worktree', '--owner', 'alice', '--json']);
    const path = (JSON.parse(claim.stdout) as { worktree: { path: string } }).worktree.path;
    writeFileSync(join(path, 'task_1.txt'), 'one\n');
    git(path, ['add', '-A']);
    git(path, ['commit', '-q', '-m', 'task 1']);
    expect(tasks(r.repo, ['done', '1', '--owner', 'alice']).stdout).toContain('waits for review');
    writeFileSync(armed, '');

    const reviewer = startTasks(r.repo, ['worker', '--review', '--merge', '--owner', 'rev', '--lease', '2', '--json', '--idle-exit', '0', '--', 'true']);
    const record = join(r.board, '.runtime', 'leases', 'task_1.json');
    // Whatever happens, the check is let go, so nothing waits for the test once it ends.
    const previous = cleanup;
    cleanup = () => {
      writeFileSync(go, '');
      reviewer.child.kill();
      previous();
    };
    await vi.waitFor(() => expect(existsSync(started)).toBe(true), WAIT);
    const first = (JSON.parse(readFileSync(record, 'utf8')) as { expiresAt: string }).expiresAt;
    // The check is running inside the merge: the claim record moves on, still the reviewer's.
    await vi.waitFor(() => {
      const now = JSON.parse(readFileSync(record, 'utf8')) as { owner: string; review?: boolean; expiresAt: string };
      expect(now).toMatchObject({ owner: 'rev', review: true });
      expect(now.expiresAt).not.toBe(first);
    }, WAIT);
    writeFileSync(go, '');
    const run = await reviewer.done;
    expect(run.code, run.stderr).toBe(0);
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'completed', review: { state: 'approved', by: 'rev' } });
    expect(git(r.repo, ['show', 'main:task_1.txt'])).toBe('one\n');
  });
});
