/** The watcher's jobs, run one at a time, so the watcher never races itself. */
export interface JobQueue {
  /** Queues `job` unless a job of the same key is already waiting; a failure goes to `onError` with the key's kind (`check:3` → `check`). */
  enqueue(key: string, job: () => Promise<void>, task?: number): void;
  /** Resolves once the jobs queued so far have run (or failed). */
  drained(): Promise<void>;
}

export interface JobQueueOptions {
  /** Once closed, waiting jobs are skipped. */
  isClosed: () => boolean;
  onError: (action: string, error: unknown, task?: number) => Promise<void>;
}

export function createJobQueue({ isClosed, onError }: JobQueueOptions): JobQueue {
  let queue: Promise<void> = Promise.resolve();
  const queued = new Set<string>();
  return {
    enqueue(key, job, task) {
      if (queued.has(key)) return;
      queued.add(key);
      queue = queue.then(async () => {
        queued.delete(key);
        if (isClosed()) return;
        try {
          await job();
        } catch (error) {
          await onError(key.replace(/:.*/, ''), error, task);
        }
      });
    },
    drained: () => queue.catch(() => undefined),
  };
}
