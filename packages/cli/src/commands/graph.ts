import { GRAPH_FORMATS, TasksError, buildGraph, renderGraph, type GraphFormat } from '@dotasks/core/internal';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import { reportProblems } from '../problems.js';
import type { CommandArgs } from '../command-table.js';
import { printableTask } from '../core-read.js';

/** What `tasks graph` takes, as declared in the command table. */
export interface GraphCommandOptions extends CommandArgs<'graph'>, GlobalOptions {}

/** The dependency graph as Mermaid, Graphviz dot or text; --json prints the graph model. */
export async function graph(options: GraphCommandOptions): Promise<CommandOutput> {
  const format = (options.format ?? 'text') as GraphFormat;
  if (!GRAPH_FORMATS.includes(format)) throw new TasksError('E_USAGE', `unknown graph format '${format}'; use one of ${GRAPH_FORMATS.join(', ')}`);
  const snapshot = openStore(options).loadBoard();
  const model = buildGraph(snapshot.tasks, { all: options.all });
  return {
    // People get the texts made printable; --json gets the model as it is.
    text: options.json ? undefined : renderGraph(buildGraph(snapshot.tasks.map(printableTask), { all: options.all }), format),
    json: model,
    ...reportProblems(snapshot),
  };
}
