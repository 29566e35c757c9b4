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
  let last = 0;
  eachLineBackwards(file, (line) => {
    try {
      const seq = (JSON.parse(line) as { seq?: unknown }).seq;
      if (typeof seq === 'number') {
        last = seq;
        return true;
      }
    } catch {
      // a torn or foreign line: look further back
    }
    return false;
  });
  return last;
}

/**
 * Hands each line of the log at `file` to `visit`, the last first, until
 * `visit` returns true; a missing log has none. Reads back from the end in
 * chunks (4 KiB, then larger), so a look at the latest events costs what
 * they are, not the whole log; a line cut by a chunk's start is carried, as
 * bytes, to the read before it.
 */
function eachLineBackwards(file: string, visit: (line: string) => boolean): void {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return;
    throw error;
  }
  try {
    let end = fstatSync(fd).size;
    let carry = Buffer.alloc(0);
    for (let chunk = 4096; end > 0; chunk = Math.min(chunk * 4, 65536)) {
      const start = Math.max(0, end - chunk);
      const buf = Buffer.alloc(end - start);
      readSync(fd, buf, 0, buf.length, start);
      let data = carry.length ? Buffer.concat([buf, carry]) : buf;
      end = start;
      if (start > 0) {
        // The first piece may end a line that starts further back: it goes with the next read.
        const cut = data.indexOf(10);
        if (cut < 0) {
          carry = data;
          continue;
        }
        carry = data.subarray(0, cut);
        data = data.subarray(cut + 1);
      }
      const lines = data.toString('utf8').split('\n');
      for (let i = lines.length - 1; i >= 0; i--) if (lines[i].trim() && visit(lines[i])) return;
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
  let count = 0;
  const cutoff = Date.parse(notBefore) - 60_000; // clocks of two processes on one host; a minute of slack
  eachLineBackwards(join(runtimeDir, EVENTS_FILE), (line) => {
    let event: { tx?: unknown; at?: unknown; type?: unknown };
    try {
      event = JSON.parse(line) as { tx?: unknown; at?: unknown; type?: unknown };
    } catch {
      return false;
    }
    if (event.tx === tx && event.type !== 'recovered') count++;
    else if (typeof event.at === 'string' && Date.parse(event.at) < cutoff) return true;
    return false;
  });
  return count;
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
