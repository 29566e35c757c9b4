import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { locateGit } from './locate-git.js';
import { TasksError } from '../errors.js';
import { atomicWriteFile, readFileIfExists } from '../fs/fsio.js';

/** The merge driver's name in `.gitattributes` and git config (`merge.dotasks.driver`). */
export const MERGE_DRIVER_NAME = 'dotasks';

/** The lines `tasks init --git` puts in `.tasks/.gitattributes` (patterns relative to `.tasks/`). */
export const BOARD_GITATTRIBUTES_LINES = [`task_*.json merge=${MERGE_DRIVER_NAME}`, `.highwatermark merge=${MERGE_DRIVER_NAME}`];

const ATTRIBUTES_HEADER = "# Written by 'tasks init --git': task files merge field by field (tasks merge-driver).";

/** Quotes one word for the POSIX shell git runs merge drivers with. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `merge.dotasks.driver` value for a program (e.g. `tasks`, or `'/usr/bin/node' '/…/bin/tasks.js'`). */
export function mergeDriverCommand(program: string): string {
  return `${program} merge-driver %O %A %B %P`;
}

export interface GitSetupResult {
  /** The `.gitattributes` written or updated (undefined when it already said everything). */
  attributesFile: string;
  attributesChanged: boolean;
  /** The command registered as `merge.dotasks.driver`. */
  driver: string;
  /** The repository whose config was changed. */
  repository: string;
  /** The hooks that settle ids two branches handed out twice: each installed, or left alone because the clone has its own. */
  hooks: { hook: string; path: string; installed: boolean; line?: string }[];
}

/** The hooks `tasks init --git` installs (git-hook command): after a merge, a commit (cherry-pick, a concluded merge), a rebase. */
export const BOARD_HOOKS = ['post-merge', 'post-commit', 'post-rewrite'] as const;

/** The line that marks a hook as ours, so `tasks init --git` may write it again. */
const HOOK_MARK = '# Written by tasks init --git (dotasks)';

/**
 * The hook that keeps a task worktree's commits inside its task's file scope
 * (git-hook pre-commit). Only linked worktrees can be a task's, and their
 * `.git` is a file: the main checkout's commits pay one `test`, nothing more.
 */
export const SCOPE_HOOK = 'pre-commit';

/** A hook's text: a look for the merge driver's record (one missing file when there is no clash), then the command. */
function hookText(hook: string, program: string): string {
  if (hook === SCOPE_HOOK)
    return [
      '#!/bin/sh',
      `${HOOK_MARK}: keeps a task worktree's commits inside its task's file scope (see tasks git-hook).`,
      '[ -f "$(git rev-parse --show-toplevel)/.git" ] || exit 0',
      `exec ${program} git-hook ${hook} "$@"`,
      '',
    ].join('\n');
  return [
    '#!/bin/sh',
    `${HOOK_MARK}: settles task ids that two branches handed out twice (see tasks git-hook).`,
    '[ -f "$(git rev-parse --git-dir)/dotasks-clashes.json" ] || exit 0',
    `exec ${program} git-hook ${hook} "$@"`,
    '',
  ].join('\n');
}

/**
 * Installs the hooks in the clone's hooks folder (core.hooksPath respected). A
 * hook of the clone's own is left as it is, with the line to add to it.
 */
function installHooks(boardDir: string, program: string): GitSetupResult['hooks'] {
  return [...BOARD_HOOKS, SCOPE_HOOK].map((hook) => {
    const path = resolve(boardDir, git(boardDir, ['rev-parse', '--git-path', `hooks/${hook}`]).trim());
    const current = readFileIfExists(path);
    if (current !== undefined && !current.includes(HOOK_MARK)) return { hook, path, installed: false, line: `${program} git-hook ${hook} "$@"` };
    mkdirSync(dirname(path), { recursive: true });
    atomicWriteFile(path, hookText(hook, program));
    chmodSync(path, 0o755);
    return { hook, path, installed: true };
  });
}

