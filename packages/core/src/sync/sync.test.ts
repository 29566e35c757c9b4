import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../store.js';
import { syncBoard } from './sync.js';
import { TasksError } from '../errors.js';
import { createRemote, git, type RemoteFixture } from '../../test/git-remote.js';

/**
 * `tasks sync` against real remotes on this machine: a bare repository by
 * path, and one served by `git daemon` on 127.0.0.1. Clones never share
 * anything but the remote.
 */

let fixture: RemoteFixture | undefined;
let root = '';
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
  root = '';
});

/** A bare remote with one commit on main (served by git daemon with `daemon`), and `n` clones of it, each with an empty board. */
async function setup(n: number, options: { daemon?: boolean } = {}): Promise<{ bare: string; clones: { dir: string; store: TaskStore }[] }> {
  fixture = await createRemote({ daemon: options.daemon, prefix: 'dotasks-sync-' });
  root = fixture.root;
  const clones = Array.from({ length: n }, (_, i) => {
    const dir = fixture!.clone(`clone${i + 1}`);
    return { dir, store: TaskStore.init(join(dir, '.tasks')) };
  });
  return { bare: fixture.bare, clones };
}

/** The board's shared files (task files and high-water mark) with their bytes. */
function boardFiles(store: TaskStore): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(store.dir).sort())
    if (/^task_\d+\.json$|^\.highwatermark$/.test(name)) out[name] = readFileSync(join(store.dir, name), 'utf8');
  return out;
}

