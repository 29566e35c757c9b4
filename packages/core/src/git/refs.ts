// Branch tips read from the git folder's files, without running git: the
// loose ref, else packed-refs; the branch the main worktree has checked
// out; where a branch was made (the first line of its reflog). On the read
// path (`tasks list` with "mergedMeansDone"), so a look costs a few reads.
import type { BoardConfig } from '../board-config.js';
import { TasksError } from '../errors.js';
import { locateGit } from './locate-git.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { readFileSync } = process.getBuiltinModule('node:fs');
const { isAbsolute, join, resolve } = process.getBuiltinModule('node:path');

/** The repository of a folder: its main worktree and the git folder every worktree shares. */
export interface RepositoryDirs {
  mainRoot: string;
  commonDir: string;
}

/** The main worktree and common git folder of the repository holding `cwd`; undefined outside git. */
export function repositoryDirs(cwd: string): RepositoryDirs | undefined {
  const location = locateGit(cwd);
  if (!location?.gitDir) return undefined;
  if (!location.linked) return { mainRoot: location.mainRoot, commonDir: location.gitDir };
  const common = readText(join(location.gitDir, 'commondir'))?.trim();
  if (!common) return undefined;
  return { mainRoot: location.mainRoot, commonDir: isAbsolute(common) ? common : resolve(location.gitDir, common) };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * A branch name that can be looked up as a file: what a task file names is
 * plain JSON anyone can edit, so `..`, a leading `-` or `/` and the like are
 * never a path or an option (git's own rules refuse them too).
 */
export function isPlainBranchName(name: string): boolean {
  return (
    name !== '' &&
    !name.startsWith('-') &&
    !name.startsWith('/') &&
    !name.endsWith('/') &&
    !name.endsWith('.lock') &&
    !name.includes('..') &&
    !name.includes('//') &&
    !name.includes('@{') &&
    !/[\x00-\x20\x7f~^:?*[\\]/.test(name)
  );
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The commit a ref (`refs/heads/main`) names, from the loose ref or packed-refs; undefined when there is none. */
export function readRefSha(commonDir: string, ref: string): string | undefined {
  for (let depth = 0; depth < 5; depth++) {
    const loose = readText(join(commonDir, ref))?.trim();
    if (loose === undefined) return packedRef(commonDir, ref);
    if (SHA.test(loose)) return loose;
    const symbolic = /^ref: (refs\/\S+)$/.exec(loose);
    if (!symbolic) return undefined;
    ref = symbolic[1];
  }
  return undefined;
}

function packedRef(commonDir: string, ref: string): string | undefined {
  const text = readText(join(commonDir, 'packed-refs'));
  if (!text) return undefined;
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0 && line.slice(space + 1) === ref && SHA.test(line.slice(0, space))) return line.slice(0, space);
  }
  return undefined;
}

/** The tip of branch `name`, or undefined when it does not exist (or its name is not one git accepts). */
export function branchTip(commonDir: string, name: string): string | undefined {
  return isPlainBranchName(name) ? readRefSha(commonDir, `refs/heads/${name}`) : undefined;
}

/** The branch the main worktree has checked out; undefined on a detached HEAD. */
export function mainWorktreeBranch(commonDir: string): string | undefined {
  const head = readText(join(commonDir, 'HEAD'))?.trim();
  const m = head === undefined ? null : /^ref: refs\/heads\/(\S+)$/.exec(head);
  return m ? m[1] : undefined;
}

/**
 * The commit branch `name` was made at: the first line of its reflog, when
 * that line is the branch's creation (its old value all zeros). Undefined
 * when git kept no such line (reflogs off, or expired after months).
 */
export function branchCreationPoint(commonDir: string, name: string): string | undefined {
  if (!isPlainBranchName(name)) return undefined;
  const text = readText(join(commonDir, 'logs', 'refs', 'heads', name));
  const first = text?.split('\n', 1)[0].split(' ');
  if (!first || first.length < 2 || !/^0+$/.test(first[0]) || !SHA.test(first[1])) return undefined;
  return first[1];
}

/**
 * The branch task branches go back to: `mergeTarget` of config.json, else
 * the branch the main worktree has checked out; E_GIT on a detached HEAD
 * without the key.
 */
export function mergeTargetOf(config: BoardConfig, repo: RepositoryDirs): string {
  if (config.mergeTarget !== undefined) {
    if (!isPlainBranchName(config.mergeTarget))
      throw new TasksError('E_INVALID', `"mergeTarget" ${JSON.stringify(config.mergeTarget)} is not a branch name; change it in .tasks/config.json`);
    return config.mergeTarget;
  }
  const branch = mainWorktreeBranch(repo.commonDir);
  if (branch === undefined)
    throw new TasksError(
      'E_GIT',
      `the main worktree ${repo.mainRoot} has no branch checked out (a detached HEAD), so task branches have no target: check one out, or set "mergeTarget" in .tasks/config.json`,
    );
  return branch;
}

/** The merge target and the commit it is at now; undefined on a detached HEAD without "mergeTarget", or before the first commit. */
export function targetTipIn(repo: RepositoryDirs, config: BoardConfig): { target: string; sha: string } | undefined {
  let target: string;
  try {
    target = mergeTargetOf(config, repo);
  } catch {
    return undefined; // a detached HEAD and no mergeTarget: no target to measure against
  }
  const sha = branchTip(repo.commonDir, target);
  return sha === undefined ? undefined : { target, sha };
}
