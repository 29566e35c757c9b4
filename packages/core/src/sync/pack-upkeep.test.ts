import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../store.js';
import { serializeTask, taskFileName } from '../format/format.js';
import { syncBoard } from './sync.js';
import { LOOSE_LIMIT } from './pack-upkeep.js';
import { createRemote, git, type RemoteFixture } from '../../test/git-remote.js';

/**
 * What a sync leaves in the clone's object store (object-store.ts,
 * pack-upkeep.ts), read with git's own `count-objects` and `fsck`: the
 * objects of a big first sync in one pack, and loose objects packed once
 * there are LOOSE_LIMIT of them. Real git, in process.
 */

let fixture: RemoteFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

/** `git count-objects -v` of a repository, as numbers. */
function objects(dir: string): { count: number; 'in-pack': number; packs: number } {
  return Object.fromEntries(
    git(dir, 'count-objects', '-v')
      .split('\n')
      .map((line) => line.split(': '))
      .map(([k, v]) => [k, Number(v)]),
  ) as { count: number; 'in-pack': number; packs: number };
}

function packs(dir: string): string[] {
  return readdirSync(join(dir, '.git', 'objects', 'pack'))
    .filter((n) => n.endsWith('.pack'))
    .sort();
}

async function boardOf(tasks: number): Promise<{ dir: string; store: TaskStore }> {
  fixture = await createRemote({ prefix: 'dotasks-packs-' });
  const dir = fixture.clone('clone1');
  const store = TaskStore.init(join(dir, '.tasks'));
  for (let id = 1; id <= tasks; id++)
    writeFileSync(
      join(store.dir, taskFileName(id)),
      serializeTask({ id, subject: `task ${id}`, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {} }),
    );
  writeFileSync(join(store.dir, '.highwatermark'), `${tasks}\n`);
  return { dir, store };
}

describe("the clone's object store", () => {
  it('the first sync of a board of 300 tasks writes its objects in one pack, not a loose file each, git reads every one of them, and its message lists 200 of them', async () => {
    const { dir, store } = await boardOf(300);
    await syncBoard(store);
    const after = objects(dir);
    expect(after.count).toBeLessThan(10);
    expect(after['in-pack']).toBeGreaterThanOrEqual(300);
    expect(readdirSync(store.dir)).not.toContain('.git');
    execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir, stdio: 'pipe' });
    expect(
      git(fixture!.bare, 'ls-tree', '-r', '--name-only', 'tasks')
        .split('\n')
        .filter((p) => p.startsWith('tasks/')),
    ).toHaveLength(300);
    // Its message lists the first 200 changes, not every task: every later sync reads the head commit.
    const message = git(fixture!.bare, 'log', '-1', '--format=%B', 'tasks').split('\n');
    expect(message.filter((line) => /^created #\d+$/.test(line))).toHaveLength(200);
    expect(message).toContain('and 100 more');
  });

  it("a sync packs the loose objects once there are enough of them, the repository owner's with its own, and leaves the big pack as it is", async () => {
    const { dir, store } = await boardOf(300);
    await syncBoard(store);
    const [first] = packs(dir);
    // Loose objects of the owner's (as `git add` leaves them), past the limit.
    const scratch = mkdtempSync(join(tmpdir(), 'dotasks-blobs-'));
    const paths = Array.from({ length: LOOSE_LIMIT + 20 }, (_, i) => {
      const path = join(scratch, `blob${i}`);
      writeFileSync(path, `the owner's work ${i}\n`);
      return path;
    });
    const blobs = execFileSync('git', ['hash-object', '-w', '--stdin-paths'], { cwd: dir, input: paths.join('\n') + '\n', encoding: 'utf8' })
      .trim()
      .split('\n');
    rmSync(scratch, { recursive: true, force: true });
    expect(objects(dir).count).toBeGreaterThanOrEqual(LOOSE_LIMIT + 20);
    await store.updateTask(7, { description: 'one change' });
    await syncBoard(store);
    expect(objects(dir).count).toBe(0);
    expect(packs(dir)).toContain(first);
    execFileSync('git', ['cat-file', '--batch-check'], { cwd: dir, input: blobs.join('\n') + '\n', encoding: 'utf8' })
      .trim()
      .split('\n')
      .forEach((line) => expect(line).toMatch(/ blob /));
    execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir, stdio: 'pipe' });
  });

  it('a repository of SHA-256 ids is refused before anything is written, with one line that says why', async () => {
    fixture = await createRemote({ prefix: 'dotasks-packs-' });
    const dir = join(fixture.root, 'sha256');
    git(fixture.root, 'init', '-q', '--object-format=sha256', dir);
    git(dir, 'remote', 'add', 'origin', join(fixture.root, 'nowhere.git'));
    const store = TaskStore.init(join(dir, '.tasks'));
    await store.createTask({ subject: 'one' });
    await expect(syncBoard(store)).rejects.toThrow("this repository's object format is sha256; tasks sync works with SHA-1 repositories only");
    expect(objects(dir).count).toBe(0);
  });
});
