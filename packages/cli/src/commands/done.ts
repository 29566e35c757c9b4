import { parseTaskId } from '@dotasks/core';
import { actingOwner, describeUnblocked, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks done` takes, as declared in the command table. */
export interface DoneOptions extends CommandArgs<'done'>, GlobalOptions {}

/** Completes a task and prints the tasks it unblocked. */
export async function done(options: DoneOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const result = await store.completeTask(id, { actor: actingOwner(options), force: options.force });
  const lines = [`completed ${label(result.task)}`, ...describeUnblocked(store, result.unblocked)];
  return { text: lines.join('\n'), json: { task: viewTask(store, result.task), unblocked: result.unblocked } };
}
