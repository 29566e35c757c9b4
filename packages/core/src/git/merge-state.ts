// What a stopped git merge or cherry-pick leaves for the board, for `tasks list` to say.
import { locateGit } from './locate-git.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { existsSync, readFileSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

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
