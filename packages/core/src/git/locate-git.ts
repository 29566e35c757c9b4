// Where the git checkout of a folder is: its worktree, its main worktree,
// its git folder, read from the `.git` files without running git.
import { isErrnoException } from '../errors.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { existsSync, readFileSync, statSync } = process.getBuiltinModule('node:fs');
const { dirname, isAbsolute, join, resolve } = process.getBuiltinModule('node:path');

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
