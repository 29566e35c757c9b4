/**
 * The record the merge driver keeps of ids handed out twice, for one git
 * operation (`<git dir>/dotasks-clashes.json`): when both sides of a merge,
 * a rebase or a cherry-pick created a task under one id, the driver can only
 * keep one of them in that file; the record says so to the hooks `tasks init
 * --git` installs (which bring the other task back under a new id when the
 * operation is done, git/branch-reconcile.ts), and to `tasks list` and
 * `tasks doctor` when no hook ran. It is the one thing the hooks look for, so
 * an operation without a clash costs them a missing file.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { readFileIfExists, atomicWriteFile, removeFile } from '../fs/fsio.js';

export const CLASHES_FILE = 'dotasks-clashes.json';

/** One id both sides created a task under. */
export interface IdClash {
  /** The file's path in the repository (%P). */
  path: string;
  id: number;
  /** The subjects of the task kept (ours) and of the one set aside (theirs). */
  oursSubject: string;
  theirsSubject: string;
  /** Their side's file, as git gave it to the driver (the task set aside, or their change). */
  theirs: string;
  /** The common ancestor's file ('' when both sides created it). */
  base?: string;
  /**
   * `created`: both sides created a task under the id; `moved`: the id names
   * another task on each side (one side renamed it, or moved it to a free id
   * in an earlier merge), which the whole board tells apart.
   */
  kind?: 'created' | 'moved';
}

export interface ClashRecord {
  /** HEAD when the first clash of the operation was met (the commit the operation started from). */
  head?: string;
  at: string;
  clashes: IdClash[];
}

/** The record of an operation in the git dir `gitDir`, if any. */
export function readClashes(gitDir: string): ClashRecord | undefined {
  const text = readFileIfExists(join(gitDir, CLASHES_FILE));
  if (text === undefined) return undefined;
  try {
    const record = JSON.parse(text) as ClashRecord;
    return Array.isArray(record?.clashes) ? record : undefined;
  } catch {
    return undefined;
  }
}

/** Adds (or replaces, by path) a clash to the record of the operation. */
export function recordClash(gitDir: string, clash: IdClash, head: string | undefined): void {
  const record = readClashes(gitDir) ?? { head, at: new Date().toISOString(), clashes: [] };
  record.clashes = [...record.clashes.filter((c) => c.path !== clash.path), clash];
  atomicWriteFile(join(gitDir, CLASHES_FILE), JSON.stringify(record, null, 2) + '\n', { fsync: false });
}

/** Forgets the record (the operation's clashes were settled). */
export function clearClashes(gitDir: string): void {
  removeFile(join(gitDir, CLASHES_FILE));
}

/** The merge driver's view of the record of the git dir `gitDir`. */
export function clashBookOf(gitDir: string): { add(clash: IdClash): void } {
  return {
    add: (clash) => {
      let head: string | undefined;
      try {
        head = execFileSync('git', ['rev-parse', '--verify', '--quiet', 'HEAD'], {
          cwd: join(gitDir),
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim();
      } catch {
        head = undefined;
      }
      recordClash(gitDir, clash, head);
    },
  };
}
