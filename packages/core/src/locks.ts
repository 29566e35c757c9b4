import type * as ProperLockfile from 'proper-lockfile';
import { setTimeout as sleep } from 'node:timers/promises';
import { TasksError, isErrnoException } from './errors.js';

/** How locks behave; every field has a default from PROTOCOL §5. */
export interface LockOptions {
  /** A lock not refreshed for this long is stale and may be taken over (ms). */
  staleMs: number;
  /** Give up waiting for a lock after this long (ms). */
  timeoutMs: number;
}

// proper-lockfile (and graceful-fs under it) loads on the first lock, so
// read-only commands such as `tasks list` never pay for it.
let lockfileModule: typeof ProperLockfile | undefined;
async function loadLockfile(): Promise<typeof ProperLockfile> {
  lockfileModule ??= ((await import('proper-lockfile')) as unknown as { default: typeof ProperLockfile }).default;
  return lockfileModule;
}

export const DEFAULT_LOCK_OPTIONS: LockOptions = { staleMs: 10_000, timeoutMs: 30_000 };

/** A held lock. `assertHeld` throws if proper-lockfile reported it compromised. */
export interface HeldLock {
  readonly path: string;
  compromised?: Error;
  assertHeld(): void;
}

/**
 * Takes the lock directory `lockPath` (proper-lockfile, realpath off so the
 * target need not exist), waiting with jittered backoff up to timeoutMs.
 * A compromised lock never crashes the process: it is recorded and the next
 * write under it fails with E_COMPROMISED.
 */
export async function acquireLock(lockPath: string, options: LockOptions): Promise<{ lock: HeldLock; release: () => Promise<void> }> {
  const deadline = Date.now() + options.timeoutMs;
  const held: HeldLock = {
    path: lockPath,
    assertHeld() {
      if (this.compromised)
        throw new TasksError(
          'E_COMPROMISED',
          `lost the lock ${lockPath} (${this.compromised.message}); nothing was written, run the command again`,
          { lock: lockPath },
          { cause: this.compromised },
        );
    },
  };
  const stale = Math.max(2000, options.staleMs);
  let delay = 1;
  const lockfile = await loadLockfile();
  for (;;) {
    try {
      const release = await lockfile.lock(lockPath, {
        lockfilePath: lockPath,
        realpath: false,
        stale,
        update: Math.max(1000, Math.floor(stale / 2)),
        retries: 0,
        onCompromised: (error) => {
          held.compromised = error;
        },
      });
      return {
        lock: held,
        release: async () => {
          try {
            await release();
          } catch (error) {
            // A compromised lock is already gone; anything else is real.
            if (!held.compromised && !isErrnoException(error, 'ERELEASED') && !isErrnoException(error, 'ENOENT')) throw error;
          }
        },
      };
    } catch (error) {
      if (!isErrnoException(error, 'ELOCKED')) {
        if (isErrnoException(error, 'ENOENT'))
          throw new TasksError('E_IO', `cannot create lock ${lockPath}: its folder is missing (was the board removed?)`, {}, { cause: error });
        throw error;
      }
      if (Date.now() >= deadline)
        throw new TasksError(
          'E_LOCKED',
          `timed out after ${options.timeoutMs} ms waiting for lock ${lockPath}; another tasks process holds it (a lock left by a killed process is taken over after ${Math.round(stale / 1000)} s)`,
          { lock: lockPath },
          { cause: error },
        );
      await sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 40);
    }
  }
}

/** Runs fn while holding the lock; the original error wins over a release error. */
export async function withLock<T>(lockPath: string, options: LockOptions, fn: (lock: HeldLock) => Promise<T> | T): Promise<T> {
  const { lock, release } = await acquireLock(lockPath, options);
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

/** Runs fn holding every lock in `lockPaths`, taken in the given order (callers sort). */
export async function withLocks<T>(lockPaths: string[], options: LockOptions, fn: (locks: HeldLock[]) => Promise<T> | T): Promise<T> {
  const taken: { lock: HeldLock; release: () => Promise<void> }[] = [];
  let result: T;
  try {
    for (const path of lockPaths) taken.push(await acquireLock(path, options));
    result = await fn(taken.map((t) => t.lock));
  } catch (error) {
    for (const t of taken.reverse()) await t.release().catch(() => undefined);
    throw error;
  }
  let releaseError: unknown;
  for (const t of taken.reverse()) {
    try {
      await t.release();
    } catch (error) {
      releaseError ??= error;
    }
  }
  if (releaseError) throw releaseError;
  return result;
}
