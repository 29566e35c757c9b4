import { TasksError, type TaskStatus } from '@dotasks/core';
import {
  readDescription,
  actingOwner,
  label,
  openStore,
  parseIdList,
  parseMeta,
  parseParent,
  parsePriorities,
  splitList,
  viewTask,
  type CommandOutput,
  type GlobalOptions,
} from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks create` takes, as declared in the command table. */
export interface CreateOptions extends CommandArgs<'create'>, GlobalOptions {}

/** Creates a task, with its edges written on both sides. */
export async function create(options: CreateOptions): Promise<CommandOutput> {
  if (typeof options.subject !== 'string' || options.subject.trim() === '')
    throw new TasksError('E_USAGE', 'create needs a subject: tasks create "Parse the AST"');
  const store = openStore(options);
  const result = await store.createTask(
    {
      subject: options.subject,
      description: readDescription(options.description),
      activeForm: options.activeForm,
      owner: options.assign,
      status: options.status as TaskStatus | undefined,
      blockedBy: parseIdList(options.blockedBy),
      blocks: parseIdList(options.blocks),
      related: parseIdList(options.related),
      discoveredFrom: parseIdList(options.discoveredFrom),
      ...(options.parent !== undefined ? { parent: parseParent(options.parent, false)! } : {}),
      ...(options.path?.length ? { paths: options.path } : {}),
      metadata: parseMeta(options.meta),
      priority: parsePriorities(options.priority)[0],
      labels: splitList(options.label),
      ...(options.key !== undefined ? { key: options.key } : {}),
      ...(options.verify !== undefined ? { verify: options.verify } : {}),
      ...(options.review !== undefined ? { review: options.review } : {}),
    },
    { actor: actingOwner(options) },
  );
  if (result.alreadyApplied)
    return {
      text: `already created ${label(result.task)} with this key; nothing changed`,
      json: { task: viewTask(store, result.task), alreadyApplied: true },
    };
  return { text: `created ${label(result.task)}`, json: { task: viewTask(store, result.task) } };
}
