import { appendFileSync, closeSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { isErrnoException } from './errors.js';
import { withLock, type LockOptions } from './locks.js';

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
  | (string & {});

/** One line of `.tasks/.runtime/events.jsonl` (PROTOCOL §7). */
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
 * seq on disk, so seq never repeats however many processes write. Callers hold
 * their task locks while appending, which keeps the log in causal order.
 */
export async function appendEvents(runtimeDir: string, events: NewEvent[], lockOptions: LockOptions): Promise<TaskEvent[]> {
  if (events.length === 0) return [];
  mkdirSync(runtimeDir, { recursive: true });
  const file = join(runtimeDir, EVENTS_FILE);
  return withLock(join(runtimeDir, 'events.lock'), lockOptions, (lock) => {
    let seq = readLastSeq(file);
    const at = new Date().toISOString();
    const written = events.map((e) => ({ seq: ++seq, at, ...e }) as TaskEvent);
    lock.assertHeld();
    appendFileSync(file, written.map((e) => JSON.stringify(e) + '\n').join(''));
    return written;
  });
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
