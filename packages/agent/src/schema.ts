/**
 * The `todo` tool's input schema: plain JSON Schema using only keywords that
 * OpenAI function calling, Anthropic tools and MCP all accept (type, enum,
 * anyOf, items, properties, required, additionalProperties, description,
 * minimum, minLength, minItems). No if/then, no $ref, no top-level combinators.
 */

import { strictSchema } from './strict-schema.js';

export const TODO_TOOL_NAME = 'todo';

export const TODO_ACTIONS = ['create', 'update', 'list', 'get', 'clear', 'write', 'claim', 'release', 'note', 'approve', 'reject'] as const;
export type TodoAction = (typeof TODO_ACTIONS)[number];

export const TODO_STATUSES = ['pending', 'in_progress', 'completed', 'deleted'] as const;

export type { JsonSchema, ObjectSchema } from './schema-types.js';
import type { JsonSchema, ObjectSchema } from './schema-types.js';

const taskId = (description: string): JsonSchema => ({
  description,
  anyOf: [
    { type: 'integer', minimum: 1 },
    { type: 'string', minLength: 1 },
  ],
});

const idList = (description: string): JsonSchema => ({
  type: 'array',
  description,
  items: taskId('a task id: 3, "3", "#3" or "task_3"'),
});

const priority: JsonSchema = {
  type: 'integer',
  enum: [0, 1, 2, 3, 4],
  description: 'priority: 0 is the most urgent, 4 the least; 2 is the default. Ready tasks are claimed in priority order.',
};

const labelList = (description: string): JsonSchema => ({ type: 'array', description, items: { type: 'string', minLength: 1 } });

const todoItem: JsonSchema = {
  type: 'object',
  description: 'One entry: with task_id it changes that task; without, it creates one (subject required).',
  properties: {
    task_id: taskId('the task to change; leave out to create a new one'),
    subject: { type: 'string', minLength: 1, description: 'one-line title' },
    description: { type: 'string', description: 'details' },
    status: { type: 'string', enum: [...TODO_STATUSES] },
    active_form: { type: 'string', description: 'present-tense progress text, e.g. "writing schema"' },
    owner: { type: 'string', description: 'who works on it' },
    blocked_by: idList('ids of existing tasks this one waits for (replaces the list)'),
    parent: taskId('the task this one is part of; "none" removes it'),
    priority,
    labels: labelList('labels, e.g. ["parser", "bug"] (replaces the list)'),
  },
  additionalProperties: false,
};

/** The input schema of the `todo` tool. */
export const todoInputSchema: ObjectSchema = {
  type: 'object',
  properties: {
    action: {
      type: 'string',
      enum: [...TODO_ACTIONS],
      description:
        'create: new task (subject). update: change a task (task_id + fields/status/edges). list: summary of the board. ' +
        'get: one task in full. write: many creates/updates at once (todos). claim: take a ready task (task_id, or none for the next ready one). ' +
        'release: give a claimed task back. note: add a note to a task (task_id, text) for whoever works on it next. ' +
        'approve: approve a task waiting for review, not your own (task_id); it completes. reject: send it back to its owner (task_id, text: what to fix). clear: remove every task.',
    },
    subject: { type: 'string', minLength: 1, description: 'one-line title (create, update)' },
    task_id: taskId('the task: 3, "3", "#3" or "task_3" (update, get, claim, release, note)'),
    status: {
      type: 'string',
      enum: [...TODO_STATUSES],
      description: 'update: in_progress to start (one at a time), completed when done, pending to put it back, deleted to drop it',
    },
    description: { type: 'string', description: 'details of the task (create, update)' },
    active_form: { type: 'string', description: 'present-tense progress text shown on the board, e.g. "writing schema"; "" removes it' },
    owner: { type: 'string', description: 'assign the task to this owner (create, update); default: you' },
    add_blocked_by: idList('ids this task must wait for (create, update); cycles are refused'),
    remove_blocked_by: idList('ids this task no longer waits for (update)'),
    related: idList('ids of tasks this one is related to (create, update: adds); a link on both sides that blocks nothing'),
    remove_related: idList('ids this task is no longer related to (update)'),
    discovered_from: idList('the task you were working on when you found this one, e.g. [3] (create, update: adds); kept on both sides, blocks nothing'),
    parent: taskId(
      'the task this one is part of (create, update; "none" removes it): a parent completes after its children, and its children rank with its priority',
    ),
    paths: {
      type: 'array',
      description:
        'globs of the files the task will change, from the top of the repository, e.g. ["src/parser/**"] (create, update: replaces the list); claims keep tasks on the same files apart',
      items: { type: 'string', minLength: 1, maxLength: 500 },
      maxItems: 100,
    },
    priority,
    add_labels: labelList('labels to add (create, update), e.g. ["parser"]'),
    remove_labels: labelList('labels to remove (update)'),
    text: {
      type: 'string',
      minLength: 1,
      description: 'note: what you found or decided, kept on the task with the time and your name; reject: what to fix, for its owner',
    },
    review: {
      type: 'boolean',
      description:
        'create, update: true when finishing it must wait for review (someone other than its owner approves it before it completes); false: not even when the board requires review',
    },
    result: {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      description: 'update with status completed: what the work came to, in a few lines; the tasks that wait for it see it (get shows upstream results)',
    },
    todos: { type: 'array', description: 'write: the entries, in order', items: todoItem, minItems: 1 },
    include_deleted: { type: 'boolean', description: 'list: also show deleted tasks' },
    key: {
      type: 'string',
      description:
        'create: a unique string you make for this create (e.g. a UUID); sending the same create again with it, after a lost answer or a cancel, returns the task it made instead of a second one',
    },
  },
  required: ['action'],
  additionalProperties: false,
};

