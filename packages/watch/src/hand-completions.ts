import { isClosed, type BoardGraph, type TaskStatus } from '@dotasks/core/internal';
import type { WatchSession } from './watch-session.js';

/**
 * Completions made by hand (an editor, a script, git) never pass through the
 * store, so nothing logged them; the watcher does, with `by: "hand"`
 * (docs/protocol.md, "Events"). A completion made through the store logs its
 * own `completed` while it holds the board lock, so the check here, made
 * under the same locks, finds it in the log and adds nothing.
 */

/** The ids whose status went from open (as `before` last knew it) to completed in `after`. */
export function newlyCompleted(before: (id: number) => TaskStatus | undefined, after: BoardGraph, ids: Iterable<number>): number[] {
  const out: number[] = [];
  for (const id of ids) {
    const was = before(id);
    if (was !== undefined && !isClosed(was) && after.get(id)?.status === 'completed') out.push(id);
  }
  return out;
}

/** Logs a `completed` event for each of `ids` that is completed and has none in the log yet. */
export async function recordHandCompletions(session: WatchSession, ids: number[]): Promise<void> {
  if (ids.length === 0 || session.closed) return;
  const { store, actor, events } = session;
  try {
    const result = await store.transact({ board: true, tasks: ids }, (tx) => {
      const logged = new Set(store.readEvents().flatMap((e) => (e.type === 'completed' && typeof e.task === 'number' ? [e.task] : [])));
      for (const id of ids) {
        const task = tx.tryRead(id);
        if (task?.status === 'completed' && !logged.has(id)) tx.event({ type: 'completed', task: id, owner: actor, by: 'hand' });
      }
    });
    for (const event of result.events) events.deliver(event);
  } catch (error) {
    // A bad file, a lock timeout: the completion stays unlogged; the file itself is what counts.
    await events.reportFailure('completed', error, ids[0]);
  }
}
