import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../store.js';
import { TasksError } from '../errors.js';
import { readLease, writeLease } from '../runtime/leases.js';
import { watchClaim } from '../runtime/claim-watch.js';
import { syncBoard } from './sync.js';
import { boardFiles, branchNames, createRemote, git, onBranch, pushToBoardBranch, until, type RemoteFixture } from '../../test/git-remote.js';

/**
 * What people and machines do to a remote, and what a sync must do about it
 * (docs/protocol.md, "Several machines"): a board branch deleted,
 * force-pushed, replaced by a code branch, holding entries nobody can read;
 * claims that arrive already run out, or under an id that moves; a killed
 * git's lock. Real git, real remotes (a bare path, and git daemon on
 * 127.0.0.1), in process.
 */

let fixture: RemoteFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

async function clones(n: number, daemon = false): Promise<{ dir: string; store: TaskStore }[]> {
  fixture = await createRemote({ daemon });
  return Array.from({ length: n }, (_, i) => {
    const dir = fixture!.clone(`clone${i + 1}`);
    return { dir, store: TaskStore.init(join(dir, '.tasks')) };
  });
}

async function refusal(promise: Promise<unknown>): Promise<TasksError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TasksError);
  return error as TasksError;
}

const branchHead = () => git(fixture!.bare, 'rev-parse', 'tasks');

