import { parseTaskId } from '@dotasks/core';
import { actingOwner, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks dep` takes, as declared in the command table. */
export interface DepOptions extends CommandArgs<'dep'>, GlobalOptions {}

/** `dep add ID DEP`: ID waits for DEP (DEP blocks ID); `dep rm` removes that edge. Both sides are written. */
export async function dep(options: DepOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const blocker = parseTaskId(options.dep);
  const store = openStore(options);
  const actor = { actor: actingOwner(options) };
  const result = options.action === 'add' ? await store.addDependency(id, blocker, actor) : await store.removeDependency(id, blocker, actor);
  const text = options.action === 'add' ? `#${id} now waits for #${blocker}` : `#${id} no longer waits for #${blocker}`;
  return { text, json: { task: viewTask(store, result.task) } };
}
