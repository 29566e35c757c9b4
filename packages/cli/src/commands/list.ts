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

export interface ListOptions extends GlobalOptions {
  all?: boolean;
  status?: string[];
  filterOwner?: string;
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
  const filter = { all: options.all, status: statuses as TaskStatus[], owner: options.filterOwner, ready: options.ready };
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
  const text = renderBoard({ ...snapshot, problems: [] }, filter, { style });
  return { text, ...reportProblems(snapshot, style) };
}