describe('a board branch that is deleted, rewritten or not ours', () => {
  it('deleted: every sync stops with nothing changed and names the fix; --republish restores it, and the other clone goes on', async () => {
    const [a, b] = await clones(2, true);
    await a.store.createTask({ subject: 'one' });
    await a.store.createTask({ subject: 'two', blockedBy: [1] });
    await syncBoard(a.store);
    await syncBoard(b.store);
    await b.store.createTask({ subject: 'three, made while the branch was gone' });
    git(fixture!.bare, 'branch', '-D', 'tasks');

    for (const c of [a, b]) {
      const before = boardFiles(c.store.dir);
      const error = await refusal(syncBoard(c.store));
      expect(error.code).toBe('E_REMOTE');
      expect(error.details.reason).toBe('branch_gone');
      expect(error.message).toMatch(/origin\/tasks is gone from the remote .*nothing was changed here.*tasks sync --republish/);
      expect(boardFiles(c.store.dir)).toEqual(before);
    }
    const republished = await syncBoard(b.store, { republish: true });
    expect(republished.resolved).toBe('republished');
    expect(branchNames(fixture!.bare)).toEqual(expect.arrayContaining(['task_1.json', 'task_2.json', 'task_3.json']));
    // a last synced the old head, which the republished branch continues: a plain sync goes on.
    const got = await syncBoard(a.store);
    expect(got.incoming).toEqual([{ id: 3, what: 'created' }]);
    expect(boardFiles(a.store.dir)).toEqual(boardFiles(b.store.dir));
  });

  it('force-pushed to an older commit: refused with what it would undo; --republish keeps every task of both, and every clone goes on', async () => {
    const [a, b, c] = await clones(3);
    await a.store.createTask({ subject: 'one' });
    await a.store.createTask({ subject: 'two' });
    await syncBoard(a.store);
    const old = branchHead();
    await syncBoard(b.store);
    await syncBoard(c.store);
    await c.store.completeTask(1);
    await c.store.createTask({ subject: 'three' });
    await syncBoard(c.store);
    await syncBoard(a.store);
    // Someone force-pushes the branch back to before #1 was completed and #3 made.
    git(fixture!.bare, 'update-ref', 'refs/heads/tasks', old);
    const before = boardFiles(a.store.dir);
    const error = await refusal(syncBoard(a.store));
    expect(error.details.reason).toBe('rewritten');
    expect(error.message).toMatch(
      /was rewritten: its head .* does not follow .*it lacks 1 task\(s\) this board has \(#3\); it has 1 task\(s\) open that are closed here \(#1\).*--republish/,
    );
    expect(boardFiles(a.store.dir)).toEqual(before);

    const fixed = await syncBoard(a.store, { republish: true });
    expect(fixed.resolved).toBe('republished');
    // The old head and the republished one: both in the branch's history, so every clone's base is an ancestor.
    expect(git(fixture!.bare, 'rev-list', '--parents', '-1', 'tasks').split(' ')).toHaveLength(3);
    for (const x of [c, b]) await syncBoard(x.store);
    await syncBoard(a.store);
    for (const x of [a, b, c]) {
      expect(x.store.getTask(1).status).toBe('completed');
      expect(x.store.getTask(3).subject).toBe('three');
    }
    expect(boardFiles(b.store.dir)).toEqual(boardFiles(a.store.dir));
    expect(boardFiles(c.store.dir)).toEqual(boardFiles(a.store.dir));
  });

  it('rewritten into a new history (squashed): --accept-rewrite builds on it, loses no task and reopens none', async () => {
    const [a] = await clones(1);
    await a.store.createTask({ subject: 'one' });
    await a.store.createTask({ subject: 'two' });
    await syncBoard(a.store);
    await a.store.completeTask(1);
    await syncBoard(a.store);
    // The branch squashed to one commit holding an older state: #1 open, #2 missing.
    const tree = git(fixture!.bare, 'rev-parse', 'tasks~1^{tree}');
    const squashed = git(fixture!.bare, '-c', 'user.name=p', '-c', 'user.email=p@p', 'commit-tree', tree, '-m', 'squashed');
    git(fixture!.bare, 'update-ref', 'refs/heads/tasks', squashed);
    await a.store.createTask({ subject: 'three' });
    expect((await refusal(syncBoard(a.store))).details.reason).toBe('rewritten');
    const accepted = await syncBoard(a.store, { acceptRewrite: true });
    expect(accepted.resolved).toBe('accepted');
    expect(git(fixture!.bare, 'rev-parse', 'tasks^')).toBe(squashed);
    expect(a.store.getTask(1).status).toBe('completed');
    expect(git(fixture!.bare, 'show', `tasks:${onBranch('task_1.json')}`)).toMatch(/"status": "completed"/);
    expect(branchNames(fixture!.bare).join('\n')).toMatch(/task_2\.json[\s\S]*task_3\.json/);
    expect((await syncBoard(a.store)).incoming).toEqual([]);
  });

  it('replaced by a code branch of that name: refused, naming what it holds, also with --republish; nothing is written to it', async () => {
    const [a] = await clones(1);
    await a.store.createTask({ subject: 'one' });
    const head = pushToBoardBranch(fixture!, { 'README.md': '# the tasks service\n', 'src/index.ts': 'export {};\n' }, { orphan: true });
    for (const options of [{}, { republish: true }]) {
      const error = await refusal(syncBoard(a.store, options));
      expect(error.details.reason).toBe('foreign');
      expect(error.message).toMatch(/origin\/tasks is not a board branch: it holds README\.md, src and no \.dotasks-board-v2 .*"syncBranch"/);
    }
    expect(branchHead()).toBe(head);
    // Through another branch, the board syncs.
    expect((await syncBoard(a.store, { branch: 'board' })).outgoing).toEqual([{ id: 1, what: 'created' }]);
  });

  it('a board branch an earlier dotasks made (no marker, only board files) is taken as a board and gets the marker', async () => {
    const [a] = await clones(1);
    pushToBoardBranch(
      fixture!,
      {
        'task_1.json': JSON.stringify({ id: 1, subject: 'old', description: '', status: 'pending', owner: '', blockedBy: [], blocks: [] }, null, 2) + '\n',
        '.highwatermark': '1\n',
      },
      { orphan: true },
    );
    const got = await syncBoard(a.store);
    expect(got.incoming).toEqual([{ id: 1, what: 'created' }]);
    await a.store.createTask({ subject: 'new' });
    await syncBoard(a.store);
    expect(branchNames(fixture!.bare)).toEqual(['.dotasks-board-v2', '.highwatermark', 'task_1.json', 'task_2.json']);
    expect(git(fixture!.bare, 'ls-tree', '--name-only', 'tasks').split('\n')).toEqual(['.dotasks-board-v2', '.highwatermark', 'tasks']);
  });
});

describe('entries nobody can read', () => {
  it('a folder, a broken task file and a .highwatermark no id could follow are skipped with a finding; everything else syncs', async () => {
    const [a, b] = await clones(2);
    for (const s of ['one', 'two', 'three']) await a.store.createTask({ subject: s });
    await syncBoard(a.store);
    await syncBoard(b.store);
    pushToBoardBranch(fixture!, {
      [onBranch('task_9.json')]: { folder: { 'x.txt': 'not a task\n' } },
      [onBranch('task_2.json')]: '{ "id": 2, "subject": "half a task",\n',
      '.highwatermark': '9007199254740991\n',
    });
    await b.store.updateTask(3, { description: 'changed on b' });
    const good2 = readFileSync(b.store.taskPath(2), 'utf8');
    const report = await syncBoard(b.store);
    expect(report.skipped.map((s) => [s.entry, s.side])).toEqual([
      ['origin/tasks:.highwatermark', 'remote'],
      ['origin/tasks:tasks/0/task_2.json', 'remote'],
      ['origin/tasks:tasks/0/task_9.json', 'remote'],
    ]);
    expect(report.skipped.find((s) => s.id === 9)!.problem).toMatch(/is a folder/);
    expect(report.skipped.find((s) => s.id === 2)!.problem).toMatch(/line \d+, column \d+.*stays as it is and does not go out .*--republish/);
    expect(report.skipped[0].problem).toMatch(/says 9007199254740991, above every task on the branch \(the highest is #9\)/);
    // The clone's own good file is untouched and not called bad; the other change went out.
    expect(readFileSync(b.store.taskPath(2), 'utf8')).toBe(good2);
    expect(report.outgoing).toEqual([{ id: 3, what: 'updated' }]);
    // Ids go on in every clone, and the mark that went out is one ids can follow.
    expect((await b.store.createTask({ subject: 'four' })).task.id).toBe(10);
    await syncBoard(b.store);
    await syncBoard(a.store);
    expect(a.store.getTask(3).description).toBe('changed on b');
    expect((await a.store.createTask({ subject: 'five' })).task.id).toBe(11);
    expect(Number(git(fixture!.bare, 'show', 'tasks:.highwatermark'))).toBeLessThan(100);

    // On purpose, this board's copies replace what cannot be read.
    const fixed = await syncBoard(a.store, { republish: true });
    expect(fixed.skipped.map((s) => s.id)).toEqual([2, 9]);
    expect(git(fixture!.bare, 'show', `tasks:${onBranch('task_2.json')}`)).toBe(good2.trim());
    expect(branchNames(fixture!.bare)).not.toContain('task_9.json');
    expect((await syncBoard(b.store)).skipped).toEqual([]);
  });

  it("a bad file of this board is neither overwritten nor sent out; the remote's copy stays", async () => {
    const [a, b] = await clones(2);
    await a.store.createTask({ subject: 'one' });
    await a.store.createTask({ subject: 'two' });
    await syncBoard(a.store);
    await syncBoard(b.store);
    writeFileSync(b.store.taskPath(1), '<<<<<<< ours\n');
    await a.store.updateTask(1, { description: 'from a' });
    await a.store.updateTask(2, { description: 'from a too' });
    await syncBoard(a.store);
    const report = await syncBoard(b.store);
    expect(report.skipped).toMatchObject([{ side: 'local', id: 1, entry: b.store.taskPath(1) }]);
    expect(readFileSync(b.store.taskPath(1), 'utf8')).toBe('<<<<<<< ours\n');
    expect(b.store.getTask(2).description).toBe('from a too');
    expect(git(fixture!.bare, 'show', `tasks:${onBranch('task_1.json')}`)).toMatch(/from a/);
  });
});

describe('claims across machines', () => {
  it('a claim that arrives already run out is released in every copy, after this clone saw it unrenewed for its lease', async () => {
    const [a, b, c] = await clones(3);
    await a.store.createTask({ subject: 'held by a machine that dies' });
    await a.store.claimTask(1, { owner: 'agent-a', lease: { ttlSeconds: 1 } });
    await syncBoard(a.store);
    // a is gone. c syncs for the first time after the lease ran out, by a's clock and c's: it starts watching,
    // and releases nothing it has not seen unrenewed for a whole lease itself.
    const expiresAt = Date.parse(JSON.parse(git(fixture!.bare, 'show', 'tasks:claims/task_1.json')).expiresAt);
    await until(() => Date.now() > expiresAt + 2500, { what: 'the lease to run out by the clock', every: 100 });
    const first = await syncBoard(c.store);
    expect(first.reaped).toEqual([]);
    expect(c.store.getTask(1)).toMatchObject({ status: 'in_progress', owner: 'agent-a' });
    let reaped: { id: number }[] = [];
    await until(
      async () => {
        reaped = (await syncBoard(c.store)).reaped;
        return reaped.length > 0;
      },
      { what: 'c to reap #1', ms: 20_000, every: 200 },
    );
    expect(reaped).toMatchObject([{ id: 1, owner: 'agent-a' }]);
    // Released in c's own file, on the remote and, with the next sync, in b: nobody pushes the claim back.
    expect(c.store.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
    expect(git(fixture!.bare, 'show', `tasks:${onBranch('task_1.json')}`)).toMatch(/"status": "pending"/);
    expect(git(fixture!.bare, 'ls-tree', 'tasks')).not.toMatch(/\tclaims$/m);
    await syncBoard(b.store);
    expect(b.store.getTask(1).status).toBe('pending');
    await syncBoard(c.store);
    expect(git(fixture!.bare, 'show', `tasks:${onBranch('task_1.json')}`)).toMatch(/"status": "pending"/);
    await c.store.claimTask(1, { owner: 'agent-c' });
    expect((await syncBoard(c.store)).outgoing).toEqual([{ id: 1, what: 'claimed by agent-c' }]);
  });

  it("a live claim published by a clock an hour slow is never reaped: expiry is not read from the holder's clock", async () => {
    const [a, b] = await clones(2);
    await a.store.createTask({ subject: 'long' });
    await a.store.claimTask(1, { owner: 'agent-a', lease: { ttlSeconds: 2 } });
    // a's clock is an hour slow: each renewal it publishes ran out long ago by b's clock.
    const slow = () => Date.now() - 3_600_000;
    const renew = () => {
      const lease = readLease(a.store.runtimeDir, 1)!;
      writeLease(a.store.runtimeDir, { ...lease, renewedAt: new Date(slow()).toISOString(), expiresAt: new Date(slow() + 2000).toISOString() });
    };
    const stopAt = Date.now() + 5000;
    while (Date.now() < stopAt) {
      renew();
      await syncBoard(a.store);
      expect((await syncBoard(b.store)).reaped).toEqual([]);
      await new Promise((r) => setTimeout(r, 400));
    }
    expect(b.store.getTask(1).owner).toBe('agent-a');
    // And once a stops renewing, b releases it within the lease (and the grace) of seeing it last change.
    const lastRenewal = Date.now();
    await until(async () => (await syncBoard(b.store)).reaped.length > 0, { what: 'b to reap #1', ms: 20_000, every: 200 });
    expect(Date.now() - lastRenewal).toBeGreaterThanOrEqual(2000);
    expect(b.store.getTask(1).status).toBe('pending');
  });

  it('a claim under a renumbered id moves with its task: record, lease, published claim, mentions; the old id refuses its holder', async () => {
    const [a, b] = await clones(2);
    await a.store.createTask({ subject: 'shared' });
    await syncBoard(a.store);
    await syncBoard(b.store);
    // Offline, a makes #2 and claims it; b makes its own #2 and publishes it first.
    await a.store.createTask({ subject: 'mine', description: 'after #1; see #2 and #12' });
    await a.store.createTask({ subject: 'waits for mine', blockedBy: [2], description: 'needs #2' });
    await a.store.addNote(2, 'started #2 here');
    await a.store.claimTask(2, { owner: 'agent-a', lease: { ttlSeconds: 600 } });
    await b.store.createTask({ subject: "b's own" });
    await syncBoard(b.store);
    // A worker's watch over its claim of #2 follows the task to its new id instead of calling it lost.
    const movedTo: number[] = [];
    const lease = readLease(a.store.runtimeDir, 2)!;
    const watch = watchClaim(
      a.store,
      { task: 2, owner: 'agent-a', claimedAt: lease.claimedAt },
      { onLost: () => movedTo.push(-1), onMoved: (to) => movedTo.push(to) },
    );
    const report = await syncBoard(a.store);
    expect(watch.check().state).toBe('held');
    watch.stop();
    expect(movedTo).toEqual([4]);
    // Only #2 clashes (the remote has no #3): it moves above every id, and #3's edge and mention follow it.
    expect(report.renumbered).toEqual([{ from: 2, to: 4, owner: 'agent-a' }]);
    const moved = a.store.getTask(4);
    expect(moved).toMatchObject({ subject: 'mine', status: 'in_progress', owner: 'agent-a', description: 'after #1; see #4 and #12', blocks: [3] });
    expect(moved.notes?.[0].text).toBe('started #4 here');
    expect(a.store.getTask(3)).toMatchObject({ blockedBy: [4], description: 'needs #4' });
    expect(a.store.getTask(2).subject).toBe("b's own");
    expect(readdirSync(join(a.store.runtimeDir, 'leases'))).toEqual(['task_4.json']);
    expect(JSON.parse(git(fixture!.bare, 'show', 'tasks:claims/task_4.json'))).toMatchObject({ task: 4, owner: 'agent-a' });
    // agent-a's "done 2" would complete b's task: refused, pointing at #4.
    const error = await refusal(a.store.completeTask(2, { actor: 'agent-a' }));
    expect(error.code).toBe('E_MOVED');
    expect(error.message).toMatch(/tasks sync moved it to #4/);
    await refusal(a.store.releaseTask(2, { actor: 'agent-a' }));
    expect((await a.store.completeTask(4, { actor: 'agent-a' })).task.status).toBe('completed');
    // Once agent-a no longer holds #4, #2 is an ordinary id again.
    expect((await a.store.addNote(2, 'hello', { actor: 'agent-a' })).task.id).toBe(2);
    await syncBoard(a.store);
    await syncBoard(b.store);
    expect(b.store.getTask(2).subject).toBe("b's own");
    expect(b.store.getTask(4)).toMatchObject({ subject: 'mine', status: 'completed' });
  });

  it("a renumbered task's worktree branch is renamed with it", async () => {
    const [a, b] = await clones(2);
    await a.store.createTask({ subject: 'shared' });
    await syncBoard(a.store);
    await syncBoard(b.store);
    await a.store.createTask({ subject: 'mine' });
    git(a.dir, 'branch', 'task/2');
    await a.store.claimTask(2, { owner: 'agent-a' });
    await a.store.updateTask(2, { metadata: { branch: 'task/2' } }, { actor: 'agent-a' });
    await b.store.createTask({ subject: "b's own" });
    await syncBoard(b.store);
    const report = await syncBoard(a.store);
    expect(report.renumbered).toEqual([{ from: 2, to: 3, owner: 'agent-a', branch: { from: 'task/2', to: 'task/3' } }]);
    expect(a.store.getTask(3).metadata).toEqual({ branch: 'task/3' });
    expect(git(a.dir, 'branch', '--list', 'task/*')).toBe('task/3');
  });

  it('sync reports a withdrawn claim only when there was one', async () => {
    const [a, b] = await clones(2);
    await a.store.createTask({ subject: 'one' });
    await a.store.claimTask(1, { owner: 'ma', lease: { ttlSeconds: 600 } });
    await syncBoard(a.store);
    await syncBoard(b.store);
    await a.store.completeTask(1, { actor: 'ma' });
    await syncBoard(a.store);
    const got = await syncBoard(b.store);
    expect(got.withdrawn).toEqual([]);
    expect(got.incoming).toEqual([{ id: 1, what: 'completed' }]);
    // And one there was: b's claim lost to a's, which a even finished before b synced.
    await a.store.createTask({ subject: 'two' });
    await syncBoard(a.store);
    await syncBoard(b.store);
    await b.store.claimTask(2, { owner: 'mb', lease: { ttlSeconds: 600 } });
    await a.store.claimTask(2, { owner: 'ma', lease: { ttlSeconds: 600 } });
    await a.store.completeTask(2, { actor: 'ma' });
    await syncBoard(a.store);
    const lost = await syncBoard(b.store);
    expect(lost.withdrawn).toEqual([{ id: 2, owner: 'mb', winner: 'ma' }]);
    expect(readdirSync(join(b.store.runtimeDir, 'leases'))).toEqual([]);
  });
});

describe('a sync that was stopped half way', () => {
  it('a ref lock a killed git left is cleared by the next sync; one a running git holds is waited for and named', async () => {
    const [a] = await clones(1);
    await a.store.createTask({ subject: 'one' });
    await syncBoard(a.store);
    const lock = join(a.dir, '.git', 'refs', 'dotasks', 'remote', 'origin', 'tasks.lock');
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    await a.store.createTask({ subject: 'two' });
    const report = await syncBoard(a.store);
    expect(report.outgoing).toEqual([{ id: 2, what: 'created' }]);
    expect(report.notes.join('\n')).toMatch(/removed .*tasks\.lock, left by a git that was stopped/);
    expect(existsSync(lock)).toBe(false);

    // A git of the user's runs in the repository (here: one waiting for its input) while the lock is there.
    writeFileSync(lock, '');
    utimesSync(lock, old, old);
    const user = spawn('git', ['hash-object', '--stdin'], { cwd: a.dir, stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      await a.store.createTask({ subject: 'three' });
      const store = new TaskStore(a.store.dir, { lock: { timeoutMs: 1500 } });
      const error = await refusal(syncBoard(store));
      expect(error.message).toMatch(
        new RegExp(`git's lock .*tasks\\.lock is in the way \\(held by git pid ${user.pid} \\(git hash-object --stdin\\)\\); wait for that git to finish`),
      );
    } finally {
      user.stdin.end();
      await new Promise((r) => user.on('close', r));
    }
    // That sync got as far as the push, not as its own refs: the next one finds its commit on the remote, and
    // nothing is sent twice.
    const next = await syncBoard(a.store);
    expect(next.notes.join('\n')).toMatch(/removed .*tasks\.lock/);
    expect(branchNames(fixture!.bare)).toContain('task_3.json');
    expect(
      git(fixture!.bare, 'log', '--format=%s', 'tasks')
        .split('\n')
        .filter((l) => /created #3/.test(l)),
    ).toHaveLength(1);
  });

  it('a push the remote took, by a sync stopped before it could record it, is the base of the next sync (no false clash)', async () => {
    const [a, b] = await clones(2);
    await a.store.createTask({ subject: 'shared' });
    await syncBoard(a.store);
    await syncBoard(b.store);
    const before = git(a.dir, 'rev-parse', 'refs/dotasks/synced/origin/tasks');
    await a.store.createTask({ subject: 'new on a' });
    await syncBoard(a.store);
    // As if killed between the push and the update of its refs: they still say what they said before.
    const pushed = git(a.dir, 'rev-parse', 'refs/dotasks/synced/origin/tasks');
    git(a.dir, 'update-ref', 'refs/dotasks/synced/origin/tasks', before);
    git(a.dir, 'update-ref', 'refs/dotasks/remote/origin/tasks', before);
    git(a.dir, 'update-ref', 'refs/dotasks/pushing/origin/tasks', pushed);
    await a.store.updateTask(2, { description: 'edited after the push' });
    await b.store.updateTask(1, { description: 'b was here' });
    await syncBoard(b.store);
    const report = await syncBoard(a.store);
    expect(report.renumbered).toEqual([]);
    expect(a.store.loadBoard().tasks.map((t) => t.subject)).toEqual(['shared', 'new on a']);
    await syncBoard(b.store);
    expect(b.store.getTask(2).description).toBe('edited after the push');
  });
});

describe('leases keep their length', () => {
  it('a heartbeat without --lease keeps the length the claim was given', async () => {
    const [a] = await clones(1);
    await a.store.createTask({ subject: 'one' });
    await a.store.claimTask(1, { owner: 'agent-a', lease: { ttlSeconds: 300 } });
    const [lease] = await a.store.heartbeat({ owner: 'agent-a', id: 1 });
    const left = (Date.parse(lease.expiresAt!) - Date.now()) / 1000;
    expect(left).toBeGreaterThan(250);
    expect(left).toBeLessThanOrEqual(300);
    expect(lease.seconds).toBe(300);
    await syncBoard(a.store);
    expect(JSON.parse(git(fixture!.bare, 'show', 'tasks:claims/task_1.json'))).toMatchObject({ leaseSeconds: 300, renewedAt: lease.renewedAt });
  });
});

describe('joining', () => {
  it('a sync, a claim and a sync again work where .runtime/ is missing (a fresh clone, or removed by hand)', async () => {
    const [a] = await clones(1);
    await a.store.createTask({ subject: 'one' });
    rmSync(a.store.runtimeDir, { recursive: true, force: true });
    expect((await syncBoard(a.store)).outgoing).toEqual([{ id: 1, what: 'created' }]);
    rmSync(a.store.runtimeDir, { recursive: true, force: true });
    await a.store.claimTask(1, { owner: 'agent-a' });
    rmSync(join(a.store.runtimeDir, 'events.jsonl'), { force: true });
    expect((await syncBoard(a.store)).outgoing).toEqual([{ id: 1, what: 'claimed by agent-a' }]);
  });
});
