import { TasksError, importTasks, readClaudeTaskList, readTaskStoreFile, toTaskView, type Task } from '@dotasks/core/internal';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../printable.js';

/** What `tasks import` takes, as declared in the command table. */
export interface ImportOptions extends CommandArgs<'import'>, GlobalOptions {}

/** Imports a Claude Code task list folder or a single-file tasks.json store onto the board's next free ids. */
export async function importCommand(options: ImportOptions): Promise<CommandOutput> {
  const list =
    options.kind === 'claude'
      ? readClaudeTaskList(options.source)
      : options.kind === 'store'
        ? readTaskStoreFile(options.source)
        : (() => {
            throw new TasksError('E_USAGE', `unknown import kind '${options.kind}'; use 'tasks import claude DIR' or 'tasks import store FILE'`);
          })();
  const store = openStore(options);
  const result = await importTasks(store, list, { dryRun: options.dryRun, actor: actingOwner(options) });
  const byId = new Map<number, Task>(result.tasks.map((t) => [t.id, t]));
  const lookup = (id: number) => byId.get(id) ?? store.peekTask(id);
  const head = `${result.dryRun ? 'would import' : 'imported'} ${result.tasks.length} task${result.tasks.length === 1 ? '' : 's'} from ${result.source}:`;
  const lines = [head];
  for (const m of result.mapping) {
    const t = byId.get(m.to)!;
    const edges = t.blockedBy.length ? ` (blocked by ${t.blockedBy.map((id) => `#${id}`).join(', ')})` : '';
    lines.push(printable(`  ${m.from} -> #${m.to}: ${m.subject}${edges}`));
  }
  if (result.dryRun) lines.push('nothing was written (drop --dry-run to import)');
  return {
    text: lines.join('\n'),
    json: { dryRun: result.dryRun, source: result.source, mapping: result.mapping, tasks: result.tasks.map((t) => toTaskView(t, lookup)), warnings: result.warnings },
    warnings: result.warnings.map((w) => `warning: ${printable(w)}`),
  };
}
