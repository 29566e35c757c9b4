import { TasksError } from '@dotasks/core';
import type { CommandOutput, GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks tool-schema` takes, as declared in the command table. */
export interface ToolSchemaOptions extends CommandArgs<'tool-schema'>, GlobalOptions {}

/** Prints the `todo` tool for a model provider: an OpenAI function, an Anthropic tool, or plain JSON Schema. */
export async function toolSchema(options: ToolSchemaOptions): Promise<CommandOutput> {
  const { TODO_DESCRIPTION, TODO_TOOL_NAME, TOOL_SCHEMA_FORMATS, todoInputSchema, toolDefinition } = await import('@dotasks/agent');
  const format = options.format ?? 'json-schema';
  if (!(TOOL_SCHEMA_FORMATS as readonly string[]).includes(format))
    throw new TasksError('E_USAGE', `unknown format '${format}'; use one of ${TOOL_SCHEMA_FORMATS.join(', ')}`);
  const definition = toolDefinition(
    { name: TODO_TOOL_NAME, description: TODO_DESCRIPTION, inputSchema: todoInputSchema },
    format as (typeof TOOL_SCHEMA_FORMATS)[number],
  );
  return { text: JSON.stringify(definition, null, 2), json: definition };
}
