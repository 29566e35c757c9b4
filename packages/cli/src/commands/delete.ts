import { parseTaskId } from '@dotasks/core';
import { actingOwner, describeUnblocked, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks delete` takes, as declared in the command table. */
export interface DeleteOptions extends CommandArgs<'delete'>, GlobalOptions {}

/** Tombstones a task: the file stays, it never blocks anyone again. */
export async function deleteCommand(options: DeleteOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const result = await store.deleteTask(id, { actor: actingOwner(options) });
  const lines = [`deleted ${label(result.task)} (its file stays as a tombstone)`, ...describeUnblocked(store, result.unblocked)];
  return { text: lines.join('\n'), json: { task: viewTask(store, result.task), unblocked: result.unblocked } };
}
