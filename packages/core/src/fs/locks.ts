import type * as ProperLockfile from 'proper-lockfile';
import * as fs from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { TasksError, isErrnoException } from '../errors.js';

/** How locks behave; every field has a default (docs/protocol.md, "Writes"). */
export interface LockOptions {
  /** A lock not refreshed for this long is stale and may be taken over (ms). */
  staleMs: number;
  /** Give up waiting for a lock after this long (ms). */
  timeoutMs: number;
  /** Told once when a lock has been waited for a second (LOCK_WAIT_NOTICE_MS): who holds it, so a command can say so. */
  onWait?: (wait: LockWait) => void;
}

/** A lock being waited for, and what its folder says about its holder. */
export interface LockWait {
  /** The lock folder. */
  lock: string;
  /** The holder's process, from its mark (`holder.<pid>.…`); undefined for a lock without one. */
  pid?: number;
  /** How long this process has waited so far (ms). */
  waitedMs: number;
}

/** How long a lock is waited for in silence before `onWait` hears of it. */
export const LOCK_WAIT_NOTICE_MS = 1000;

export const DEFAULT_LOCK_OPTIONS: LockOptions = { staleMs: 10_000, timeoutMs: 30_000 };

// proper-lockfile (and graceful-fs under it) loads on the first lock, so
// read-only commands such as `tasks list` never pay for it.
let lockfileModule: typeof ProperLockfile | undefined;
async function loadLockfile(): Promise<typeof ProperLockfile> {
  lockfileModule ??= ((await import('proper-lockfile')) as unknown as { default: typeof ProperLockfile }).default;
  return lockfileModule;
}

/** Our mark inside a lock folder: `holder.<pid>.<random>`, itself a folder that holds the holder's staged writes. */
const HOLDER_PREFIX = 'holder.';

/** Lock folders this process is releasing, so the folder is removed only while it is still ours. */
const releasing = new Map<string, { holder: string; marked: boolean; stillOurs: () => boolean }>();

/**
 * The file system proper-lockfile uses. A lock folder holds our holder
 * folder (and in it the holder's staged writes), so plain rmdir would fail;
 * removing a lock removes what is inside. That is the point: a process that
 * takes over a stale lock destroys the stale holder's staged writes, so the
 * stale holder's renames fail (ENOENT) instead of landing after the
 * takeover. When we release a lock we remove it only while our holder mark
 * is still in it; when the process exits, only folders this process marked.
 */
const lockFs = {
  ...fs,
  // mkdir, stat and utimes run synchronously (the callback still comes on a later tick): each would otherwise be
  // a trip through libuv's thread pool, and a claim with its completion takes and refreshes about six locks.
  mkdir(path: string, callback: (error: NodeJS.ErrnoException | null) => void): void {
    settle(() => fs.mkdirSync(path), callback);
  },
  stat(path: string, callback: (error: NodeJS.ErrnoException | null, stat?: fs.Stats) => void): void {
    settle(() => fs.statSync(path), callback);
  },
  utimes(path: string, atime: Date, mtime: Date, callback: (error: NodeJS.ErrnoException | null) => void): void {
    settle(() => fs.utimesSync(path, atime, mtime), callback);
  },
  rmdir(path: string, callback: (error: NodeJS.ErrnoException | null) => void): void {
    try {
      removeLockFolder(path);
      callback(null);
    } catch (error) {
      callback(error as NodeJS.ErrnoException);
    }
  },
  rmdirSync(path: string): void {
    // Only proper-lockfile's exit handler calls this.
    // (unmarked locks of this process are left to go stale: telling them apart from another's costs more than it saves)
    const names = readNames(path);
    if (names && names.some((n) => n.startsWith(`${HOLDER_PREFIX}${process.pid}.`))) removeLockFolder(path);
  },
};

/** Runs a synchronous file system call and hands its outcome to a Node-style callback on the next tick. */
function settle<T>(call: () => T, callback: (error: NodeJS.ErrnoException | null, value?: T) => void): void {
  let value: T;
  try {
    value = call();
  } catch (error) {
    process.nextTick(callback, error as NodeJS.ErrnoException);
    return;
  }
  process.nextTick(callback, null, value);
}

function readNames(path: string): string[] | undefined {
  try {
    return fs.readdirSync(path);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return undefined;
    throw error;
  }
}

