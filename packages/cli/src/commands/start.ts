import { parseTaskId } from '@dotasks/core';
import { actingOwner, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';

export interface StartOptions extends GlobalOptions {
  id: string;
  activeForm?: string;
}

/** Starts a task as the acting owner (a claim that does not expire). */
export async function start(options: StartOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const owner = actingOwner(options);
  const result = await store.startTask(id, { owner, actor: owner, activeForm: options.activeForm });
  return {
    text: `${result.alreadyHeld ? 'already working on' : 'started'} ${label(result.task)} (owner: ${owner})`,
    json: { task: viewTask(store, result.task) },
  };
}
