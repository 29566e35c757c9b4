import { watch as watchFolder, type FSWatcher as FolderWatcher } from 'node:fs';
import { dirname, join } from 'node:path';
import { completeMergedTasks, currentTarget, repositoryDirs } from '@dotasks/core/internal';
import type { JobQueue } from './job-queue.js';
import type { WatchSession } from './watch-session.js';

/**
 * Merged means done, watched (docs/protocol.md, "The way back to main"):
 * with "mergedMeansDone" in config.json, the watcher follows the merge
 * target's ref in the git folder (the folder of its loose ref, and the git
 * folder itself for packed-refs and a HEAD that switched branch) and, a
 * moment after it changes, completes the open tasks whose branch it now
 * holds (a task that requires review waits for it instead), as a job of
 * its queue. The full reconcile's period looks too, for
 * a notification the file system dropped.
 */
export interface MergedWorkWatch {
  close(): void;
}

/** Quiet time after the last change of the git folder before looking, ms: one `git merge` writes several files. */
const SETTLE_MS = 50;

/** Starts following the target; nothing when merged-means-done is off or the board is not in git. */
export function watchMergedWork(session: WatchSession, jobs: JobQueue, periodMs: number): MergedWorkWatch {
  const { store, board } = session;
  const repo = store.config.mergedMeansDone ? repositoryDirs(dirname(board)) : undefined;
  if (!repo) return { close: () => {} };
  const look = () => jobs.enqueue('merged', () => settleMergedWork(session));
  let timer: NodeJS.Timeout | undefined;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(look, SETTLE_MS);
  };
  const watches: FolderWatcher[] = [];
  const follow = (folder: string) => {
    try {
      const w = watchFolder(folder, { persistent: false }, soon);
      w.on('error', () => w.close()); // the folder went away (a ref folder packed): the period still looks
      watches.push(w);
    } catch {
      // no such folder yet (a target only in packed-refs): the git folder's own watch and the period see it
    }
  };
  follow(repo.commonDir);
  // Every folder a branch name can nest in would be many watches; the target's own folder is enough.
  const target = currentTarget(board, store.config)?.target ?? store.config.mergeTarget;
  follow(
    join(
      repo.commonDir,
      'refs',
      'heads',
      ...(target
        ? dirname(target)
            .split('/')
            .filter((p) => p !== '.')
        : []),
    ),
  );
  const period = periodMs > 0 ? setInterval(look, periodMs) : undefined;
  period?.unref();
  look();
  return {
    close() {
      clearTimeout(timer);
      clearInterval(period);
      for (const w of watches) w.close();
    },
  };
}

/** One look: the completions go to the log's listeners and to the notices. */
async function settleMergedWork(session: WatchSession): Promise<void> {
  if (session.closed) return;
  for (const done of await completeMergedTasks(session.store, { actor: session.actor })) {
    for (const event of done.result.events) session.events.deliver(event);
    session.notice(
      done.waitsForReview
        ? `#${done.id}'s branch ${done.branch} is merged into ${done.into}; it waits for review ('tasks approve ${done.id}')`
        : `completed #${done.id}: its branch ${done.branch} is merged ("mergedMeansDone")`,
    );
  }
}
