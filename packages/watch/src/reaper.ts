import { join } from 'node:path';
import { EVENTS_FILE, readLastSeq, type TaskStore } from '@dotasks/core/internal';
import { boardExists } from './board-files.js';
import type { WatchEvent } from './watch-events.js';

/** Releases the tasks whose lease expired or whose process died, and delivers the `reaped` events it wrote. */
export async function reapExpiredLeases(store: TaskStore, board: string, actor: string, deliver: (event: WatchEvent) => void): Promise<void> {
  if (!boardExists(board)) return;
  const log = join(store.runtimeDir, EVENTS_FILE);
  const before = readLastSeq(log);
  const reaped = await store.reap({ actor });
  if (reaped.length === 0) return;
  for (const event of store.readEvents(before)) if (event.type === 'reaped' && event.owner === actor) deliver(event);
}

/** A job run every `periodMs` (0 or less: never). */
export interface PeriodicJob {
  periodMs: number;
  run: () => void;
}

/** Starts the periodic jobs (the periodic pass, reaper, watcher record); returns what stops them. */
export function startPeriodicJobs(jobs: PeriodicJob[]): () => void {
  const intervals = jobs.filter((job) => job.periodMs > 0).map((job) => setInterval(job.run, job.periodMs));
  return () => {
    for (const t of intervals) clearInterval(t);
  };
}
