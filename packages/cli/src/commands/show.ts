import { parseTaskId, renderTaskDetail, toTaskView } from '@dotasks/core';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable, printableLines, printableTask } from '../core-read.js';

/** What `tasks show` takes, as declared in the command table. */
export interface ShowOptions extends CommandArgs<'show'>, GlobalOptions {}

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
  const shownLookup = (n: number) => {
    const t = lookup(n);
    return t && printableTask(t);
  };
  const boardVerify = store.config.verify === undefined ? {} : { boardVerify: printable(store.config.verify) };
  return { text: printableLines(renderTaskDetail(printableTask(task), shownLookup, boardVerify)), json: toTaskView(task, lookup) };
}
