import { EXPORT_FORMATS, TasksError, exportBoard, type ExportFormat } from '@dotasks/core';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import { reportProblems } from '../problems.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks export` takes, as declared in the command table. */
export interface ExportOptions extends CommandArgs<'export'>, GlobalOptions {}

/** Prints the board as JSON, JSON lines or Markdown. */
export async function exportCommand(options: ExportOptions): Promise<CommandOutput> {
  const format = (options.format ?? 'json') as ExportFormat;
  if (!EXPORT_FORMATS.includes(format)) throw new TasksError('E_USAGE', `unknown export format '${format}'; use one of ${EXPORT_FORMATS.join(', ')}`);
  const snapshot = openStore(options).loadBoard();
  return {
    text: exportBoard(snapshot, format, { all: options.all }),
    ...reportProblems(snapshot),
  };
}
