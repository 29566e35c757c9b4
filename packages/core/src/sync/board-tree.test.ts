import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../store.js';
import { TasksError } from '../errors.js';
import { serializeTask, taskFileName } from '../format/format.js';
import { syncBoard } from './sync.js';
import { SyncMemory } from './sync-memory.js';
import { boardFiles, createRemote, git, onBranch, pushToBoardBranch, until, type RemoteFixture } from '../../test/git-remote.js';

/**
 * The board branch's sharded tree (board-tree.ts) and the sync that finds
 * nothing to do (quiet-sync.ts): what a push adds to the remote, a flat
 * branch an earlier dotasks wrote, and that the look which lets a sync end
 * early still sees every change made by hand. Real git, in process.
 */

let fixture: RemoteFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

async function clones(n: number): Promise<TaskStore[]> {
  fixture = await createRemote();
  return Array.from({ length: n }, (_, i) => TaskStore.init(join(fixture!.clone(`clone${i + 1}`), '.tasks')));
}

/** A board of `n` tasks written straight to its files (a few thousand in a fraction of a second). */
function writeTasks(store: TaskStore, n: number): void {
  for (let id = 1; id <= n; id++)
    writeFileSync(
      join(store.dir, taskFileName(id)),
      serializeTask({ id, subject: `task ${id}`, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {} }),
    );
  writeFileSync(join(store.dir, '.highwatermark'), `${n}\n`);
}

/** The objects the remote gained from `from` to its branch's head, with their sizes. */
function addedObjects(bare: string, from: string): { id: string; type: string; size: number }[] {
  const ids = git(bare, 'rev-list', '--objects', `${from}..tasks`)
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ')[0]);
  const info = execFileSync('git', ['cat-file', '--batch-check=%(objectname) %(objecttype) %(objectsize)'], {
    cwd: bare,
    input: ids.join('\n') + '\n',
    encoding: 'utf8',
  });
  return info
    .trim()
    .split('\n')
    .map((line) => {
      const [id, type, size] = line.split(' ');
      return { id, type, size: Number(size) };
    });
}

const task = (id: number, subject: string) =>
  serializeTask({ id, subject, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {} });

