import {
  TasksError,
  importTasks,
  readBacklogTasks,
  readBeadsIssues,
  readClaudeTaskList,
  readDotasksExport,
  readTaskStoreFile,
  toTaskView,
  type ForeignList,
  type Task,
} from '@dotasks/core/internal';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks import` takes, as declared in the command table. */
export interface ImportOptions extends CommandArgs<'import'>, GlobalOptions {}

/** Reads the source of one import kind. */
async function readSource(kind: string, source: string): Promise<ForeignList> {
  if (kind === 'claude') return readClaudeTaskList(source);
  if (kind === 'store') return readTaskStoreFile(source);
  if (kind === 'backlog') return readBacklogTasks(source);
  if (kind === 'beads') return readBeadsIssues(source);
  if (kind === 'dotasks') return readDotasksExport(source);
  throw new TasksError('E_USAGE', `unknown import kind '${kind}'; use claude DIR, store FILE, backlog DIR, beads FILE or dotasks FILE`);
}

/** Imports another tool's tasks (or a tasks export) onto the board's next free ids. */
export async function importCommand(options: ImportOptions): Promise<CommandOutput> {
  const list = await readSource(options.kind, options.source);
  const store = openStore(options);
  const result = await importTasks(store, list, { dryRun: options.dryRun, actor: actingOwner(options) });
  const byId = new Map<number, Task>(result.tasks.map((t) => [t.id, t]));
  const lookup = (id: number) => byId.get(id) ?? store.peekTask(id);
  const { created, updated, unchanged } = result.summary;
  const counts = [`${created} new`, `${updated} updated`, `${unchanged} unchanged`].filter((c) => !c.startsWith('0 ')).join(', ');
  const head = `${result.dryRun ? 'would import' : 'imported'} ${result.mapping.length} task${result.mapping.length === 1 ? '' : 's'} from ${result.source} (${counts}):`;
  const lines = [head];
  for (const m of result.mapping) {
    const t = byId.get(m.to)!;
    const edges = t.blockedBy.length ? ` (blocked by ${t.blockedBy.map((id) => `#${id}`).join(', ')})` : '';
    // A task imported before from this source keeps its id: the import says what it did with it.
    const action = m.action === 'created' ? '' : ` (${m.action})`;
    lines.push(printable(`  ${m.from} -> #${m.to}${action}: ${m.subject}${edges}`));
  }
  if (result.dryRun) lines.push('nothing was written (drop --dry-run to import)');
  return {
    text: lines.join('\n'),
    json: {
      dryRun: result.dryRun,
      source: result.source,
      mapping: result.mapping,
      summary: result.summary,
      tasks: result.tasks.map((t) => toTaskView(t, lookup)),
      warnings: result.warnings,
      notes: result.notes,
    },
    warnings: [...result.notes.map((n) => `note: ${printable(n)}`), ...result.warnings.map((w) => `warning: ${printable(w)}`)],
  };
}
