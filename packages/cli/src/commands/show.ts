import { parseTaskId, renderTaskDetail, toTaskView } from '@dotasks/core';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { ancestorsOf, boardLookup, hierarchyOf, printable, printableLines, printableTask, type Task } from '../core-read.js';

/** What `tasks show` takes, as declared in the command table. */
export interface ShowOptions extends CommandArgs<'show'>, GlobalOptions {}

/** One task in full, with its parents and its children (read from the whole board: children are known from their files only). */
export async function show(options: ShowOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  // Its own file first: a missing or bad one is refused as such.
  const task = store.getTask(id);
  const snapshot = store.loadBoard();
  const byId = new Map(snapshot.byId).set(id, task);
  const board = { tasks: snapshot.tasks.map((t) => byId.get(t.id) ?? t), byId };
  const lookup = boardLookup(board);
  const hierarchy = hierarchyOf(board);
  const shownTasks = board.tasks.map(printableTask);
  const shown = { tasks: shownTasks, byId: new Map<number, Task>(shownTasks.map((t) => [t.id, t])) };
  const boardVerify = store.config.verify === undefined ? {} : { boardVerify: printable(store.config.verify) };
  const text = printableLines(renderTaskDetail(printableTask(task), boardLookup(shown), { ...boardVerify, hierarchy: hierarchyOf(shown) }));
  const children = hierarchy
    .children(id)
    .filter((t) => t.status !== 'deleted')
    .map((t) => t.id);
  const json = { ...toTaskView(task, lookup), ancestors: ancestorsOf(task, lookup), children, progress: hierarchy.progress(id) ?? { done: 0, total: 0 } };
  return { text, json };
}
