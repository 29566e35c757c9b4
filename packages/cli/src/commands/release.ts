import { parseTaskId } from '@dotasks/core';
import { actingOwner, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';

export interface ReleaseOptions extends GlobalOptions {
  id: string;
  force?: boolean;
}

/** Puts a task back to pending with no owner; someone else's needs --force. */
export async function release(options: ReleaseOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const result = await store.releaseTask(id, { actor: actingOwner(options), force: options.force });
  return { text: `released ${label(result.task)}`, json: { task: viewTask(store, result.task) } };
}
