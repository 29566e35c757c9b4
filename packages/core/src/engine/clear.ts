// tasks clear: every task file removed in one transaction, the ids kept
// from being handed out again; TaskStore (store.ts) delegates here.
import { CorruptTaskError, TasksError } from '../errors.js';
import type { BoardFiles } from './board-files.js';
import type { ActorOptions } from './store-types.js';

/**
 * Removes every task file and its claim record, in one transaction. Ids are
 * never handed out again: `.highwatermark` keeps the highest. Only with
 * `confirm: true`. Entries that are not task files are left in place.
 */
export async function clearBoard(board: BoardFiles, options: ActorOptions & { confirm: boolean }): Promise<{ removed: number[] }> {
  if (options.confirm !== true) throw new TasksError('E_CONFIRM', "clear removes every task file; run 'tasks clear --yes' to confirm");
  // On a synced board a removed file is not a deletion (only tombstones travel): the next sync would bring every task back.
  if (board.config.sync)
    throw new TasksError(
      'E_INVALID',
      'this board syncs through its board branch, where removed files come back with the next sync; tombstone the tasks instead (tasks delete ID), or stop syncing first (tasks sync --retire)',
    );
  const result = await board.transact({ board: true, tasks: board.listIds() }, (tx) => {
    const removed: number[] = [];
    const ids = board.listIds();
    tx.need({ tasks: ids });
    const highest = Math.max(tx.readHighWaterMark(), ids.at(-1) ?? 0);
    for (const id of ids) {
      let present: boolean;
      try {
        present = tx.readText(id) !== undefined;
      } catch (error) {
        // A folder (or anything but a file) called task_N.json is not ours to remove.
        if (error instanceof CorruptTaskError && /not a regular file/.test(String(error.details.problem))) continue;
        throw error;
      }
      if (!present) continue;
      tx.removeTask(id);
      if (tx.readLease(id)) tx.dropLease(id);
      removed.push(id);
    }
    if (highest > 0) tx.setHighWaterMark(highest);
    tx.event({ type: 'cleared', owner: options.actor, removed: removed.length });
    return removed;
  });
  return { removed: result.value };
}
