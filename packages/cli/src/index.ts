/**
 * `dotasks` as a library, chosen name by name (docs/library.md): the public
 * API of `@dotasks/core` (the store, finding the board, the errors, reading
 * and rendering, events, doctor), the `todo` tool of `@dotasks/agent`, and
 * the entry points of the watcher and the worker, so a script can do
 * `import { TaskStore, createTodoTool } from 'dotasks'`. The list is pinned by
 * packages/cli/test/public-api.test.ts.
 */
export * from '@dotasks/core';
export {
  TODO_ACTIONS,
  TODO_TOOL_NAME,
  TOOL_SCHEMA_FORMATS,
  createTodoTool,
  renderToolResult,
  todoInputSchema,
  toolDefinition,
  type AnthropicTool,
  type JsonSchema,
  type JsonSchemaDocument,
  type ObjectSchema,
  type OpenAIFunctionTool,
  type OpenAIResponsesTool,
  type ToolDefinitions,
  type TaskSummary,
  type TodoAction,
  type TodoError,
  type TodoResult,
  type TodoTool,
  type TodoToolOptions,
  type ToolSchemaFormat,
} from '@dotasks/agent';
export { watchBoard, type BoardWatcher, type WatchBoardOptions, type WatchEvent } from '@dotasks/watch';
export { runWorker, type WorkerEvent, type WorkerOptions, type WorkerSummary } from '@dotasks/worker';
export type { CommandOutput, GlobalOptions } from './context.js';