describe('tasks sync', () => {
  it('brings tasks created in one clone to another, on the tasks branch, without touching HEAD, the index or the work tree', async () => {
    const { bare, clones } = await setup(2);
    const [a, b] = clones;
    await a.store.createTask({ subject: 'parse the config' });
    await a.store.createTask({ subject: 'write the docs', blockedBy: [1] });
    writeFileSync(join(a.dir, 'README.md'), '# project\nuncommitted work\n');
    const headBefore = git(a.dir, 'rev-parse', 'HEAD');
    const statusBefore = git(a.dir, 'status', '--porcelain');

    const out = await syncBoard(a.store);
    expect(out.outgoing.map((c) => c.id)).toEqual([1, 2]);
    expect(git(a.dir, 'rev-parse', 'HEAD')).toBe(headBefore);
    expect(git(a.dir, 'status', '--porcelain')).toBe(statusBefore);
    expect(git(bare, 'ls-tree', '--name-only', 'tasks').split('\n').sort()).toEqual(['.dotasks-board-v2', '.highwatermark', 'tasks']);
    expect(git(bare, 'ls-tree', '-r', '--name-only', 'tasks:tasks').split('\n').sort()).toEqual(['0/task_1.json', '0/task_2.json']);
    expect(git(bare, 'log', '-1', '--format=%s', 'tasks')).toMatch(/created #1, created #2/);

    const inB = await syncBoard(b.store);
    expect(inB.incoming.map((c) => c.id)).toEqual([1, 2]);
    expect(inB.outgoing).toEqual([]);
    expect(boardFiles(b.store)).toEqual(boardFiles(a.store));
    expect(b.store.getTask(2).blockedBy).toEqual([1]);
  });

  it('merges field by field: changes to different fields of one task on two clones both land', async () => {
    const { clones } = await setup(2);
    const [a, b] = clones;
    await a.store.createTask({ subject: 'one' });
    await a.store.createTask({ subject: 'two' });
    await syncBoard(a.store);
    await syncBoard(b.store);
    await a.store.updateTask(1, { description: 'from a' });
    await b.store.updateTask(1, { metadata: { area: 'parser' } });
    await b.store.updateTask(2, { addBlockedBy: [1] });
    await syncBoard(a.store);
    const fromB = await syncBoard(b.store);
    expect(fromB.conflicts).toEqual([]);
    await syncBoard(a.store);
    for (const c of clones) {
      expect(c.store.getTask(1).description).toBe('from a');
      expect(c.store.getTask(1).metadata).toEqual({ area: 'parser' });
      expect(c.store.getTask(1).blocks).toEqual([2]);
    }
    expect(boardFiles(a.store)).toEqual(boardFiles(b.store));
  });

  it('of two clones claiming one task, the one that synced first keeps it; the other claim is withdrawn and its lease dropped', async () => {
    const { clones } = await setup(2);
    const [a, b] = clones;
    await a.store.createTask({ subject: 'contested' });
    await syncBoard(a.store);
    await syncBoard(b.store);
    await a.store.claimTask(1, { owner: 'agent-a', lease: { ttlSeconds: 600 } });
    await b.store.claimTask(1, { owner: 'agent-b', lease: { ttlSeconds: 600 } });

    const first = await syncBoard(a.store);
    expect(first.withdrawn).toEqual([]);
    const second = await syncBoard(b.store);
    expect(second.withdrawn).toEqual([{ id: 1, owner: 'agent-b', winner: 'agent-a' }]);
    expect(second.conflicts.map((c) => c.field).sort()).toEqual(['owner']);
    expect(b.store.getTask(1)).toMatchObject({ status: 'in_progress', owner: 'agent-a' });
    expect(readdirSync(join(b.store.runtimeDir, 'leases'))).toEqual([]);
    await syncBoard(a.store);
    expect(boardFiles(a.store)).toEqual(boardFiles(b.store));
  });

  it('two clones creating 20 tasks each offline end with 40 distinct ids and every edge on both sides', async () => {
    const { clones } = await setup(2);
    const [a, b] = clones;
    for (const [c, name] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      for (let i = 1; i <= 20; i++) await c.store.createTask({ subject: `${name}${i}`, blockedBy: i > 1 ? [i - 1] : [] });
    }
    await syncBoard(a.store);
    const moved = await syncBoard(b.store);
    expect(moved.renumbered).toHaveLength(20);
    await syncBoard(a.store);
    expect(boardFiles(a.store)).toEqual(boardFiles(b.store));
    const tasks = a.store.loadBoard().tasks;
    expect(tasks.map((t) => t.id)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(new Set(tasks.map((t) => t.subject)).size).toBe(40);
    const bySubject = new Map(tasks.map((t) => [t.subject, t]));
    for (const name of ['a', 'b'])
      for (let i = 2; i <= 20; i++) {
        const t = bySubject.get(`${name}${i}`)!;
        const prev = bySubject.get(`${name}${i - 1}`)!;
        expect(t.blockedBy).toEqual([prev.id]);
        expect(prev.blocks).toEqual([t.id]);
      }
    expect(readFileSync(join(a.store.dir, '.highwatermark'), 'utf8')).toBe('40\n');
    // An id once on the remote is never handed out again.
    const next = await b.store.createTask({ subject: 'after' });
    expect(next.task.id).toBe(41);
  });

  it('retries when another clone pushes first, and says when there is no such remote', async () => {
    const { clones } = await setup(3);
    const [a, b, c] = clones;
    await a.store.createTask({ subject: 'a' });
    await b.store.createTask({ subject: 'b' });
    await c.store.createTask({ subject: 'c' });
    const reports = await Promise.all(clones.map((x) => syncBoard(x.store)));
    expect(reports.map((r) => r.head).filter(Boolean).length).toBe(3);
    for (const x of clones) await syncBoard(x.store);
    const files = clones.map((x) => boardFiles(x.store));
    expect(files[1]).toEqual(files[0]);
    expect(files[2]).toEqual(files[0]);
    expect(Object.keys(files[0]).filter((n) => n.startsWith('task_'))).toHaveLength(3);

    const error = await syncBoard(a.store, { remote: 'nowhere' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TasksError);
    expect((error as TasksError).message).toMatch(/no git remote named 'nowhere'/);
  });

  it('brings in a hundred changes to tasks this clone has, in one transaction that asks for their locks at once', async () => {
    const { clones } = await setup(2);
    const [a, b] = clones;
    await a.store.batchWrite(Array.from({ length: 120 }, (_, i) => ({ subject: `task ${i + 1}` })));
    await syncBoard(a.store);
    await syncBoard(b.store);
    await a.store.batchWrite(Array.from({ length: 120 }, (_, i) => ({ id: i + 1, description: `changed on a ${i + 1}` })));
    await syncBoard(a.store);
    const got = await syncBoard(b.store);
    expect(got.incoming).toHaveLength(120);
    expect(b.store.getTask(120).description).toBe('changed on a 120');
    expect(boardFiles(b.store)).toEqual(boardFiles(a.store));
  });

  it('writes the trees it pushes in the order git sorts them, keeping the files and folders it does not know', async () => {
    const { bare, clones } = await setup(1);
    const [a] = clones;
    await a.store.createTask({ subject: 'one' });
    await a.store.claimTask(1, { owner: 'agent-1', lease: { ttlSeconds: 600 } });
    await syncBoard(a.store);
    // Someone adds names that sort around the claims folder ("claims-x" < "claims.y" < "claims/" < "claimsz").
    const work = join(root, 'other');
    git(root, 'clone', '-q', '-b', 'tasks', bare, work);
    for (const name of ['claims-x', 'claims.y', 'claimsz', 'zz/inner.txt']) {
      const path = join(work, name);
      if (name.includes('/')) execFileSync('mkdir', ['-p', join(path, '..')]);
      writeFileSync(path, `${name}\n`);
    }
    git(work, 'add', '.');
    git(work, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'names around claims');
    git(work, 'push', '-q', 'origin', 'tasks');
    // A change here makes the sync write a new top tree (and a new claims tree) on top of that one.
    await a.store.createTask({ subject: 'two' });
    await a.store.claimTask(2, { owner: 'agent-2', lease: { ttlSeconds: 600 } });
    await syncBoard(a.store);
    const listing = git(bare, 'ls-tree', 'tasks');
    expect(listing).toMatch(/claims-x[\s\S]*claims\.y[\s\S]*\tclaims\n[\s\S]*claimsz[\s\S]*zz/);
    // git mktree writes the canonical tree for the same entries: the same id, or the order was wrong.
    expect(execFileSync('git', ['mktree'], { cwd: bare, input: listing + '\n', encoding: 'utf8' }).trim()).toBe(git(bare, 'rev-parse', 'tasks^{tree}'));
    const claims = git(bare, 'ls-tree', 'tasks:claims');
    expect(execFileSync('git', ['mktree'], { cwd: bare, input: claims + '\n', encoding: 'utf8' }).trim()).toBe(git(bare, 'rev-parse', 'tasks:claims'));
    expect(claims.split('\n').map((l) => l.split('\t')[1])).toEqual(['task_1.json', 'task_2.json']);
    expect(git(bare, 'fsck', '--strict', '--no-dangling')).toBe('');
  });

  it('works through git daemon on 127.0.0.1', async () => {
    const { clones } = await setup(2, { daemon: true });
    const [sa, sb] = clones.map((c) => c.store);
    await sa.createTask({ subject: 'over the wire' });
    await syncBoard(sa);
    const got = await syncBoard(sb);
    expect(got.incoming).toEqual([{ id: 1, what: 'created' }]);
    expect(sb.getTask(1).subject).toBe('over the wire');
    expect(git(clones[0].dir, 'remote', 'get-url', 'origin')).toMatch(/^git:\/\/127\.0\.0\.1:\d+\/remote\.git$/);
  });
});
