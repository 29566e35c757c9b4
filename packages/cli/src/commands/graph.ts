import { GRAPH_FORMATS, TasksError, buildGraph, renderGraph, type GraphFormat } from '@dotasks/core/internal';
import { openStore, reportProblems, type CommandOutput, type GlobalOptions } from '../context.js';

export interface GraphCommandOptions extends GlobalOptions {
  format?: string;
  all?: boolean;
}

/** The dependency graph as Mermaid, Graphviz dot or text; --json prints the graph model. */
export async function graph(options: GraphCommandOptions): Promise<CommandOutput> {
  const format = (options.format ?? 'text') as GraphFormat;
  if (!GRAPH_FORMATS.includes(format)) throw new TasksError('E_USAGE', `unknown graph format '${format}'; use one of ${GRAPH_FORMATS.join(', ')}`);
  const snapshot = openStore(options).loadBoard();
  const model = buildGraph(snapshot.tasks, { all: options.all });
  return {
    text: renderGraph(model, format),
    json: model,
    ...reportProblems(snapshot),
  };
}
