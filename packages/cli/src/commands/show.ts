import { parseTaskId, renderTaskDetail, toTaskView } from '@dotasks/core';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';

export interface ShowOptions extends GlobalOptions {
  id: string;
}

/** One task in full. */
export async function show(options: ShowOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const task = store.getTask(id);
  const cache = new Map<number, ReturnType<typeof store.peekTask>>();
  const lookup = (n: number) => {
    if (!cache.has(n)) cache.set(n, store.peekTask(n));
    return cache.get(n);
  };
  return { text: renderTaskDetail(task, lookup), json: toTaskView(task, lookup) };
}
