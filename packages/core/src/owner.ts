// Who acts: the owner a command writes as (docs/protocol.md, "Who acts").
import { locateGit } from './git/locate-git.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { readFileSync } = process.getBuiltinModule('node:fs');
const { basename, join } = process.getBuiltinModule('node:path');
const { userInfo } = process.getBuiltinModule('node:os');

/**
 * A file in a linked worktree's own git dir naming who works there; written by
 * `tasks claim --worktree` so commands run inside act as the claimant.
 */
export const WORKTREE_OWNER_FILE = 'tasks-owner';

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