function removeLockFolder(path: string): void {
  const ours = releasing.get(resolve(path));
  if (ours !== undefined) {
    // Our own lock: only while it is still ours; usually just our (empty) holder mark inside.
    if (!ours.stillOurs()) return; // taken over meanwhile: it is someone else's now
    try {
      if (ours.marked) fs.rmdirSync(join(path, ours.holder));
      fs.rmdirSync(path);
      return;
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return;
      if (!isErrnoException(error, 'ENOTEMPTY') && !isErrnoException(error, 'EEXIST')) throw error;
      // leftovers of a failed commit: remove them all below
    }
  }
  try {
    fs.rmSync(path, { recursive: true });
  } catch (error) {
    if (!isErrnoException(error, 'ENOENT')) throw error;
  }
}

/** A held lock. */
export interface HeldLock {
  /** The lock folder. */
  readonly path: string;
  /** Set when proper-lockfile reported the lock compromised (its refresh found it taken or gone). */
  compromised?: Error;
  /**
   * Throws E_COMPROMISED unless the lock is still ours right now: not reported
   * compromised, our holder mark in its folder and nobody else's (two
   * processes can take over one stale lock at once, proper-lockfile #121).
   * `full: false` only checks our mark is still there (a single stat).
   */
  assertHeld(full?: boolean): void;
  /**
   * A path for a write staged under this lock, inside the lock folder: the
   * staged file can only be renamed into place while the lock is ours, because
   * breaking the lock removes it.
   */
  stagePath(name: string): string;
}

class Lock implements HeldLock {
  compromised?: Error;
  private staged = 0;
  /** For a lock without a holder mark: the folder's identity when we took it. */
  identity?: string;

  constructor(
    readonly path: string,
    readonly holder: string,
    /** Whether the lock folder carries our holder mark (locks that gate staged writes do). */
    readonly marked: boolean,
  ) {}

  stagePath(name: string): string {
    if (!this.marked) throw new Error(`internal: nothing is staged under ${this.path}`);
    return join(this.path, this.holder, `${++this.staged}.${name}`);
  }

  /**
   * Why the lock is no longer ours, or undefined while it is. The quick look
   * (before each rename) checks our mark is there; the full one (at the
   * commit point) also that nobody else's is.
   */
  lost(full = true): string | undefined {
    if (this.compromised) return this.compromised.message;
    if (!this.marked) {
      const now = folderIdentity(this.path);
      if (now === undefined) return 'its lock folder is gone';
      return now === this.identity ? undefined : 'another process took it over after it went stale';
    }
    if (!full) return fs.existsSync(join(this.path, this.holder)) ? undefined : 'another process took it over after it went stale';
    const names = readNames(this.path);
    if (names === undefined) return 'its lock folder is gone';
    if (!names.includes(this.holder)) return 'another process took it over after it went stale';
    if (names.some((n) => n.startsWith(HOLDER_PREFIX) && n !== this.holder)) return 'another process took it over at the same moment';
    return undefined;
  }

  assertHeld(full = true): void {
    const why = this.lost(full);
    if (why === undefined) return;
    throw new TasksError(
      'E_COMPROMISED',
      `lost the lock ${this.path} (${why}; the process was stalled or too slow); nothing more was written, run the command again`,
      { lock: this.path },
      this.compromised ? { cause: this.compromised } : undefined,
    );
  }
}

/** A lock taken by acquireLock, with the way to let it go. */
export interface AcquiredLock {
  lock: HeldLock;
  release: () => Promise<void>;
}

/** A folder's identity: inode and birth time (a folder made again after a takeover differs in one of them). */
function folderIdentity(path: string): string | undefined {
  const stat = fs.statSync(path, { throwIfNoEntry: false });
  return stat ? `${stat.ino}:${stat.birthtimeMs}` : undefined;
}

/**
 * Takes the lock folder `lockPath` (proper-lockfile, realpath off so the
 * target need not exist), waiting with jittered backoff up to timeoutMs.
 * With `mark` (the locks under which writes are staged: the board's and the
 * tasks'), the folder gets a holder folder of our own, so a takeover is seen
 * for certain and destroys what we staged. Other locks (owners, the event
 * log, runtime records) are recognised by the folder's identity, which is
 * cheaper: two directory operations fewer. proper-lockfile refreshes the lock
 * while we hold it; a compromised lock never crashes the process: it is
 * recorded and the next check fails with E_COMPROMISED.
 */
