import { parseTaskId } from '@dotasks/core';
import { actingOwner, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks release` takes, as declared in the command table. */
export interface ReleaseOptions extends CommandArgs<'release'>, GlobalOptions {}

/** Puts a task back to pending with no owner; someone else's needs --force. */
export async function release(options: ReleaseOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const result = await store.releaseTask(id, { actor: actingOwner(options), force: options.force });
  return { text: `released ${label(result.task)}`, json: { task: viewTask(store, result.task) } };
}