/** Whether the clone has the hooks (ours, or a hook of its own that calls ours). */
export function missingHooks(boardDir: string): string[] {
  return BOARD_HOOKS.filter((hook) => {
    let path: string;
    try {
      path = resolve(boardDir, git(boardDir, ['rev-parse', '--git-path', `hooks/${hook}`]).trim());
    } catch {
      return false;
    }
    return !(readFileIfExists(path) ?? '').includes(`git-hook ${hook}`);
  });
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The repository a board (made or to be made at boardDir) is in; E_INVALID when there is none, before anything is written. */
export function assertBoardInGit(boardDir: string): NonNullable<ReturnType<typeof locateGit>> {
  const repo = locateGit(boardDir);
  if (!repo) throw new TasksError('E_INVALID', `the board ${boardDir} is not inside a git repository; run 'git init' first, or use 'tasks init' without --git`);
  return repo;
}

/**
 * Sets a board up for git: `.tasks/.gitattributes` routes task files and
 * `.highwatermark` to the dotasks merge driver, and the driver is registered
 * in the repository's config (which is per clone, so each clone runs this once).
 */
export function setupGitMerge(boardDir: string, program: string): GitSetupResult {
  const repo = assertBoardInGit(boardDir);
  const attributesFile = join(boardDir, '.gitattributes');
  const current = readFileIfExists(attributesFile);
  const have = new Set((current ?? '').split('\n').map((l) => l.trim()));
  const missing = BOARD_GITATTRIBUTES_LINES.filter((l) => !have.has(l));
  if (missing.length) {
    const prefix = current === undefined ? `${ATTRIBUTES_HEADER}\n` : current.endsWith('\n') || current === '' ? current : `${current}\n`;
    atomicWriteFile(attributesFile, `${prefix}${missing.join('\n')}\n`);
  }
  const driver = mergeDriverCommand(program);
  try {
    git(boardDir, ['config', `merge.${MERGE_DRIVER_NAME}.name`, 'dotasks: field-level merge of task files']);
    git(boardDir, ['config', `merge.${MERGE_DRIVER_NAME}.driver`, driver]);
  } catch (error) {
    throw new TasksError(
      'E_IO',
      `could not register the merge driver with git config: ${String((error as { stderr?: string }).stderr ?? error).trim()}`,
      {},
      { cause: error },
    );
  }
  return { attributesFile, attributesChanged: missing.length > 0, driver, repository: repo.mainRoot, hooks: installHooks(boardDir, program) };
}

export interface MergeDriverCheck {
  /** Set when something is wrong; undefined when fine or when git is not used for this board. */
  problem?: string;
  fix?: string;
  attributesFile?: string;
}

/**
 * Is the dotasks merge driver usable in this clone? Only asked when the
 * board's attributes route task files to it: a board that never opted in
 * has nothing to report.
 */
export function checkMergeDriver(boardDir: string): MergeDriverCheck {
  if (!locateGit(boardDir)) return {};
  let attribute: string;
  try {
    attribute = git(boardDir, ['check-attr', 'merge', '--', 'task_1.json']);
  } catch {
    return {}; // no git on PATH, or not a work tree: nothing to say
  }
  if (!attribute.trim().endsWith(`: ${MERGE_DRIVER_NAME}`)) return {};
  const attributesFile = existsSync(join(boardDir, '.gitattributes')) ? join(boardDir, '.gitattributes') : undefined;
  let driver = '';
  try {
    driver = git(boardDir, ['config', '--get', `merge.${MERGE_DRIVER_NAME}.driver`]).trim();
  } catch {
    // exit 1: not set
  }
  if (driver === '')
    return {
      attributesFile,
      problem: `.gitattributes sends task files to the '${MERGE_DRIVER_NAME}' merge driver, but this clone has not registered it, so git would merge them as plain text`,
      fix: 'register it: tasks init --git',
    };
  // An absolute program path that no longer exists (node upgraded, checkout moved).
  for (const m of driver.matchAll(/'(\/[^']+)'|(?:^|\s)(\/\S+)/g)) {
    const path = m[1] ?? m[2];
    if (!existsSync(path))
      return {
        attributesFile,
        problem: `the registered merge driver runs ${path}, which does not exist (merge.${MERGE_DRIVER_NAME}.driver = ${driver})`,
        fix: 'register it again: tasks init --git',
      };
  }
  const hooks = missingHooks(boardDir);
  if (hooks.length)
    return {
      attributesFile,
      problem: `this clone lacks the git hooks that settle task ids two branches handed out twice (${hooks.join(', ')}): after such a merge one of the two tasks would stay set aside until 'tasks doctor --fix'`,
      fix: 'install them: tasks init --git',
    };
  return {};
}
