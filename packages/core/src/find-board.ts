// Where the board is (docs/protocol.md, "Where the board is"): the `.tasks/` folder a command works on.
import { TasksError, isErrnoException } from './errors.js';
import { locateGit } from './git/locate-git.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { existsSync, statSync } = process.getBuiltinModule('node:fs');
const { dirname, join, resolve } = process.getBuiltinModule('node:path');

export const BOARD_DIR_NAME = '.tasks';

/** Where to look for a board (docs/protocol.md, "Where the board is"). */
export interface FindBoardOptions {
  /** `--dir PATH`: the board directory itself. */
  dir?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
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