describe('the board branch, sharded by id', () => {
  it('a sync that changes one task of 3,000 adds a handful of small objects to the remote, not a tree of the whole board', async () => {
    const [a] = await clones(1);
    writeTasks(a, 3000);
    await syncBoard(a);
    expect(git(fixture!.bare, 'ls-tree', '--name-only', 'tasks:tasks').split('\n')).toHaveLength(31); // 0 … 30
    const before = git(fixture!.bare, 'rev-parse', 'tasks');
    await a.updateTask(1234, { description: 'one change' });
    expect((await syncBoard(a)).outgoing).toEqual([{ id: 1234, what: 'updated' }]);
    const added = addedObjects(fixture!.bare, before);
    // A flat tree of 3,000 entries alone is about 130 kB.
    expect(added.reduce((sum, o) => sum + o.size, 0)).toBeLessThan(8_000);
    // The blob, its shard's tree (100 entries), the tasks tree (31), the root tree, the commit.
    expect(added.map((o) => o.type).sort()).toEqual(['blob', 'commit', 'tree', 'tree', 'tree']);
    expect(added.length).toBeLessThanOrEqual(6);
    expect(git(fixture!.bare, 'show', 'tasks:tasks/12/task_1234.json')).toMatch(/one change/);
    expect(git(fixture!.bare, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('a flat branch an earlier dotasks wrote (format 1) is read, and moved into shards by the next push', async () => {
    const [a] = await clones(1);
    const marker = JSON.stringify({ board: 'dotasks', format: 1, about: 'A dotasks task board' }, null, 2) + '\n';
    pushToBoardBranch(
      fixture!,
      { '.dotasks-board': marker, 'task_1.json': task(1, 'one'), 'task_2.json': task(2, 'two'), 'task_250.json': task(250, 'far'), '.highwatermark': '250\n' },
      { orphan: true },
    );
    const blobOfOne = git(fixture!.bare, 'rev-parse', 'tasks:task_1.json');
    const got = await syncBoard(a);
    expect(got.incoming.map((c) => c.id)).toEqual([1, 2, 250]);
    expect(a.getTask(250).subject).toBe('far');
    await a.updateTask(2, { subject: 'two, changed' });
    await syncBoard(a);
    // No task file and no format 1 marker at the root: a dotasks that knows only format 1 refuses the branch as not its own.
    expect(git(fixture!.bare, 'ls-tree', '--name-only', 'tasks').split('\n')).toEqual(['.dotasks-board-v2', '.highwatermark', 'tasks']);
    expect(git(fixture!.bare, 'ls-tree', '-r', '--name-only', 'tasks:tasks').split('\n')).toEqual(['0/task_1.json', '0/task_2.json', '2/task_250.json']);
    expect(JSON.parse(git(fixture!.bare, 'show', 'tasks:.dotasks-board-v2'))).toMatchObject({ board: 'dotasks', format: 2 });
    // The unchanged file moved as it was (the same blob), the changed one went out.
    expect(git(fixture!.bare, 'rev-parse', 'tasks:tasks/0/task_1.json')).toBe(blobOfOne);
    expect(git(fixture!.bare, 'show', 'tasks:tasks/0/task_2.json')).toMatch(/two, changed/);
    expect((await syncBoard(a)).incoming).toEqual([]);
  });

  it('a branch of a later format is refused, with nothing changed here', async () => {
    const [a] = await clones(1);
    await a.createTask({ subject: 'here' });
    const marker = JSON.stringify({ board: 'dotasks', format: 3, about: 'from the future' }) + '\n';
    pushToBoardBranch(fixture!, { '.dotasks-board-v2': marker, 'shelf/a.json': '{}\n' }, { orphan: true });
    const before = boardFiles(a.dir);
    const error = await syncBoard(a).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TasksError);
    expect((error as TasksError).details.reason).toBe('newer');
    expect((error as TasksError).message).toMatch(
      /origin\/tasks was written by a newer dotasks \(board format 3; this one reads up to 2\); nothing was changed/,
    );
    expect(boardFiles(a.dir)).toEqual(before);
  });
});

describe('a sync with nothing to do', () => {
  /** A sync that must not take the board lock: the test holds it, and the board waits for it only 1 s. */
  async function syncWithoutBoardLock(store: TaskStore): Promise<unknown> {
    let outcome: unknown;
    await store.transact({ board: true }, async () => {
      outcome = await syncBoard(new TaskStore(store.dir), { memory: new SyncMemory() }).then(
        (report) => report,
        (error: unknown) => error,
      );
    });
    return outcome;
  }

  /** Waits until the file system's clock is past every board file's ctime: only then can a look trust what it saw. */
  async function clockPast(store: TaskStore): Promise<void> {
    const newest = Math.max(...readdirSync(store.dir).map((n) => statSync(join(store.dir, n)).ctimeMs));
    const probe = join(store.runtimeDir, 'clock-probe');
    await until(
      () => {
        writeFileSync(probe, '');
        return statSync(probe).ctimeMs > newest;
      },
      { what: "the file system's clock to move on", every: 5 },
    );
  }

  it('ends after the fetch, without the board lock; a hand edit in place and a file replaced by a rename are still seen', async () => {
    const [a, b] = await clones(2);
    writeFileSync(join(a.dir, 'config.json'), JSON.stringify({ lockTimeoutSeconds: 1 }) + '\n');
    const store = new TaskStore(a.dir);
    await store.createTask({ subject: 'first' });
    await store.createTask({ subject: 'second' });
    await syncBoard(store);
    await syncBoard(b);
    // A sync records that the board and the remote are equal, once what it saw is older than the file system's clock.
    await clockPast(store);
    await syncBoard(store);
    const quiet = await syncWithoutBoardLock(store);
    expect(quiet).toMatchObject({ incoming: [], outgoing: [], rounds: 1 });

    // In place, the same size, its mtime put back: the file's ctime still moves.
    const path = store.taskPath(1);
    const stat = statSync(path);
    writeFileSync(path, readFileSync(path, 'utf8').replace('first', 'FIRST'));
    utimesSync(path, stat.atime, stat.mtime);
    expect(statSync(path).size).toBe(stat.size);
    expect((await syncBoard(store)).outgoing).toEqual([{ id: 1, what: 'updated' }]);

    // Replaced by a rename, as git checkout writes a file: a new inode.
    const second = store.taskPath(2);
    const old = statSync(second);
    writeFileSync(`${second}.tmp`, readFileSync(second, 'utf8').replace('second', 'SECOND'));
    utimesSync(`${second}.tmp`, old.atime, old.mtime);
    renameSync(`${second}.tmp`, second);
    expect((await syncBoard(store)).outgoing).toEqual([{ id: 2, what: 'updated' }]);

    await syncBoard(b);
    expect(b.getTask(1).subject).toBe('FIRST');
    expect(b.getTask(2).subject).toBe('SECOND');
    // A change on the remote moves its head: the next sync merges again and brings it in.
    await b.updateTask(1, { description: 'from b' });
    await syncBoard(b);
    await syncBoard(store);
    expect(store.getTask(1).description).toBe('from b');
    await clockPast(store);
    await syncBoard(store);
    expect(await syncWithoutBoardLock(store)).toMatchObject({ incoming: [], outgoing: [] });
  });

  it('on a board with a history to fold, the look is the open files and the index: an open task edited in place by hand still goes out', async () => {
    const [a] = await clones(1);
    writeFileSync(join(a.dir, 'config.json'), JSON.stringify({ lockTimeoutSeconds: 1 }) + '\n');
    for (let id = 1; id <= 300; id++)
      writeFileSync(
        join(a.dir, taskFileName(id)),
        serializeTask({
          id,
          subject: `task ${id}`,
          description: '',
          status: id <= 250 ? 'completed' : 'pending',
          owner: '',
          blockedBy: [],
          blocks: [],
          extra: {},
        }),
      );
    writeFileSync(join(a.dir, '.highwatermark'), '300\n');
    const store = new TaskStore(a.dir);
    await syncBoard(store);
    await clockPast(store);
    await syncBoard(store);
    expect(await syncWithoutBoardLock(store)).toMatchObject({ incoming: [], outgoing: [], rounds: 1 });
    const path = store.taskPath(280);
    const stat = statSync(path);
    writeFileSync(path, readFileSync(path, 'utf8').replace('task 280', 'TASK 280'));
    utimesSync(path, stat.atime, stat.mtime);
    expect((await syncBoard(store)).outgoing).toEqual([{ id: 280, what: 'updated' }]);
    await clockPast(store);
    await syncBoard(store);
    expect(await syncWithoutBoardLock(store)).toMatchObject({ incoming: [], outgoing: [] });
    // A command's change of a closed task (a note) moves the index: seen at once, not when the sweep comes round.
    await store.updateTask(3, { description: 'a note after the fact' });
    expect((await syncBoard(store)).outgoing).toEqual([{ id: 3, what: 'updated' }]);
  });

  it("a look that sends nothing out (a claim by ref looks before it claims) leaves this board's changes for the next sync to push", async () => {
    fixture = await createRemote();
    const store = TaskStore.init(join(fixture.clone('clone1'), '.tasks'));
    await store.createTask({ subject: 'first' });
    await syncBoard(store);
    await store.updateTask(1, { description: 'changed here' });
    await clockPast(store);
    // A worker finished a task, then found nothing to claim: its look brought the remote in and sent nothing.
    await syncBoard(store, { keepOut: true });
    expect((await syncBoard(store)).outgoing).toEqual([{ id: 1, what: 'updated' }]);
    expect(JSON.parse(git(fixture.bare, 'show', `tasks:${onBranch('task_1.json')}`))).toMatchObject({ description: 'changed here' });
  });
});
