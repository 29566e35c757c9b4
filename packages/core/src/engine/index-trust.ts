/**
 * When the board index may be believed. An entry is used only while its file
 * keeps the identity (inode, size, mtime, ctime) it had when read, and only
 * if that ctime was older than a clock reading of the same file system taken
 * before the file was looked at, as git does with racily clean entries. The
 * index as a whole is trusted by claims for FINAL_TRUST_MS after an exact pass
 * found it right; when that runs out, one claimant at a time takes the turn
 * to make the pass (the refresh turn) while the others go on with the index.
 */
import type { Stats } from 'node:fs';
import { isErrnoException } from '../errors.js';
import { taskFileName } from '../format/format.js';
import { locateGit } from '../git/locate-git.js';
import { RUNTIME, type DirId, type FileId } from './index-file.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { mkdirSync, rmdirSync, statSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');

const NO_THROW = { throwIfNoEntry: false } as const;

/** How long claimNext trusts the index for what it does not look at, after an exact pass found it right (ms). */
export const FINAL_TRUST_MS = 10_000;

// An exact pass that found the index right moves its mtime on when it is older than this (ms).
export const REFRESH_MS = 1000;

/** How long the other claimants trust an index past FINAL_TRUST_MS while one claimant makes the exact pass (ms). */
export const REFRESH_TURN_MS = 2000;
export const REFRESH_TURN = 'board-index-refresh.lock';

/**
 * The identity of the git index of the repository the board at `dir` is in
 * (inode, size, mtime, ctime), or null outside git: a pull, a checkout, a
 * merge or a reset that touches the board's files moves it, so a view that
 * trusts the history (open-view.ts) makes an exact pass when it moved.
 */
export function gitIndexId(dir: string): FileId | null {
  let gitDir: string | undefined;
  try {
    gitDir = locateGit(dirname(dir))?.gitDir;
  } catch {
    return null;
  }
  if (!gitDir) return null;
  const stat = statSync(join(gitDir, 'index'), NO_THROW);
  return stat ? [stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs] : null;
}

export function sameFileId(a: FileId | null, b: FileId | null): boolean {
  return a === b || (a !== null && b !== null && a.every((v, i) => v === b[i]));
}

export function dirIdOf(stat: Stats): DirId {
  return [stat.dev, stat.ino, stat.mtimeMs, stat.ctimeMs];
}

export function sameDir(id: DirId, stat: Stats): boolean {
  return id[0] === stat.dev && id[1] === stat.ino && id[2] === stat.mtimeMs && id[3] === stat.ctimeMs;
}

export function sameDirId(a: DirId | null, b: DirId | null): boolean {
  return a === b || (a !== null && b !== null && a.every((v, i) => v === b[i]));
}

export function sameFile(id: FileId, stat: Stats): boolean {
  return id[0] === stat.ino && id[1] === stat.size && id[2] === stat.mtimeMs && id[3] === stat.ctimeMs;
}

/**
 * The turn to make the exact pass for claims, when the index's trust ran out:
 * a folder in the runtime folder, made by one claimant at a time (mkdir is
 * atomic). Eight claimants used to run out together and all make the pass at
 * once (300 ms each on two cores: the claims' p99). A turn left by a process
 * that died is taken over once it is older than REFRESH_TURN_MS. Returns the
 * folder to remove, or undefined when another claimant has the turn.
 */
export function takeRefreshTurn(dir: string): string | undefined {
  const path = join(dir, RUNTIME, REFRESH_TURN);
  for (let tries = 0; tries < 2; tries++) {
    try {
      mkdirSync(path);
      return path;
    } catch (error) {
      if (!isErrnoException(error, 'EEXIST')) return path; // no runtime folder (yet): nobody to share the pass with
      if (turnHeld(path)) return undefined;
      rmdirQuiet(path);
    }
  }
  return undefined;
}

/**
 * Whether a claimant has the turn `path` and is within its time (an older one
 * was left by a process that died). The turn's age is counted in whole
 * milliseconds, as Date.now() counts them: the file system stamps the folder
 * to a fraction of a millisecond, up to 1 ms past the Date.now() read just
 * before it was made, so with fractions a claimant that had waited
 * REFRESH_TURN_MS by Date.now() (awaitExactPass) could still find the turn
 * held for that fraction, and neither take it over nor wait any longer.
 */
export function turnHeld(path: string, now = Date.now()): boolean {
  const stat = statSync(path, NO_THROW);
  return stat !== undefined && now - Math.floor(stat.mtimeMs) < REFRESH_TURN_MS;
}

export function rmdirQuiet(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // gone already (taken over as stale), or never made
  }
}

/**
 * Completed and deleted tasks this process read while choosing claims, per
 * board: a long-lived claimant (a worker, the agent tool) does not read them
 * again on its next claimNext. Trusted like the index's closed tasks, for
 * FINAL_TRUST_MS after the file was looked at; then a stat renews the trust
 * if the file kept its identity and that identity was old enough when read
 * (a change within the same clock tick as the read could otherwise hide).
 */
export class ClosedSeen {
  private readonly files = new Map<number, { fileId: FileId; seenAt: number }>();

  constructor(private readonly dir: string) {}

  remember(id: number, stat: Stats): void {
    this.files.set(id, { fileId: [stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs], seenAt: Date.now() });
  }

  forget(id: number): void {
    this.files.delete(id);
  }

  trusts(id: number): boolean {
    const entry = this.files.get(id);
    if (!entry) return false;
    const now = Date.now();
    const age = now - entry.seenAt;
    if (age >= 0 && age < FINAL_TRUST_MS) return true;
    const stat = statSync(join(this.dir, taskFileName(id)), { throwIfNoEntry: false });
    if (stat && stat.isFile() && sameFile(entry.fileId, stat) && entry.fileId[3] < entry.seenAt - RACY_SLACK_MS) {
      entry.seenAt = now;
      return true;
    }
    this.files.delete(id);
    return false;
  }
}

// How much older than the moment it was read a file's ctime must be for a stat to renew ClosedSeen's trust (ms).
const RACY_SLACK_MS = 2000;
const closedSeenByDir = new Map<string, ClosedSeen>();

export function closedSeen(dir: string): ClosedSeen {
  let seen = closedSeenByDir.get(dir);
  if (!seen) closedSeenByDir.set(dir, (seen = new ClosedSeen(dir)));
  return seen;
}
