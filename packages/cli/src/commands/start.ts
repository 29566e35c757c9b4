import { parseTaskId } from '@dotasks/core';
import { actingOwner, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks start` takes, as declared in the command table. */
export interface StartOptions extends CommandArgs<'start'>, GlobalOptions {}

/** Starts a task as the acting owner (a claim that does not expire). */
export async function start(options: StartOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const owner = actingOwner(options);
  const result = await store.startTask(id, { owner, actor: owner, activeForm: options.activeForm });
  return {
    text: `${result.alreadyHeld ? 'already working on' : 'started'} ${label(result.task)} (owner: ${printable(owner)})`,
    json: { task: viewTask(store, result.task) },
  };
}
