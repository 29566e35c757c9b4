/**
 * Shared fixtures for the tests of several machines: a bare remote on this
 * machine (by path, or served by `git daemon` on 127.0.0.1), clones of it,
 * the child processes a test starts (stopped, whatever happens, before its
 * folder is removed), and waits that poll for progress instead of trusting
 * a fixed time on a machine that may be busy.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** A test's folder with a bare remote (one commit on main) and what it started; `cleanup` stops it all and removes the folder. */
export interface RemoteFixture {
  root: string;
  bare: string;
  /** How clones reach the remote: the bare repository's path, or its git:// URL. */
  url: string;
  /** Clones the remote into `root/name` with a committer identity of its own. */
  clone(name: string): string;
  /** Starts a process that `cleanup` kills (its whole group) if it is still running. */
  track<T extends ChildProcess>(child: T): T;
  cleanup(): Promise<void>;
}

/**
 * A copy of a prepared fixture (a bare remote by path and its clones), for
 * tests that all start from one scenario that is costly to build: the
 * clones' `origin` is pointed at the copy's remote.
 */
export function copyRemote(template: RemoteFixture, prefix = 'dotasks-remote-'): RemoteFixture {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  cpSync(template.root, root, { recursive: true });
  const bare = join(root, 'remote.git');
  for (const name of readdirSync(root))
    if (name !== 'remote.git' && existsSync(join(root, name, '.git'))) git(join(root, name), 'remote', 'set-url', 'origin', bare);
  return fixtureAt(root, bare, bare, []);
}

/** The fixture of a folder holding a bare remote at `bare`, reached at `url`. */
function fixtureAt(root: string, bare: string, url: string, children: ChildProcess[]): RemoteFixture {
  return {
    root,
    bare,
    url,
    clone(name) {
      const dir = join(root, name);
      git(root, 'clone', '-q', url, dir);
      git(dir, 'config', 'user.name', name);
      git(dir, 'config', 'user.email', `${name}@example.invalid`);
      return dir;
    },
    track: <T extends ChildProcess>(child: T): T => {
      children.push(child);
      return child;
    },
    async cleanup() {
      await Promise.all(children.map(stopChild));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Makes the remote, and with `daemon` serves it through `git daemon` on 127.0.0.1. */
export async function createRemote(options: { daemon?: boolean; prefix?: string } = {}): Promise<RemoteFixture> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), options.prefix ?? 'dotasks-remote-')));
  const bare = join(root, 'remote.git');
  git(root, 'init', '-q', '--bare', '-b', 'main', bare);
  const seed = join(root, 'seed');
  git(root, 'init', '-q', '-b', 'main', seed);
  writeFileSync(join(seed, 'README.md'), '# project\n');
  git(seed, 'add', '.');
  git(seed, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'start');
  git(seed, 'push', '-q', bare, 'main');
  rmSync(seed, { recursive: true, force: true });
  const children: ChildProcess[] = [];
  const track = <T extends ChildProcess>(child: T): T => {
    children.push(child);
    return child;
  };
  let url = bare;
  if (options.daemon) {
    const port = await freePort();
    track(
      spawn('git', ['daemon', '--reuseaddr', '--export-all', '--enable=receive-pack', `--base-path=${root}`, '--listen=127.0.0.1', `--port=${port}`, root], {
        stdio: 'ignore',
        detached: true,
      }),
    );
    await until(() => canConnect(port), { what: 'git daemon to listen', ms: 20_000 });
    url = `git://127.0.0.1:${port}/remote.git`;
  }
  return fixtureAt(root, bare, url, children);
}

/** Kills a child's process group (it may have children of its own) and waits for it to be gone. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('close', resolve));
  try {
    process.kill(-child.pid!, 'SIGKILL'); // a detached child leads a group of its own
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      // gone already
    }
  }
  await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 5000))]);
}

/**
 * Polls `check` until it holds. The deadline is `ms` from the last sign of
 * progress (`progress()` returning something new), so a slow but moving
 * scenario on a busy machine is waited for, and a stuck one still fails.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  options: { what: string; ms?: number; every?: number; progress?: () => unknown } = { what: 'a condition' },
): Promise<void> {
  const ms = options.ms ?? 30_000;
  let deadline = Date.now() + ms;
  let last = options.progress?.();
  while (!(await check())) {
    const now = options.progress?.();
    if (options.progress && JSON.stringify(now) !== JSON.stringify(last)) {
      last = now;
      deadline = Date.now() + ms;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what} (no progress for ${ms} ms)`);
    await new Promise((r) => setTimeout(r, options.every ?? 100));
  }
}

/** The board's shared files (task files and high-water mark) with their bytes. */
export function boardFiles(board: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(board).sort()) if (/^task_\d+\.json$|^\.highwatermark$/.test(name)) out[name] = readFileSync(join(board, name), 'utf8');
  return out;
}

/** A port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Whether something listens on 127.0.0.1:`port`. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** Where a task file sits on a board branch (format 2: `tasks/<N div 100>/task_N.json`). */
export function onBranch(name: string): string {
  const id = Number(/^task_(\d+)\.json$/.exec(name)?.[1]);
  return Number.isInteger(id) ? `tasks/${Math.floor(id / 100)}/${name}` : name;
}

/** The task file names a board branch holds (in their shards), and its other names at the root, sorted. */
export function branchNames(bare: string, branch = 'tasks'): string[] {
  const all = git(bare, 'ls-tree', '-r', '--name-only', branch).split('\n').filter(Boolean);
  return all
    .map((path) => (path.startsWith('tasks/') ? path.split('/').pop()! : path.split('/')[0]))
    .filter((n, i, list) => list.indexOf(n) === i)
    .sort();
}

/** Writes commits onto the remote's board branch as a person with git would: `files` (null removes) on top of its head, or instead of it with `orphan`. */
export function pushToBoardBranch(
  fixture: RemoteFixture,
  files: Record<string, string | null | { folder: Record<string, string> }>,
  options: { orphan?: boolean; branch?: string; message?: string } = {},
): string {
  const branch = options.branch ?? 'tasks';
  const work = mkdtempSync(join(fixture.root, 'hand-'));
  try {
    git(work, 'init', '-q');
    git(work, 'remote', 'add', 'origin', fixture.bare);
    const exists = execFileSync('git', ['ls-remote', '--heads', fixture.bare, branch], { encoding: 'utf8' }).trim() !== '';
    if (exists && !options.orphan) {
      git(work, 'fetch', '-q', 'origin', branch);
      git(work, 'checkout', '-q', '-b', branch, 'FETCH_HEAD');
    } else git(work, 'checkout', '-q', '--orphan', branch);
    for (const [name, content] of Object.entries(files)) {
      const path = join(work, name);
      if (content === null) git(work, 'rm', '-rq', '--ignore-unmatch', name);
      else if (typeof content === 'string') {
        execFileSync('mkdir', ['-p', join(path, '..')]);
        writeFileSync(path, content);
      } else {
        execFileSync('mkdir', ['-p', path]);
        for (const [inner, text] of Object.entries(content.folder)) writeFileSync(join(path, inner), text);
      }
    }
    git(work, 'add', '-A');
    git(work, '-c', 'user.name=person', '-c', 'user.email=p@p', 'commit', '-q', '--allow-empty', '-m', options.message ?? 'by hand');
    git(work, 'push', '-q', '--force', 'origin', `HEAD:refs/heads/${branch}`);
    return git(work, 'rev-parse', 'HEAD');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
