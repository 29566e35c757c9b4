import { TasksError, isErrnoException } from '../errors.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { existsSync, readFileSync, statSync } = process.getBuiltinModule('node:fs');
const { basename, dirname, isAbsolute, join, resolve } = process.getBuiltinModule('node:path');
const { userInfo } = process.getBuiltinModule('node:os');

export const BOARD_DIR_NAME = '.tasks';

/** Where to look for a board (docs/protocol.md, "Where the board is"). */
export interface FindBoardOptions {
  /** `--dir PATH`: the board directory itself. */
  dir?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Facts about the git checkout a directory is in. */
export interface GitLocation {
  /** The top of the worktree the directory is in. */
  worktreeRoot: string;
  /** The main worktree: the directory holding the common git dir. */
  mainRoot: string;
  /** True when the directory is in a linked worktree (not the main checkout). */
  linked: boolean;
  /** This worktree's own git dir (`.git` of the main checkout, `.git/worktrees/NAME` of a linked one), when known. */
  gitDir?: string;
}

/**
 * A file in a linked worktree's own git dir naming who works there; written by
 * `tasks claim --worktree` so commands run inside act as the claimant.
 */
export const WORKTREE_OWNER_FILE = 'tasks-owner';

/**
 * Locates the git checkout of `cwd` by reading `.git` files directly (no git
 * process on the hot path); falls back to `git rev-parse` for layouts it
 * does not know.
 */
export function locateGit(cwd: string): GitLocation | undefined {
  let dir = resolve(cwd);
  for (;;) {
    const dotGit = join(dir, '.git');
    let isDir: boolean | undefined;
    try {
      isDir = statSync(dotGit).isDirectory();
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT') && !isErrnoException(error, 'ENOTDIR')) throw error;
    }
    if (isDir === true) return { worktreeRoot: dir, mainRoot: dir, linked: false, gitDir: dotGit };
    if (isDir === false) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
      if (m) {
        const gitDir = isAbsolute(m[1]) ? m[1] : resolve(dir, m[1]);
        const commonFile = join(gitDir, 'commondir');
        if (existsSync(commonFile)) {
          const common = readFileSync(commonFile, 'utf8').trim();
          const commonDir = isAbsolute(common) ? common : resolve(gitDir, common);
          return { worktreeRoot: dir, mainRoot: dirname(commonDir), linked: true, gitDir };
        }
        // A submodule or a separate git dir: this directory is its own main checkout.
        return { worktreeRoot: dir, mainRoot: dir, linked: false, gitDir };
      }
      return locateGitWithGit(cwd);
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function locateGitWithGit(cwd: string): GitLocation | undefined {
  try {
    // Loaded here, not at the top: only this rare fallback needs it, and it costs `tasks list` milliseconds to load.
    const { execFileSync } = process.getBuiltinModule('node:child_process');
    const out = execFileSync('git', ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir', '--absolute-git-dir'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).split('\n');
    const worktreeRoot = out[0];
    const mainRoot = dirname(out[1]);
    return { worktreeRoot, mainRoot, linked: worktreeRoot !== mainRoot, gitDir: out[2] };
  } catch {
    return undefined;
  }
}

/**
 * Resolves the board directory without requiring it to exist (for `init`):
 * `--dir`, then TASKS_DIR, then the main worktree's `.tasks/`, then the
 * nearest existing `.tasks/` upwards, then `./.tasks`.
 */
export function resolveBoardDir(options: FindBoardOptions = {}): { dir: string; tried: string[]; via: string } {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  if (options.dir) return { dir: resolve(cwd, options.dir), tried: [], via: '--dir' };
  if (env.TASKS_DIR) return { dir: resolve(cwd, env.TASKS_DIR), tried: [], via: 'TASKS_DIR' };
  const git = locateGit(cwd);
  if (git) return { dir: join(git.mainRoot, BOARD_DIR_NAME), tried: [], via: 'git' };
  const tried: string[] = [];
  let dir = resolve(cwd);
  for (;;) {
    const candidate = join(dir, BOARD_DIR_NAME);
    tried.push(candidate);
    if (existsSync(candidate)) return { dir: candidate, tried, via: 'search' };
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return { dir: join(resolve(cwd), BOARD_DIR_NAME), tried, via: 'cwd' };
}

/** Finds an existing board (docs/protocol.md, "Where the board is") or throws E_NO_BOARD naming what was tried. */
export function findBoard(options: FindBoardOptions = {}): string {
  const found = resolveBoardDir(options);
  let isDir = false;
  try {
    isDir = statSync(found.dir).isDirectory();
  } catch (error) {
    if (!isErrnoException(error, 'ENOENT')) throw error;
  }
  if (isDir) return found.dir;
  const where =
    found.via === '--dir'
      ? `--dir ${found.dir}`
      : found.via === 'TASKS_DIR'
        ? `TASKS_DIR=${found.dir}`
        : found.via === 'git'
          ? `${found.dir} (the main worktree's board)`
          : found.tried.join(', ');
  throw new TasksError('E_NO_BOARD', `no task board found (looked for ${where}); run 'tasks init' to create one`, {
    tried: found.tried.length ? found.tried : [found.dir],
  });
}

/** Where the acting owner's name came from (docs/protocol.md, "Who acts"). */
export type OwnerSource = '--owner' | 'TASKS_OWNER' | 'worktree' | 'user';

/**
 * The acting owner: `--owner`, TASKS_OWNER, the linked worktree's name (or the
 * owner recorded for it by `claim --worktree`), the user name.
 */
export function resolveOwner(options: { owner?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): {
  owner: string;
  source: OwnerSource;
} {
  const env = options.env ?? process.env;
  if (options.owner !== undefined && options.owner.trim() !== '') return { owner: options.owner.trim(), source: '--owner' };
  if (env.TASKS_OWNER && env.TASKS_OWNER.trim() !== '') return { owner: env.TASKS_OWNER.trim(), source: 'TASKS_OWNER' };
  const git = locateGit(options.cwd ?? process.cwd());
  if (git?.linked) {
    const recorded = git.gitDir ? readFileIfExistsQuiet(join(git.gitDir, WORKTREE_OWNER_FILE))?.trim() : undefined;
    return { owner: recorded || basename(git.worktreeRoot), source: 'worktree' };
  }
  let user = env.USER || env.USERNAME || '';
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = 'user';
    }
  }
  return { owner: user, source: 'user' };
}

function readFileIfExistsQuiet(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * What a git operation of the worktree `cwd` is in leaves for the board, for
 * `tasks list` to say (a look at two files): the ids the merge driver set a
 * task aside for and nobody settled yet (git/id-clashes.ts), and whether a
 * merge or cherry-pick is stopped half way.
 */
export function boardMergeState(cwd: string): { clashes: number[]; stopped?: 'merge' | 'cherry-pick' } {
  const gitDir = locateGit(cwd)?.gitDir;
  if (!gitDir) return { clashes: [] };
  const stopped = existsSync(join(gitDir, 'MERGE_HEAD')) ? 'merge' : existsSync(join(gitDir, 'CHERRY_PICK_HEAD')) ? 'cherry-pick' : undefined;
  let clashes: number[] = [];
  try {
    const record = JSON.parse(readFileSync(join(gitDir, 'dotasks-clashes.json'), 'utf8')) as { clashes?: { id?: unknown }[] };
    clashes = [...new Set((record.clashes ?? []).map((c) => c.id).filter((id): id is number => typeof id === 'number'))].sort((a, b) => a - b);
  } catch {
    clashes = [];
  }
  return { clashes, ...(stopped ? { stopped } : {}) };
}
