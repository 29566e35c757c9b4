import { mkdirSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { atomicWriteFile, readFileIfExists } from '../fs/fsio.js';
import { isRunning } from './processes.js';
import { withLock } from '../fs/locks.js';
import type { TaskStore } from '../store.js';

/**
 * One watcher per board: `.tasks/.runtime/watcher.json` names the process
 * that watches. It is taken under its own lock, so two watchers starting at
 * once cannot both win; a record left by a process that is gone does not
 * block.
 */

/** Who watches a board. */
export interface WatcherRecord {
  pid: number;
  host: string;
  started: string;
  board: string;
}

export const WATCHER_RECORD = 'watcher.json';

/** A record from another host is trusted while its file was touched this recently (ms). */
export const WATCHER_RECORD_FRESH_MS = 120_000;

function recordPath(store: TaskStore): string {
  return join(store.runtimeDir, WATCHER_RECORD);
}

/** The current record, or undefined when there is none (or it is unreadable). */
export function readWatcherRecord(store: TaskStore): WatcherRecord | undefined {
  const text = readFileIfExists(recordPath(store));
  if (text === undefined) return undefined;
  try {
    const record = JSON.parse(text) as WatcherRecord;
    return typeof record.pid === 'number' && typeof record.host === 'string' ? record : undefined;
  } catch {
    return undefined;
  }
}

/** True when the process a record names still runs (same host), or its record is fresh (another host). */
export function isWatcherAlive(store: TaskStore, record: WatcherRecord): boolean {
  if (record.host === hostname()) return isRunning(record.pid);
  try {
    return Date.now() - statSync(recordPath(store)).mtimeMs < WATCHER_RECORD_FRESH_MS;
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return false;
    throw error;
  }
}

/**
 * Records this process as the board's watcher. Throws E_LOCKED naming the
 * process that already watches; a stale record (dead pid) is replaced.
 */
export async function claimWatcherRecord(store: TaskStore, pid = process.pid): Promise<WatcherRecord> {
  if (!statSync(store.dir, { throwIfNoEntry: false })?.isDirectory())
    throw new TasksError('E_NO_BOARD', `the board ${store.dir} does not exist; run 'tasks init' to create one`);
  mkdirSync(store.runtimeDir, { recursive: true });
  return withLock(join(store.runtimeDir, 'watcher.lock'), store.lockOptions, (lock) => {
    const current = readWatcherRecord(store);
    if (current && isWatcherAlive(store, current))
      throw new TasksError(
        'E_LOCKED',
        `the board is already watched by process ${current.pid} on ${current.host} (since ${current.started}); stop that one first, or delete ${recordPath(store)} if it is not a watcher`,
        { ...current },
      );
    const record: WatcherRecord = { pid, host: hostname(), started: new Date().toISOString(), board: store.dir };
    lock.assertHeld();
    atomicWriteFile(recordPath(store), JSON.stringify(record, null, 2) + '\n');
    return record;
  });
}

/** Keeps the record fresh (for watchers on other hosts) and puts it back if the board was re-created. */
export function touchWatcherRecord(store: TaskStore, record: WatcherRecord): void {
  const current = readWatcherRecord(store);
  if (current && (current.pid !== record.pid || current.host !== record.host)) return; // someone else's now
  if (!statSync(store.dir, { throwIfNoEntry: false })?.isDirectory()) return;
  if (!current) {
    mkdirSync(store.runtimeDir, { recursive: true });
    atomicWriteFile(recordPath(store), JSON.stringify(record, null, 2) + '\n');
    return;
  }
  const now = new Date();
  utimesSync(recordPath(store), now, now);
}

/** Removes the record if it is still ours. */
export function releaseWatcherRecord(store: TaskStore, record: WatcherRecord): void {
  const current = readWatcherRecord(store);
  if (!current || current.pid !== record.pid || current.host !== record.host || current.started !== record.started) return;
  try {
    unlinkSync(recordPath(store));
  } catch (error) {
    if (!isErrnoException(error, 'ENOENT')) throw error;
  }
}
