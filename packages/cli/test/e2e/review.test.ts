import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore, inReview } from '@dotasks/core';
import { createTasks, readTaskFile, tasks, tempBoard } from '../helpers.js';
import { readEventLog } from '../agents-helpers.js';

type Note = { at: string; owner: string; text: string };
const leaseFile = (board: string, id: number) => join(board, '.runtime', 'leases', `task_${id}.json`);

/** `tasks start ID --owner OWNER` then `tasks done ID --owner OWNER`, in process: a task put in review for a test of what comes after. */
async function finishedBy(board: string, id: number, owner: string): Promise<void> {
  const store = new TaskStore(board);
  await store.startTask(id, { owner, actor: owner });
  if (!inReview((await store.finishTask(id, { actor: owner })).task)) throw new Error(`#${id} did not enter review`);
}

describe('review before done: tasks done, review, approve and reject (real processes)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('a task that requires review waits for it when done, its dependents still blocked; another owner approves it and they unblock', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(tasks(t.root, ['create', 'Parse AST', '--review']).code).toBe(0);
    tasks(t.root, ['create', 'Emit output', '--blocked-by', '1']);
    expect(readTaskFile(t.board, 1).review).toEqual({ required: true });
    tasks(t.root, ['claim', '1', '--owner', 'alice']);
    expect(existsSync(leaseFile(t.board, 1))).toBe(true);

    const done = tasks(t.root, ['done', '1', '--owner', 'alice']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe("#1 waits for review; it completes when someone other than alice approves it ('tasks approve 1')\n");
    const waiting = readTaskFile(t.board, 1);
    expect(waiting).toMatchObject({ status: 'in_progress', owner: 'alice', review: { required: true, state: 'waiting' } });
    expect(Date.parse((waiting.review as { since: string }).since)).not.toBeNaN();
    // No claim record: nothing reaps it, and its owner may take the next task.
    expect(existsSync(leaseFile(t.board, 1))).toBe(false);
    expect(readTaskFile(t.board, 2).blockedBy).toEqual([1]);
    expect(tasks(t.root, ['list']).stdout).toBe(
      '[?] #1: Parse AST (alice: waits for review)\n[ ] #2: Emit output (blocked by: #1)\n0/2 done · 1 in review · nothing ready · 1 blocked\n',
    );
    expect(tasks(t.root, ['ready']).stdout).not.toContain('#1');
    expect(tasks(t.root, ['show', '1']).stdout).toContain('  status:      in_progress (waits for review)\n');
    // Done again: it still waits, and nothing is written.
    expect(tasks(t.root, ['done', '1', '--owner', 'alice']).stdout).toContain('#1 waits for review');

    const approved = tasks(t.root, ['approve', '1', '--owner', 'bob']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe("approved #1: Parse AST (alice's work); it is completed\nunblocked #2: Emit output\n");
    const task = readTaskFile(t.board, 1);
    expect(task).toMatchObject({ status: 'completed', owner: 'alice', review: { required: true, state: 'approved', by: 'bob' } });
    expect((task.review as Record<string, unknown>).since).toBeUndefined();
    expect(readTaskFile(t.board, 2).blockedBy).toEqual([]);
    const types = readEventLog(t.board).map((e) => `${e.type} #${e.task} ${e.owner ?? ''}`);
    expect(types.slice(-4)).toEqual(['review.waiting #1 alice', 'review.approved #1 bob', 'completed #1 bob', 'unblocked #2 ']);
  });

  it('a board that requires review ("review": true): every finish waits for it, --no-review opts a task out, and --force does not skip it', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    writeFileSync(join(t.board, 'config.json'), JSON.stringify({ review: true }));
    tasks(t.root, ['create', 'Needs review']);
    tasks(t.root, ['create', 'Trivial', '--no-review']);
    tasks(t.root, ['create', 'Finished by update']);
    expect(readTaskFile(t.board, 2).review).toEqual({ required: false });

    expect(tasks(t.root, ['done', '1', '--owner', 'alice', '--force']).stdout).toContain('#1 waits for review');
    // A task nobody owned becomes its finisher's: someone else approves it.
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice', review: { state: 'waiting' } });
    expect(tasks(t.root, ['done', '2', '--owner', 'alice']).stdout).toBe('completed #2: Trivial\n');
    const updated = tasks(t.root, ['update', '3', '--status', 'completed', '--owner', 'carol']);
    expect(updated.stdout).toBe(
      "updated #3: Finished by update\n#3 waits for review; it completes when someone other than carol approves it ('tasks approve 3')\n",
    );
    expect(readTaskFile(t.board, 3)).toMatchObject({ status: 'in_progress', owner: 'carol', review: { state: 'waiting' } });

    // `tasks review` lists what waits, in the order it entered review.
    const list = tasks(t.root, ['review']);
    expect(list.stdout).toMatch(
      /^\[\?\] #1: Needs review \(alice's work; waiting since \S+\)\n\[\?\] #3: Finished by update \(carol's work; waiting since \S+\)\n2 tasks wait for review\n$/,
    );
    const json = JSON.parse(tasks(t.root, ['review', '--json']).stdout) as {
      reviews: { id: number; owner: string; reviewer: null; task: { review: unknown } }[];
    };
    expect(json.reviews.map((r) => [r.id, r.owner, r.reviewer])).toEqual([
      [1, 'alice', null],
      [3, 'carol', null],
    ]);
    expect(json.reviews[0].task.review).toMatchObject({ state: 'waiting' });
  });

  it("the owner's approve or reject is refused with one line (exit 1), so is a task that does not wait; reject needs --note (exit 2); nothing is written", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [{ subject: 'Parse AST', review: true }, 'Plain']);
    await finishedBy(t.board, 1, 'alice');
    const before = readTaskFile(t.board, 1);
    const events = readEventLog(t.board).length;

    const own = tasks(t.root, ['approve', '1', '--owner', 'alice']);
    expect(own).toMatchObject({ code: 1, stdout: '' });
    expect(own.stderr).toBe("tasks: task #1 is alice's own work: someone other than alice approves or rejects it\n");
    const ownJson = tasks(t.root, ['reject', '1', '--owner', 'alice', '--note', 'nope', '--json']);
    expect(ownJson.code).toBe(1);
    expect(JSON.parse(ownJson.stdout).error.code).toBe('E_OWN_REVIEW');

    const notWaiting = tasks(t.root, ['approve', '2', '--owner', 'bob']);
    expect(notWaiting.code).toBe(1);
    expect(notWaiting.stderr).toBe("tasks: task #2 does not wait for review (it is pending); 'tasks review' lists what does\n");

    const noNote = tasks(t.root, ['reject', '1', '--owner', 'bob']);
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toBe('tasks: reject needs --note: what to fix, for its owner (tasks reject 1 --note "…")\n');
    // A claim, a takeover or a change of owner of a task in review is refused too.
    expect(tasks(t.root, ['claim', '1', '--owner', 'bob']).stderr).toBe(
      "tasks: not_pending: task #1 waits for review, not for work ('tasks approve 1' or 'tasks reject 1 --note …')\n",
    );
    const handOver = tasks(t.root, ['update', '1', '--assign', 'bob', '--owner', 'alice']);
    expect(handOver.code).toBe(1);
    expect(handOver.stderr).toBe(
      "tasks: task #1 waits for review, which another owner would change; approve it ('tasks approve 1') or reject it ('tasks reject 1 --note …') first\n",
    );
    expect(tasks(t.root, ['update', '1', '--no-review', '--owner', 'alice']).code).toBe(1);
    // Someone else's done of it points at approve.
    expect(tasks(t.root, ['done', '1', '--owner', 'bob']).stderr).toBe(
      "tasks: task #1 waits for review of alice's work; approve it ('tasks approve 1') or reject it\n",
    );
    expect(readTaskFile(t.board, 1)).toEqual(before);
    expect(readEventLog(t.board)).toHaveLength(events);
    expect(existsSync(leaseFile(t.board, 1))).toBe(false);
  });

  it("a rejection sends the task back to its owner, pending, with the reviewer's note; finished again, it waits again", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [
      { subject: 'Parse AST', review: true },
      { subject: 'Next', review: true },
    ]);
    tasks(t.root, ['claim', '1', '--owner', 'alice']);
    tasks(t.root, ['done', '1', '--owner', 'alice']);
    // Its owner is free again (single-in-progress counts no task in review): alice takes the next one.
    expect(tasks(t.root, ['claim', '2', '--owner', 'alice']).code).toBe(0);

    const r = tasks(t.root, ['reject', '1', '--owner', 'bob', '--note', 'the parser drops comments; add a test']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('sent #1: Parse AST back to alice (pending, with your note)\n');
    const task = readTaskFile(t.board, 1);
    expect(task).toMatchObject({ status: 'pending', owner: 'alice', review: { required: true, state: 'rejected', by: 'bob' } });
    expect((task.notes as Note[]).map((n) => [n.owner, n.text])).toEqual([['bob', 'sent back in review: the parser drops comments; add a test']]);
    expect(tasks(t.root, ['list']).stdout).toContain('[ ] #1: Parse AST (owner: alice)');
    expect(readEventLog(t.board).at(-1)).toMatchObject({ type: 'review.rejected', task: 1, owner: 'bob', taskOwner: 'alice' });

    tasks(t.root, ['done', '2', '--owner', 'alice']);
    expect(tasks(t.root, ['claim', '1', '--owner', 'alice']).code).toBe(0);
    expect(tasks(t.root, ['done', '1', '--owner', 'alice']).stdout).toContain('#1 waits for review');
    expect(readTaskFile(t.board, 1).review).toMatchObject({ required: true, state: 'waiting' });
    expect(tasks(t.root, ['approve', '1', '--owner', 'bob']).code).toBe(0);
  });

  it('export and import keep the review, and a file without one reads and writes as before', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [{ subject: 'Waits', review: true }, 'Plain']);
    await finishedBy(t.board, 1, 'alice');
    expect(Object.keys(readTaskFile(t.board, 2))).not.toContain('review');
    const exported = tasks(t.root, ['export']);
    const other = tempBoard();
    const cleanFirst = cleanup;
    cleanup = () => {
      cleanFirst();
      other.cleanup();
    };
    writeFileSync(join(other.root, 'board.json'), exported.stdout);
    const imported = tasks(other.root, ['import', 'dotasks', 'board.json']);
    expect(imported.code, imported.stderr).toBe(0);
    expect(readTaskFile(other.board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice', review: readTaskFile(t.board, 1).review });
    expect(Object.keys(readTaskFile(other.board, 2))).not.toContain('review');
    // Imported in review, it has no claim record; another owner approves it there.
    expect(existsSync(leaseFile(other.board, 1))).toBe(false);
    expect(tasks(other.root, ['approve', '1', '--owner', 'bob']).code).toBe(0);
  });
});
