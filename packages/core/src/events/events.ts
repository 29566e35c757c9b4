import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { appendToFile, ensureFolder, syncFile } from '../fs/fsio.js';
import { withLock, type LockOptions } from '../fs/locks.js';

/** Event types the core writes; adapters add their own (`job.started` …). */
export type EventType =
  | 'created'
  | 'updated'
  | 'claimed'
  | 'started'
  | 'released'
  | 'completed'
  | 'deleted'
  | 'unblocked'
  | 'edge.added'
  | 'edge.removed'
  | 'cleared'
  | 'heartbeat'
  | 'reaped'
  | 'repaired'
  | 'invalid'
  | 'review.waiting'
  | 'review.claimed'
  | 'review.released'
  | 'review.approved'
  | 'review.rejected'
  | (string & {});

/** One line of `.tasks/.runtime/events.jsonl` (docs/protocol.md, "Events"). */
export interface TaskEvent {
  seq: number;
  at: string;
  type: EventType;
  task?: number;
  owner?: string;
  [key: string]: unknown;
}

export type NewEvent = Omit<TaskEvent, 'seq' | 'at'>;

export const EVENTS_FILE = 'events.jsonl';

/** The last seq in the log, read from its tail. */
export function readLastSeq(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return 0;
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    let chunk = 4096;
    for (;;) {
      const start = Math.max(0, size - chunk);
      const buf = Buffer.alloc(size - start);
      readSync(fd, buf, 0, buf.length, start);
      const lines = buf.toString('utf8').split('\n');
      // The first piece may be cut in the middle unless we read from 0.
      for (let i = lines.length - 1; i >= (start === 0 ? 0 : 1); i--) {
        const line = lines[i].trim();
        if (!line) continue;
        try {
          const seq = (JSON.parse(line) as { seq?: unknown }).seq;
          if (typeof seq === 'number') return seq;
        } catch {
          // a torn or foreign line: look further back
        }
      }
      if (start === 0) return 0;
      chunk *= 4;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Appends events to the log under its own lock, numbering them after the last
 * seq on disk, so seq never repeats however many processes write. A torn last
 * line (a writer killed or a power cut in the middle of an append) is ended
 * first, so it is never glued to the next event. The lock is checked to be
 * ours just before the append, and the log is fsync'd before this returns
 * (after the lock is released: durability does not need the lock). Callers
 * hold their task locks while appending, which keeps the log in causal order.
 */
export async function appendEvents(runtimeDir: string, events: NewEvent[], lockOptions: LockOptions, options: { tx?: string } = {}): Promise<TaskEvent[]> {
  if (events.length === 0) return [];
  ensureFolder(runtimeDir);
  const file = join(runtimeDir, EVENTS_FILE);
  for (let attempt = 1; ; attempt++) {
    try {
      return await appendUnderLock(file, runtimeDir, events, lockOptions, options);
    } catch (error) {
      // The log's lock was taken over before we appended (we stalled): nothing was written, append again.
      if (error instanceof TasksError && error.code === 'E_COMPROMISED' && attempt < 5) continue;
      throw error;
    }
  }
}

async function appendUnderLock(file: string, runtimeDir: string, events: NewEvent[], lockOptions: LockOptions, options: { tx?: string }): Promise<TaskEvent[]> {
  let fd: number | undefined;
  try {
    const written = await withLock(
      join(runtimeDir, 'events.lock'),
      lockOptions,
      (lock) => {
        fd = openSync(file, 'a+');
        const size = fstatSync(fd).size;
        let seq = readLastSeq(file);
        const at = new Date().toISOString();
        const out = events.map((e) => ({ seq: ++seq, at, ...(options.tx ? { tx: options.tx } : {}), ...e }) as TaskEvent);
        let text = out.map((e) => JSON.stringify(e) + '\n').join('');
        if (size > 0 && !endsWithNewline(fd, size)) text = '\n' + text;
        lock.assertHeld();
        appendToFile(fd, file, text);
        return out;
      },
      4,
    );
    syncFile(fd!, file);
    return written;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function endsWithNewline(fd: number, size: number): boolean {
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] === 10;
}

/** Reads the whole log (or the events after `sinceSeq`); torn lines are skipped and counted. */
export function parseEvents(text: string, sinceSeq = 0): TaskEvent[] {
  const out: TaskEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const event = JSON.parse(line) as TaskEvent;
      if (typeof event.seq === 'number' && event.seq > sinceSeq) out.push(event);
    } catch {
      // A line being appended right now; the next read sees it whole.
    }
  }
  return out;
}

/**
 * How many events of transaction `tx` the log holds whole (its `recovered`
 * events not counted). A transaction appends its events in one write, so
 * after a torn append the log holds a first part of them, in order. Reads
 * back from the end and stops at events older than `notBefore` (ISO time): a
 * transaction's events are appended after its journal was written.
 */
export function loggedEventsOfTx(runtimeDir: string, tx: string, notBefore: string): number {
  const file = join(runtimeDir, EVENTS_FILE);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return 0;
    throw error;
  }
  try {
    let end = fstatSync(fd).size;
    let carry = '';
    let count = 0;
    const cutoff = Date.parse(notBefore) - 60_000; // clocks of two processes on one host; a minute of slack
    while (end > 0) {
      const start = Math.max(0, end - 65536);
      const buf = Buffer.alloc(end - start);
      readSync(fd, buf, 0, buf.length, start);
      const lines = (buf.toString('utf8') + carry).split('\n');
      carry = start > 0 ? (lines.shift() ?? '') : '';
      for (let i = lines.length - 1; i >= 0; i--) {
        if (!lines[i].trim()) continue;
        let event: { tx?: unknown; at?: unknown; type?: unknown };
        try {
          event = JSON.parse(lines[i]) as { tx?: unknown; at?: unknown; type?: unknown };
        } catch {
          continue;
        }
        if (event.tx === tx && event.type !== 'recovered') count++;
        else if (typeof event.at === 'string' && Date.parse(event.at) < cutoff) return count;
      }
      end = start;
    }
    return count;
  } finally {
    closeSync(fd);
  }
}

/** The events of transaction `tx` (for a writer whose change another process finished). */
export function readTxEvents(runtimeDir: string, tx: string): TaskEvent[] {
  let text: string;
  try {
    text = readFileSync(join(runtimeDir, EVENTS_FILE), 'utf8');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return [];
    throw error;
  }
  return parseEvents(text).filter((e) => e.tx === tx && e.type !== 'recovered');
}
