import { inReview, parseTaskId, renderReviewWait, type TaskStatus, type UpdateTaskInput } from '@dotasks/core';
import {
  readDescription,
  actingOwner,
  describeCompletedParents,
  describeUnblocked,
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
import { printable } from '../core-read.js';

/** What `tasks update` takes, as declared in the command table. */
export interface UpdateOptions extends CommandArgs<'update'>, GlobalOptions {}

/** Changes any field of a task; edges on both sides; completion propagates. */
export async function update(options: UpdateOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const patch: UpdateTaskInput = {
    subject: options.subject,
    description: readDescription(options.description),
    activeForm: options.activeForm === '' ? null : options.activeForm,
    owner: options.assign,
    status: options.status as TaskStatus | undefined,
    metadata: parseMeta(options.meta),
    addBlockedBy: parseIdList(options.addBlockedBy),
    removeBlockedBy: parseIdList(options.removeBlockedBy),
    addBlocks: parseIdList(options.addBlocks),
    removeBlocks: parseIdList(options.removeBlocks),
    addRelated: parseIdList(options.related),
    removeRelated: parseIdList(options.removeRelated),
    addDiscoveredFrom: parseIdList(options.discoveredFrom),
    removeDiscoveredFrom: parseIdList(options.removeDiscoveredFrom),
    parent: parseParent(options.parent, true),
    priority: parsePriorities(options.priority)[0],
    addLabels: splitList(options.label),
    removeLabels: splitList(options.removeLabel),
    addPaths: options.path,
    removePaths: options.removePath,
    verify: options.verify === '' ? null : options.verify,
    review: options.review,
  };
  const store = openStore(options);
  const result = await store.updateTask(id, patch, { actor: actingOwner(options), force: options.force });
  const parents = result.completedParents ?? [];
  const intoReview = options.status === 'completed' && inReview(result.task);
  const lines = [
    `updated ${label(result.task)}`,
    ...(intoReview ? [printable(renderReviewWait(result.task))] : []),
    ...describeCompletedParents(store, parents),
    ...describeUnblocked(store, result.unblocked),
  ];
  return {
    text: lines.join('\n'),
    json: { task: viewTask(store, result.task), unblocked: result.unblocked, ...(parents.length ? { completedParents: parents } : {}) },
  };
}
