// The read path only (@dotasks/core/read), like list: a search of 10,000 tasks costs what listing them does.
import {
  findBoard,
  loadBoardSnapshot,
  loadOpenSnapshot,
  readConfig,
  thousands,
  renderTaskLine,
  searchTasks,
  toTaskView,
  TasksError,
  printableTask,
} from '../core-read.js';
import type { CommandOutput, GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { reportProblems } from '../problems.js';
import { styleFor } from '../style.js';

/** What `tasks search` takes, as declared in the command table. */
export interface SearchOptions extends CommandArgs<'search'>, GlobalOptions {}

/** Tasks whose subject, labels, description or notes contain the text, best field first, one a line as list prints them. */
export async function search(options: SearchOptions): Promise<CommandOutput> {
  const text = typeof options.text === 'string' ? options.text : '';
  if (text.trim() === '') throw new TasksError('E_USAGE', 'search needs some text: tasks search parser');
  const dir = findBoard({ dir: options.dir, cwd: options.cwd });
  const config = readConfig(dir);
  // A folded history is not searched unless asked (--all): docs/protocol.md, "A board's history".
  const snapshot = options.all ? loadBoardSnapshot(dir) : loadOpenSnapshot(dir, { foldAt: config.foldHistory });
  const folded = snapshot.history;
  const lookup = (id: number) => snapshot.byId.get(id);
  const hits = searchTasks(snapshot, text, { all: options.all });
  if (options.json) {
    return {
      json: {
        tasks: hits.map((h) => ({ ...toTaskView(h.task, lookup), match: h.field })),
        problems: snapshot.problems,
        ...(folded ? { history: { ...folded, searched: false } } : {}),
      },
      exitCode: reportProblems(snapshot).exitCode,
    };
  }
  const style = styleFor(false);
  const shownLookup = (id: number) => {
    const t = lookup(id);
    return t && printableTask(t);
  };
  const lines = hits.map((h) => `${renderTaskLine(printableTask(h.task), shownLookup, style)}${h.field === 'subject' ? '' : style.muted(` [${h.field}]`)}`);
  const unsearched = folded ? ` among the open work (${thousands(folded.completed)} completed not searched: tasks search --all ${JSON.stringify(text)})` : '';
  lines.push(style.muted(`${hits.length ? `${hits.length} match${hits.length === 1 ? '' : 'es'}` : 'no task matches'}${unsearched}`));
  return { text: lines.join('\n'), ...reportProblems(snapshot, style) };
}