/** The formats `tasks tool-schema` prints. */
export type ToolSchemaFormat = 'openai' | 'openai-strict' | 'openai-responses' | 'anthropic' | 'json-schema';
export const TOOL_SCHEMA_FORMATS: readonly ToolSchemaFormat[] = ['openai', 'openai-strict', 'openai-responses', 'anthropic', 'json-schema'];

/** The parts of a tool a definition is made from. */
export interface ToolParts {
  name: string;
  description: string;
  inputSchema: ObjectSchema;
}

/** An OpenAI Chat Completions function tool (`tools[]`); `strict` with `openai-strict`. */
export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: ObjectSchema; strict?: true };
}

/** An OpenAI Responses API function tool, strict. */
export interface OpenAIResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: ObjectSchema;
  strict: true;
}

/** An Anthropic Messages API tool. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ObjectSchema;
}

/** The bare JSON Schema document (draft 2020-12) with the tool's name and description. */
export type JsonSchemaDocument = ObjectSchema & { $schema: string; title: string };

/** What toolDefinition returns for each format. */
export interface ToolDefinitions {
  openai: OpenAIFunctionTool;
  'openai-strict': OpenAIFunctionTool;
  'openai-responses': OpenAIResponsesTool;
  anthropic: AnthropicTool;
  'json-schema': JsonSchemaDocument;
}

/**
 * The tool as a provider expects it: an OpenAI Chat Completions function
 * (`{type: "function", function: {name, description, parameters}}`; with
 * `openai-strict` the strict-mode schema and `strict: true`), an OpenAI
 * Responses API function (`{type: "function", name, description, parameters,
 * strict: true}`, strict as well), an Anthropic tool (`{name, description,
 * input_schema}`), or the bare JSON Schema (draft 2020-12) with the
 * description as its own.
 */
export function toolDefinition<F extends ToolSchemaFormat>(tool: ToolParts, format: F): ToolDefinitions[F] {
  const definitions: { [K in ToolSchemaFormat]: () => ToolDefinitions[K] } = {
    openai: () => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } }),
    'openai-strict': () => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: strictSchema(tool.inputSchema), strict: true },
    }),
    'openai-responses': () => ({ type: 'function', name: tool.name, description: tool.description, parameters: strictSchema(tool.inputSchema), strict: true }),
    anthropic: () => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }),
    'json-schema': () => ({ $schema: 'https://json-schema.org/draft/2020-12/schema', title: tool.name, description: tool.description, ...tool.inputSchema }),
  };
  return definitions[format]();
}
