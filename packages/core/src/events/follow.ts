import { closeSync, fstatSync, openSync, readSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { EVENTS_FILE, type TaskEvent } from './events.js';
import { taskFileName } from '../format/format.js';
import type { TaskStore } from '../store.js';

/**
 * Reading the board as it changes, without a watcher process: following the
 * event log (`tasks events --follow`) and waiting for one task
 * (`tasks wait`). Both listen with fs.watch on one directory and poll slowly
 * as a fallback (fs.watch misses events on some file systems, and a board
 * folder removed and re-created needs a new watch).
 */

/** Something that runs until closed. */
export interface Follower {
  close(): void;
}

/** A follower of the event log, which can also be asked to read what was appended so far. */
export interface EventFollower extends Follower {
  /** Reads the log's new lines now, calling `onEvent` for each, instead of waiting for the watch or the poll. */
  catchUp(): void;
}

/**
 * Calls `onChange` when something in `dir` changes (fs.watch), and at least
 * every `pollMs`. Re-attaches when the folder is removed and re-created.
 */
export function watchFolder(dir: string, pollMs: number, onChange: (name: string | null) => void): Follower {
  let watcher: FSWatcher | undefined;
  let watchedIno: number | undefined;
  let closed = false;
  const attach = () => {
    let ino: number | undefined;
    try {
      ino = statSync(dir).ino;
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT') && !isErrnoException(error, 'ENOTDIR')) throw error;
    }
    if (ino === watchedIno && watcher) return;
    watcher?.close();
    watcher = undefined;
    watchedIno = ino;
    if (ino === undefined) return;
    try {
      watcher = watch(dir, { persistent: true }, (_event, name) => onChange(name === null ? null : String(name)));
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // Out of inotify watches or an odd file system: the poll below still works.
      watcher = undefined;
    }
  };
  attach();
  const timer = setInterval(() => {
    if (closed) return;
    attach();
    onChange(null);
  }, pollMs);
  return {
    close() {
      closed = true;
      clearInterval(timer);
      watcher?.close();
      watcher = undefined;
    },
  };
}

/** Options for followEvents. */
export interface FollowEventsOptions {
  /** Deliver only events with a seq above this (default 0: the whole log, then what comes). */
  sinceSeq?: number;
  onEvent: (event: TaskEvent) => void;
  /** Fallback poll interval, ms (default 1000). */
  pollMs?: number;
}

/**
 * Streams `.tasks/.runtime/events.jsonl` as it grows: reads only the bytes
 * added since the last read, keeps a partial last line until its newline
 * arrives, and starts over when the log is replaced or truncated.
 */
export function followEvents(store: TaskStore, options: FollowEventsOptions): EventFollower {
  const file = join(store.runtimeDir, EVENTS_FILE);
  let sinceSeq = options.sinceSeq ?? 0;
  let offset = 0;
  let ino: number | undefined;
  let carry = Buffer.alloc(0);
  let closed = false;
  const readNew = () => {
    if (closed) return;
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (error) {
      if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return;
      throw error;
    }
    try {
      const stat = fstatSync(fd);
      if (stat.ino !== ino || stat.size < offset) {
        // A new or truncated log: read it from the start (seq filtering drops what was seen).
        ino = stat.ino;
        offset = 0;
        carry = Buffer.alloc(0);
      }
      while (offset < stat.size) {
        const chunk = Buffer.alloc(Math.min(stat.size - offset, 1 << 20));
        const n = readSync(fd, chunk, 0, chunk.length, offset);
        if (n <= 0) break;
        offset += n;
        carry = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
        let start = 0;
        for (let nl = carry.indexOf(10, start); nl >= 0; nl = carry.indexOf(10, start)) {
          const line = carry.subarray(start, nl).toString('utf8').trim();
          start = nl + 1;
          if (!line) continue;
          let event: TaskEvent;
          try {
            event = JSON.parse(line) as TaskEvent;
          } catch {
            continue; // a foreign or torn line; complete lines after it still count
          }
          if (typeof event.seq !== 'number' || event.seq <= sinceSeq) continue;
          sinceSeq = event.seq;
          options.onEvent(event);
          if (closed) return;
        }
        carry = Buffer.from(carry.subarray(start));
      }
    } finally {
      closeSync(fd);
    }
  };
  readNew();
  const folder = watchFolder(store.runtimeDir, options.pollMs ?? 1000, (name) => {
    if (name === null || name === EVENTS_FILE) readNew();
  });
  return {
    catchUp: readNew,
    close() {
      closed = true;
      folder.close();
    },
  };
}

/** How a wait ended. */
export type WaitOutcome = 'completed' | 'deleted' | 'timeout';

/** Options for waitForTask. */
export interface WaitForTaskOptions {
  /** Give up after this long, ms (default: wait for ever). */
  timeoutMs?: number;
  /** Fallback poll interval, ms (default 1000). */
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Resolves once task `id` is completed or deleted, or when the time is up.
 * Reads the task file whenever the board folder changes (the file itself is
 * the truth, whether or not a watcher or our commands wrote it), polling
 * slowly as a fallback. A file that is missing or half-edited for a moment
 * (git checkout, an editor) is waited through. Throws E_NOT_FOUND when the
 * task does not exist at the start.
 */
export function waitForTask(store: TaskStore, id: number, options: WaitForTaskOptions = {}): Promise<WaitOutcome> {
  store.getTask(id); // not found or unreadable: say so now rather than wait for ever
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const name = taskFileName(id);
    const finish = (outcome: WaitOutcome | Error) => {
      if (done) return;
      done = true;
      folder.close();
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const check = () => {
      const task = store.peekTask(id);
      if (task?.status === 'completed' || task?.status === 'deleted') finish(task.status);
    };
    const onAbort = () => finish(new TasksError('E_TIMEOUT', `stopped waiting for task #${id}`));
    const folder = watchFolder(store.dir, options.pollMs ?? 1000, (changed) => {
      if (changed === null || changed === name) check();
    });
    if (options.timeoutMs !== undefined) timer = setTimeout(() => finish('timeout'), options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort);
    check();
  });
}
