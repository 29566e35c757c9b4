// The read path only (@dotasks/core/read), not the whole core: see read.ts there.
import {
  filterTasks,
  findBoard,
  loadBoardSnapshot,
  readConfig,
  renderBoard,
  toTaskView,
  countTasks,
  TASK_STATUSES,
  TasksError,
  type TaskStatus,
} from '@dotasks/core/read';
import type { CommandOutput, GlobalOptions } from '../context.js';
import { reportProblems } from '../problems.js';
import { styleFor } from '../style.js';
import type { CommandArgs } from '../command-table.js';
import { printable, printableTask } from '../printable.js';

/** What `tasks list` takes, as declared in the command table. */
export interface ListOptions extends CommandArgs<'list'>, GlobalOptions {
  /** Only ready tasks (tasks ready). */
  ready?: boolean;
}

/** The board, one task a line (docs/protocol.md, "Output"); bad files are listed, and make the exit status 1. */
export async function list(options: ListOptions): Promise<CommandOutput> {
  const statuses = (options.status ?? []).flatMap((s) => s.split(',')).filter(Boolean);
  for (const s of statuses)
    if (!(TASK_STATUSES as readonly string[]).includes(s))
      throw new TasksError('E_USAGE', `unknown status '${s}'; use one of ${TASK_STATUSES.join(', ')}`);
  const dir = findBoard({ dir: options.dir, cwd: options.cwd });
  readConfig(dir); // a broken config.json stops every command, this one too
  const snapshot = loadBoardSnapshot(dir);
  // A read acts as nobody: its --owner names whose tasks to show, as --filter-owner does (docs/decisions.md, "One declaration per command").
  const owner = options.filterOwner ?? options.owner;
  const filter = { all: options.all, status: statuses as TaskStatus[], owner, ready: options.ready };
  const lookup = (id: number) => snapshot.byId.get(id);
  if (options.json) {
    return {
      json: {
        tasks: filterTasks(snapshot, filter).map((t) => toTaskView(t, lookup)),
        problems: snapshot.problems,
        counts: countTasks(snapshot),
      },
      exitCode: reportProblems(snapshot).exitCode,
    };
  }
  const style = styleFor(false);
  const shown = { ...snapshot, tasks: snapshot.tasks.map(printableTask), problems: [] };
  const text = renderBoard(shown, { ...filter, owner: owner === undefined ? undefined : printable(owner) }, { style });
  return { text, ...reportProblems(snapshot, style) };
}
