// The merge slot (docs/protocol.md, "The way back to main"): one `tasks
// merge` at a time on this machine, whoever runs it. A lock folder in the
// runtime folder, taken like the board's locks (locks.ts): refreshed while
// held, stale and taken over when its holder dies or freezes, with the
// holder mark that lets a taker see a second taker of the same stale lock
// (proper-lockfile #121). The holder's pid, owner and task are written
// inside its own mark, so a waiter can say whom it waits for.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { acquireLock, type AcquiredLock, type LockWait } from '../fs/locks.js';
import type { BoardFiles } from '../engine/board-files.js';

/** The slot's lock folder, in the runtime folder. */
export const MERGE_SLOT = 'merge.lock';

/**
 * How long a merge waits for the slot: a live holder refreshes it for as
 * long as its merge and checks run (a test suite can take many minutes);
 * a dead or frozen one loses it after the stale time.
 */
export const MERGE_SLOT_TIMEOUT_MS = 60 * 60 * 1000;

/** Who holds the slot, as the holder wrote it. */
export interface MergeSlotHolder {
  pid: number;
  host: string;
  owner: string;
  task: number;
  since: string;
}

/** A wait for the slot: the lock's wait, with what its holder wrote. */
export interface MergeSlotWait extends LockWait {
  holder?: MergeSlotHolder;
}

const HOLDER_FILE = 'merge-slot.json';

/** What the slot's holder wrote into its mark; undefined when nobody holds it or it wrote nothing yet. */
export function readMergeSlotHolder(board: BoardFiles): MergeSlotHolder | undefined {
  const slot = join(board.runtimeDir, MERGE_SLOT);
  try {
    for (const mark of readdirSync(slot)) {
      if (!mark.startsWith('holder.')) continue;
      const file = readdirSync(join(slot, mark)).find((name) => name.endsWith(`.${HOLDER_FILE}`));
      if (file) return JSON.parse(readFileSync(join(slot, mark, file), 'utf8')) as MergeSlotHolder;
    }
  } catch {
    return undefined; // released meanwhile, or half written: nobody to name
  }
  return undefined;
}

/**
 * Takes the merge slot for `task`, waiting (up to MERGE_SLOT_TIMEOUT_MS) for
 * a live holder and taking over a stale one; `onWait` hears once, after a
 * second, who holds it. Release it with the returned `release`.
 */
export async function takeMergeSlot(
  board: BoardFiles,
  options: { owner: string; task: number; onWait?: (wait: MergeSlotWait) => void },
): Promise<AcquiredLock> {
  const onWait = options.onWait;
  const taken = await acquireLock(
    join(board.runtimeDir, MERGE_SLOT),
    {
      ...board.lockOptions,
      timeoutMs: Math.max(board.lockOptions.timeoutMs, MERGE_SLOT_TIMEOUT_MS),
      onWait: onWait && ((wait) => onWait({ ...wait, holder: readMergeSlotHolder(board) })),
    },
    // Marked, as the board's locks are: a takeover is seen for certain (assertHeld), even by two takers at once.
    { mark: true, maxDelayMs: 200 },
  );
  const holder: MergeSlotHolder = { pid: process.pid, host: hostname(), owner: options.owner, task: options.task, since: new Date().toISOString() };
  try {
    // Inside our own mark: the lock folder's mtime, which proper-lockfile watches, stays as it is.
    writeFileSync(taken.lock.stagePath(HOLDER_FILE), JSON.stringify(holder) + '\n');
  } catch (error) {
    await taken.release().catch(() => undefined);
    throw error;
  }
  return taken;
}
