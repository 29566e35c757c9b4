import { parseTaskId, renderTaskDetail, toTaskView } from '@dotasks/core';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import {
  ancestorsOf,
  boardLookup,
  closedAround,
  hierarchyOf,
  isClosed,
  loadOpenSnapshot,
  printable,
  printableLines,
  printableTask,
  shareHierarchy,
  withClosedRead,
  type OpenSnapshot,
  type Task,
} from '../core-read.js';

/** What `tasks show` takes, as declared in the command table. */
export interface ShowOptions extends CommandArgs<'show'>, GlobalOptions {}

/** One task in full, with its parents and its children (read from the whole board: children are known from their files only). */
export async function show(options: ShowOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  // Its own file first: a missing or bad one is refused as such.
  const task = store.getTask(id);
  const snapshot: OpenSnapshot = isClosed(task.status) ? store.loadBoard() : openBoard(store, task);
  const byId = new Overlay(snapshot.byId, (n) => (n === id ? task : undefined));
  const tasks = snapshot.tasks.map((t) => (t.id === id ? task : t));
  const board = { tasks, byId };
  // A folded board's closed children count in the hierarchy (open-view.ts).
  shareHierarchy(tasks, { tasks: [...tasks, ...(snapshot.children ?? [])] });
  const lookup = boardLookup(board);
  const hierarchy = hierarchyOf(board);
  // What the detail prints, made printable as it is looked up: the whole board is not printed.
  const printed = new Map<number, Task | undefined>();
  const shownTasks = tasks.map(printableTask);
  const shown = {
    tasks: shownTasks,
    byId: new Overlay(new Map(), (n) => {
      if (!printed.has(n)) {
        const found = byId.get(n);
        printed.set(n, found && printableTask(found));
      }
      return printed.get(n);
    }),
  };
  shareHierarchy(shownTasks, { tasks: [...shownTasks, ...(snapshot.children ?? []).map(printableTask)] });
  const boardVerify = store.config.verify === undefined ? {} : { boardVerify: printable(store.config.verify) };
  const text = printableLines(renderTaskDetail(printableTask(task), boardLookup(shown), { ...boardVerify, hierarchy: hierarchyOf(shown) }));
  const children = hierarchy
    .children(id)
    .filter((t) => t.status !== 'deleted')
    .map((t) => t.id);
  const json = { ...toTaskView(task, lookup), ancestors: ancestorsOf(task, lookup), children, progress: hierarchy.progress(id) ?? { done: 0, total: 0 } };
  return { text, json };
}

/** A map that answers from `own` first, then from `base`: a board with one task (or every task) seen another way. */
class Overlay extends Map<number, Task> {
  constructor(
    private readonly base: ReadonlyMap<number, Task>,
    private readonly own: (id: number) => Task | undefined,
  ) {
    super();
  }

  override get(id: number): Task | undefined {
    return this.own(id) ?? this.base.get(id);
  }

  override has(id: number): boolean {
    return this.get(id) !== undefined;
  }
}

/**
 * The board around an open task without reading the history (a folded board):
 * the open work, and in full the task's closed children and ancestors, whose
 * subjects the detail prints.
 */
function openBoard(store: ReturnType<typeof openStore>, task: Task): OpenSnapshot {
  const open = loadOpenSnapshot(store.dir, { foldAt: store.config.foldHistory });
  return withClosedRead(open, closedAround(open, task), (n) => store.peekTask(n));
}
