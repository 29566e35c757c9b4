import { TasksError, type BoardFinding, type NewEvent, type TaskEvent, type TaskStore } from '@dotasks/core/internal';

/** An event the watcher caused, as appended to the log; `unlogged` when the log could not be written. */
export type WatchEvent = TaskEvent & { unlogged?: true };

/** A problem the watcher reports but cannot fix. */
export type InvalidFinding = Extract<BoardFinding, { kind: 'invalid' }>;

/** Where the watcher's events go: the board's event log, then the listener. */
export interface WatchEventSink {
  /** Hands an event to the listener; a listener's failure is not the watcher's. */
  deliver(event: WatchEvent): void;
  /** Appends an event of the watcher's own; if the log cannot be written, still tells the listener. */
  record(event: NewEvent): Promise<void>;
  /** Records a `watch.error`: something the watcher tried failed (the next change or reconcile retries it). */
  reportFailure(action: string, error: unknown, task?: number): Promise<void>;
  /** Records an `invalid` event for a problem the watcher cannot fix. */
  reportInvalid(finding: InvalidFinding): Promise<void>;
}

export interface EventSinkOptions {
  store: TaskStore;
  /** The owner recorded on the events. */
  actor: string;
  onEvent?: (event: WatchEvent) => void;
  /** Whether the board folder exists; without it, events are only delivered. */
  boardExists: () => boolean;
}

function describe(error: unknown): { code: string; message: string } {
  if (error instanceof TasksError) return { code: error.code, message: error.message };
  return { code: 'E_INTERNAL', message: error instanceof Error ? error.message : String(error) };
}

export function createEventSink({ store, actor, onEvent, boardExists }: EventSinkOptions): WatchEventSink {
  const deliver = (event: WatchEvent) => {
    try {
      onEvent?.(event);
    } catch {
      // a listener's failure is not the watcher's
    }
  };
  const unlogged = (event: NewEvent) => deliver({ seq: 0, at: new Date().toISOString(), owner: actor, ...event, unlogged: true } as WatchEvent);

  const record = async (event: NewEvent) => {
    if (!boardExists()) return unlogged(event);
    try {
      deliver(await store.recordEvent({ owner: actor, ...event }));
    } catch {
      unlogged(event);
    }
  };

  return {
    deliver,
    record,
    async reportFailure(action, error, task) {
      const { code, message } = describe(error);
      await record({ type: 'watch.error', ...(task !== undefined ? { task } : {}), action, code, message });
    },
    async reportInvalid(f) {
      const event: NewEvent = { type: 'invalid', file: f.file, problem: f.problem };
      if (f.task !== undefined) event.task = f.task;
      if (f.line !== undefined) event.line = f.line;
      if (f.column !== undefined) event.column = f.column;
      await record(event);
    },
  };
}
