import { TasksError, parseTaskId, reviewQueue, type Task } from '@dotasks/core';
import { listLeases } from '@dotasks/core/internal';
import { actingOwner, describeCompletedParents, describeUnblocked, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks review` takes, as declared in the command table. */
export interface ReviewOptions extends CommandArgs<'review'>, GlobalOptions {}
/** What `tasks approve` takes. */
export interface ApproveOptions extends CommandArgs<'approve'>, GlobalOptions {}
/** What `tasks reject` takes. */
export interface RejectOptions extends CommandArgs<'reject'>, GlobalOptions {}

/**
 * The review queue (docs/protocol.md, "Review"): the tasks waiting for
 * review in the order they entered it, each with its owner, since when it
 * waits and the reviewer whose claim is on it, if any.
 */
export async function review(options: ReviewOptions): Promise<CommandOutput> {
  const store = openStore(options);
  const queue = reviewQueue(store.loadBoard().tasks);
  const leases = new Map(listLeases(store.runtimeDir).map((lease) => [lease.task, lease]));
  const rows = queue.map((task) => {
    const lease = leases.get(task.id);
    return { task, since: task.review?.since ?? null, reviewer: lease?.review ? lease.owner : null };
  });
  const lines = rows.map(({ task, since, reviewer }) => {
    const parts = [`${task.owner ? `${printable(task.owner)}'s work` : 'nobody owns it'}`, `waiting since ${printable(since ?? '?')}`];
    if (reviewer !== null) parts.push(`reviewing: ${printable(reviewer)}`);
    return `[?] ${label(task)} (${parts.join('; ')})`;
  });
  lines.push(queue.length ? `${queue.length} task${queue.length === 1 ? ' waits' : 's wait'} for review` : 'nothing waits for review');
  return {
    text: lines.join('\n'),
    json: {
      reviews: rows.map(({ task, since, reviewer }) => ({
        id: task.id,
        subject: task.subject,
        owner: task.owner,
        since,
        reviewer,
        task: viewTask(store, task),
      })),
    },
  };
}

/** Approves a task waiting for review, someone else's: it completes, and the tasks it unblocked are listed. */
export async function approve(options: ApproveOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const result = await store.approveTask(id, { actor: actingOwner(options) });
  const parents = result.completedParents ?? [];
  const lines = [
    `approved ${label(result.task)}${ownerWork(result.task)}; it is completed`,
    ...describeCompletedParents(store, parents),
    ...describeUnblocked(store, result.unblocked),
  ];
  const json = { task: viewTask(store, result.task), unblocked: result.unblocked, ...(parents.length ? { completedParents: parents } : {}) };
  return { text: lines.join('\n'), json };
}

/** Sends a task waiting for review back to its owner, pending, with the note of what to fix. */
export async function reject(options: RejectOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  if (typeof options.note !== 'string' || options.note.trim() === '')
    throw new TasksError('E_USAGE', `reject needs --note: what to fix, for its owner (tasks reject ${id} --note "…")`);
  const store = openStore(options);
  const result = await store.rejectTask(id, { actor: actingOwner(options), note: options.note });
  const to = result.task.owner ? `to ${printable(result.task.owner)}` : 'to the board';
  return { text: `sent ${label(result.task)} back ${to} (pending, with your note)`, json: { task: viewTask(store, result.task) } };
}

/** ` (alice's work)`, for a verdict's line. */
function ownerWork(task: Task): string {
  return task.owner ? ` (${printable(task.owner)}'s work)` : '';
}