export async function acquireLock(
  lockPath: string,
  options: LockOptions,
  { mark = false, maxDelayMs = 40 }: { mark?: boolean; maxDelayMs?: number } = {},
): Promise<AcquiredLock> {
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let noticed = options.onWait === undefined;
  const stale = staleMsOf(options);
  let delay = 1;
  let remade = 0;
  const lockfile = await loadLockfile();
  for (;;) {
    let lock: Lock | undefined;
    let release: (() => Promise<void>) | undefined;
    let busy: unknown;
    try {
      const holder = `${HOLDER_PREFIX}${process.pid}.${randomBytes(6).toString('hex')}`;
      const candidate = new Lock(lockPath, holder, mark);
      const releaseFolder = await lockfile.lock(lockPath, {
        lockfilePath: lockPath,
        realpath: false,
        stale,
        update: Math.max(1000, Math.floor(stale / 2)),
        retries: 0,
        fs: lockFs,
        onCompromised: (error) => {
          candidate.compromised = error;
        },
      });
      lock = candidate;
      release = () => releaseLock(candidate, releaseFolder);
      if (!mark) {
        candidate.identity = folderIdentity(lockPath);
        if (candidate.identity !== undefined) return { lock, release };
      } else if (markHolder(lock)) return { lock, release };
      busy = new Error('contended');
    } catch (error) {
      if (!isErrnoException(error, 'ELOCKED')) {
        if (release) await release().catch(() => undefined);
        // The board's runtime folder is this machine's scratch space: whoever removed it (a person, a clean-up, a
        // fresh clone that never had one) costs leases and caches, never a command (docs/protocol.md, "Board files").
        if (isErrnoException(error, 'ENOENT') && remakeRuntimeFolder(lockPath) && ++remade <= 100) continue;
        if (isErrnoException(error, 'ENOENT'))
          throw new TasksError('E_IO', `cannot create lock ${lockPath}: its folder is missing (was the board removed?)`, {}, { cause: error });
        if (isErrnoException(error, 'EACCES') || isErrnoException(error, 'EPERM') || isErrnoException(error, 'EROFS'))
          throw new TasksError('E_IO', `cannot create lock ${lockPath}: ${(error as Error).message}; the board must be writable`, {}, { cause: error });
        throw error;
      }
      busy = error;
    }
    // Lost the race for the mark (two takers of one stale lock): let go and wait like for a held lock.
    if (release) await release().catch(() => undefined);
    if (Date.now() >= deadline)
      throw new TasksError(
        'E_LOCKED',
        `timed out after ${options.timeoutMs} ms waiting for lock ${lockPath}; another tasks process holds it (a lock left by a killed process is taken over after ${Math.round(stale / 1000)} s)`,
        { lock: lockPath },
        { cause: busy },
      );
    // Then look (a stat) until the lock is free or stale, before trying again (a mkdir): a mkdir takes the parent
    // folder's lock in the kernel even when it fails, and every writer's locks and renames on the board wait for it.
    do {
      await sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, maxDelayMs);
      if (!noticed && Date.now() - started >= LOCK_WAIT_NOTICE_MS) {
        noticed = true;
        options.onWait!({ lock: lockPath, pid: holderPid(lockPath), waitedMs: Date.now() - started });
      }
    } while (heldNow(lockPath, stale) && Date.now() < deadline);
  }
}

