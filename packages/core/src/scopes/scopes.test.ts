import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SCOPES_CACHE_FILE, forgetTrackedFiles, trackedFiles } from '../git/tracked-files.js';
import { TaskStore } from '../store.js';
import { expandScope, inScope, scopesOverlap } from './scopes.js';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

describe('scope overlap rules', () => {
  const files = ['src/a/x.ts', 'src/a/README.md', 'src/b/y.ts', 'docs/parser.md', 'docs/other.md', '.github/ci.yml'];

  it('a scope with no paths overlaps nothing', () => {
    expect(scopesOverlap([], ['**'], files)).toBe(false);
    expect(scopesOverlap(['src/**'], [], files)).toBe(false);
  });

  it('overlaps through a tracked file both globs take, and only then when neither glob covers the other', () => {
    expect(scopesOverlap(['src/a/*.ts'], ['src/**/x.ts'], files)).toBe(true);
    // The same globs without that file: neither takes everything under a prefix, so no overlap.
    expect(scopesOverlap(['src/a/*.ts'], ['src/**/x.ts'], ['src/b/y.ts'])).toBe(false);
    expect(scopesOverlap(['src/**/*.ts'], ['src/**/*.md'], files)).toBe(false);
    expect(scopesOverlap(['**/*.md'], ['docs/**'], files)).toBe(true);
    expect(scopesOverlap(['.github/**'], ['**/*.yml'], files)).toBe(true); // dotfiles count
  });

  it('overlaps by prefix for files that do not exist yet', () => {
    expect(scopesOverlap(['src/a/**'], ['src/a/new/thing.ts'], [])).toBe(true);
    expect(scopesOverlap(['src/a/**'], ['src/a/new/*.ts'], [])).toBe(true);
    expect(scopesOverlap(['./src/a/'], ['src/a/new/*.ts'], [])).toBe(true); // a literal directory covers what is below it
    expect(scopesOverlap(['docs/*.md'], ['docs/new.md'], [])).toBe(true);
    expect(scopesOverlap(['src/{a,c}/**'], ['src/c/z.ts'], [])).toBe(true);
    expect(scopesOverlap(['src/*.ts'], ['src/*.ts'], [])).toBe(true);
    expect(scopesOverlap(['**'], ['anything/at/all'], [])).toBe(true);
    expect(scopesOverlap(['src/a/**'], ['src/b/**'], [])).toBe(false);
    expect(scopesOverlap(['src/a/**'], ['src/ab/x.ts'], [])).toBe(false);
    expect(scopesOverlap(['docs/parser.md'], ['docs/other.md'], files)).toBe(false);
  });

  it('expands globs against the tracked list; ! takes files out', () => {
    expect(expandScope(['src/**', '!**/*.md'], files)).toEqual(['src/a/x.ts', 'src/b/y.ts']);
    expect(expandScope(['src/a'], files)).toEqual(['src/a/x.ts', 'src/a/README.md']);
    expect(inScope('src/b/y.ts', ['src/b/**'])).toBe(true);
    expect(inScope('src/bb/y.ts', ['src/b/**'])).toBe(false);
  });
});

describe('tracked files of the board repository', () => {
  let root = '';
  afterEach(() => {
    forgetTrackedFiles();
    rmSync(root, { recursive: true, force: true });
  });

  const repo = () => {
    root = mkdtempSync(join(tmpdir(), 'dotasks-scopes-'));
    git(root, 'init', '-q', '-b', 'main');
    git(root, 'config', 'user.name', 't');
    git(root, 'config', 'user.email', 't@example.invalid');
    const put = (file: string, text = 'x\n') => {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    };
    put('.gitignore', 'dist/\n');
    put('src/a/x.ts');
    put('src/b/y.ts');
    put('dist/a.js');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'start');
    const store = TaskStore.init(join(root, '.tasks'));
    return { store, put };
  };

  it('lists what git tracks (ignored files never count) and caches it until HEAD moves', async () => {
    const { store, put } = repo();
    const first = await trackedFiles(store.dir);
    expect(first?.files).toEqual(['.gitignore', 'src/a/x.ts', 'src/b/y.ts']);
    const cacheFile = join(store.runtimeDir, SCOPES_CACHE_FILE);
    expect(existsSync(cacheFile)).toBe(true);

    // While HEAD and the index stay, the cached list is the answer (planted here to tell it apart).
    const record = JSON.parse(readFileSync(cacheFile, 'utf8')) as { files: string[] };
    writeFileSync(cacheFile, JSON.stringify({ ...record, files: ['planted.ts'] }));
    forgetTrackedFiles();
    expect((await trackedFiles(store.dir))?.files).toEqual(['planted.ts']);

    // A commit moves HEAD (and rewrites the index): the list is taken again.
    put('src/c/new.ts');
    git(root, 'add', 'src/c/new.ts');
    git(root, 'commit', '-q', '-m', 'more');
    forgetTrackedFiles();
    expect((await trackedFiles(store.dir))?.files).toContain('src/c/new.ts');
    expect((await trackedFiles(store.dir))?.files).not.toContain('planted.ts');
  });

  it('claimNext passes over a task whose scope overlaps one in progress; an explicit claim warns and proceeds', async () => {
    const { store } = repo();
    await store.createTask({ subject: 'A', paths: ['src/a/**'] });
    await store.createTask({ subject: 'A again', paths: ['src/**/x.ts'] }); // overlaps #1 through src/a/x.ts
    await store.createTask({ subject: 'New file in A', paths: ['src/a/brand-new.ts'] }); // by prefix
    await store.createTask({ subject: 'B', paths: ['src/b/**'] });
    await store.createTask({ subject: 'Anywhere' });
    expect((await store.claimNext({ owner: 'w1' })).task.id).toBe(1);
    expect((await store.claimNext({ owner: 'w2' })).task.id).toBe(4);
    expect((await store.claimNext({ owner: 'w3' })).task.id).toBe(5);
    await expect(store.claimNext({ owner: 'w4' })).rejects.toMatchObject({ reason: 'nothing_ready' });

    const explicit = await store.claimTask(3, { owner: 'w4' });
    expect(explicit.task.status).toBe('in_progress');
    expect(explicit.overlaps).toEqual([{ task: 1, owner: 'w1', paths: ['src/a/**'] }]);

    await store.completeTask(1, { actor: 'w1' });
    await store.completeTask(3, { actor: 'w4' });
    expect((await store.claimNext({ owner: 'w1' })).task.id).toBe(2);
  });

  it('claimNext on a board where no task has paths never asks git', async () => {
    const { store } = repo();
    await store.createTask({ subject: 'One' });
    await store.createTask({ subject: 'Two' });
    await store.claimNext({ owner: 'a' });
    await store.claimNext({ owner: 'b' });
    expect(existsSync(join(store.runtimeDir, SCOPES_CACHE_FILE))).toBe(false);
  });
});
