/**
 * `tasks watch --sync`: a board kept synced, one sync at a time, when it
 * changed and every while otherwise.
 */
import { join } from 'node:path';
import { EVENTS_FILE, readLastSeq } from '../events/events.js';
import type { TaskStore } from '../store.js';
import { syncBoard } from './sync-rounds.js';
import type { SyncOptions, SyncReport } from './sync-types.js';

export interface SyncLoopOptions extends SyncOptions {
  /** Sync at least this often, to see the other machines' work (ms, default 10,000). */
  intervalMs?: number;
  /** How often to look for local changes (the event log's last sequence number), ms (default 500). */
  checkMs?: number;
  onReport?: (report: SyncReport) => void;
  onError?: (error: unknown) => void;
}

/**
 * Keeps a board synced (`tasks watch --sync`): at once when this board
 * changed (its event log moved on; reading its last line is all a look
 * costs) and every `intervalMs` otherwise, one sync at a time.
 */
export function startSyncLoop(store: TaskStore, options: SyncLoopOptions = {}): { close(): Promise<void> } {
  const eventsFile = join(store.runtimeDir, EVENTS_FILE);
  const intervalMs = options.intervalMs ?? 10_000;
  let seenSeq = -1;
  let lastSync = 0;
  let running: Promise<void> | undefined;
  let closed = false;
  const tick = () => {
    if (running || closed) return;
    const seq = readLastSeq(eventsFile);
    if (seq === seenSeq && Date.now() - lastSync < intervalMs) return;
    // A change made while this sync runs moves the log on past `seq`: the next look syncs again (so does
    // what this sync logs itself, once; that second sync finds nothing and logs nothing).
    running = syncBoard(store, options)
      .then((report) => {
        seenSeq = seq;
        options.onReport?.(report);
      }, options.onError)
      .finally(() => {
        lastSync = Date.now();
        running = undefined;
      });
  };
  const timer = setInterval(tick, options.checkMs ?? 500);
  tick();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