/** The pid in a lock folder's holder mark, if it has one (docs/protocol.md, "Staged files and the commit point"). */
function holderPid(lockPath: string): number | undefined {
  let names: string[] | undefined;
  try {
    names = readNames(lockPath);
  } catch {
    return undefined; // only for a message: a folder we cannot read names nobody
  }
  const mark = names?.find((n) => n.startsWith(HOLDER_PREFIX));
  const pid = Number(mark?.split('.')[1]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** The folder every runtime lock lives in (`.tasks/.runtime/`). */
const RUNTIME_FOLDER = '.runtime';

/**
 * Makes the runtime folder a lock lives in again when it is missing and the
 * board around it is not; false for any other lock (a board without its
 * folder is a board that was removed).
 */
function remakeRuntimeFolder(lockPath: string): boolean {
  const folder = dirname(lockPath);
  if (basename(folder) !== RUNTIME_FOLDER || !fs.existsSync(dirname(folder))) return false;
  try {
    fs.mkdirSync(folder);
  } catch (error) {
    if (!isErrnoException(error, 'EEXIST')) return false;
  }
  return true;
}

/** Whether a lock is held right now: its folder is there and was refreshed within the stale time. */
export function isLockHeld(lockPath: string, options: LockOptions): boolean {
  return heldNow(lockPath, staleMsOf(options));
}

/** The stale time proper-lockfile is given: never under 2 s, whatever the configuration says. */
function staleMsOf(options: LockOptions): number {
  return Math.max(2000, options.staleMs);
}

/** Whether a lock folder is there and fresh (refreshed within `staleMs`), as proper-lockfile would judge it. */
function heldNow(lockPath: string, staleMs: number): boolean {
  const stat = fs.statSync(lockPath, { throwIfNoEntry: false });
  return stat !== undefined && Date.now() - stat.mtimeMs < staleMs;
}

/**
 * Puts our holder folder into the lock folder. Creating an entry changes the
 * lock folder's mtime, which proper-lockfile compares against the mtime it
 * recorded when it took the lock ("is the lock still ours?"), so the mtime is
 * put back. False when somebody else marked it too, or it vanished.
 */
function markHolder(lock: Lock): boolean {
  let before: fs.Stats;
  try {
    before = fs.statSync(lock.path);
    fs.mkdirSync(join(lock.path, lock.holder));
    fs.utimesSync(lock.path, before.atime, before.mtime);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return false;
    throw error;
  }
  return lock.lost() === undefined;
}

/**
 * Marks a held lock exclusive: `exclusive.<holder>` in its folder (mtime put
 * back, as for the holder mark). The board lock held this way stands for
 * every task lock (docs/decisions.md, "One writer").
 */
export function markExclusive(lock: HeldLock): void {
  const path = lock.path;
  const holder = (lock as Lock).holder;
  const before = fs.statSync(path);
  fs.mkdirSync(join(path, `${EXCLUSIVE_PREFIX}${holder}`));
  fs.utimesSync(path, before.atime, before.mtime);
  lock.assertHeld();
}

/** True when the lock folder at `lockPath` is held with the exclusive mark. */
export function isExclusivelyHeld(lockPath: string): boolean {
  return readNames(lockPath)?.some((n) => n.startsWith(EXCLUSIVE_PREFIX)) ?? false;
}

const EXCLUSIVE_PREFIX = 'exclusive.';

async function releaseLock(lock: Lock, releaseFolder: () => Promise<void>): Promise<void> {
  const key = resolve(lock.path);
  releasing.set(key, { holder: lock.holder, marked: lock.marked, stillOurs: () => lock.lost() === undefined });
  try {
    await releaseFolder();
  } catch (error) {
    // A compromised lock is already gone; anything else is real.
    if (!lock.compromised && !isErrnoException(error, 'ERELEASED') && !isErrnoException(error, 'ENOENT') && !isErrnoException(error, 'ENOTACQUIRED'))
      throw error;
  } finally {
    releasing.delete(key);
  }
}

/**
 * Runs fn while holding the lock (unmarked); the original error wins over a
 * release error. `maxDelayMs` caps the wait between tries: a lock held for
 * microseconds (the event log's) is worth looking at again soon.
 */
export async function withLock<T>(lockPath: string, options: LockOptions, fn: (lock: HeldLock) => Promise<T> | T, maxDelayMs?: number): Promise<T> {
  const { lock, release } = await acquireLock(lockPath, options, { maxDelayMs });
  let result: T;
  try {
    result = await fn(lock);
  } catch (error) {
    await release().catch(() => undefined);
    throw error;
  }
  await release();
  return result;
}

/** Takes locks in the given order (callers sort); on failure releases what it took. */
export async function acquireLocks(lockPaths: string[], options: LockOptions, mark = false): Promise<AcquiredLock[]> {
  const taken: AcquiredLock[] = [];
  try {
    for (const path of lockPaths) taken.push(await acquireLock(path, options, { mark }));
  } catch (error) {
    await releaseLocks(taken).catch(() => undefined);
    throw error;
  }
  return taken;
}

/** Releases locks in reverse order; the first release error is thrown after all were tried. */
export async function releaseLocks(taken: AcquiredLock[]): Promise<void> {
  let releaseError: unknown;
  for (const t of [...taken].reverse()) {
    try {
      await t.release();
    } catch (error) {
      releaseError ??= error;
    }
  }
  if (releaseError) throw releaseError;
}

/** Runs fn holding every lock in `lockPaths`, taken in the given order (callers sort). */
export async function withLocks<T>(lockPaths: string[], options: LockOptions, fn: (locks: HeldLock[]) => Promise<T> | T): Promise<T> {
  const taken = await acquireLocks(lockPaths, options);
  let result: T;
  try {
    result = await fn(taken.map((t) => t.lock));
  } catch (error) {
    await releaseLocks(taken).catch(() => undefined);
    throw error;
  }
  await releaseLocks(taken);
  return result;
}
