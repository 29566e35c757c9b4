// Closing a task (docs/protocol.md, "Status, edges and readiness"): a
// completion or a deletion, and its propagation, in which its id leaves
// every dependent's blockedBy; each one transaction. TaskStore (store.ts)
// delegates here; mutations.ts closes through closeInTx too.
import { TasksError } from '../errors.js';
import { inReview, isClosed, type Task, type TaskStatus } from '../format/format.js';
import { openBlockers, type TaskLookup } from '../graph/graph.js';
import { printable } from '../views/printable.js';
import type { BoardFiles } from './board-files.js';
import { dropLinksOfDeleted, linkedTasks } from './links.js';
import { checkResult } from './outcome-fields.js';
import { enterReviewInTx, finishesIntoReview } from './review-entry.js';
import { appendNote, applyMetadata, assertHeldBy, checkNoteText, checkTransition, removeId } from './rules.js';
import { assertNoOpenChildren, liftChildren, parentToComplete, parentsCompleted } from './parents.js';
import type { ActorOptions, MutationResult } from './store-types.js';
import type { Transaction, TxScope } from './transaction.js';

/**
 * Marks a task completed or deleted and propagates: its id leaves every
 * dependent's blockedBy; returns the dependents that became unblocked.
 * A completion may complete its parent, and so on up (parentToComplete); a
 * deletion hands its open children to its own parent (liftChildren).
 * Idempotent. `by: 'children'` marks a parent completed by its children.
 */
export function closeInTx(board: BoardFiles, tx: Transaction, id: number, status: 'completed' | 'deleted', options: ActorOptions, by?: 'children'): number[] {
  const unblocked: number[] = [];
  // Up the hierarchy in a loop, not a call a level: a chain of parents can be as long as the board.
  let task = closeOne(board, tx, id, status, options, by, unblocked);
  for (let parent = parentToComplete(board, tx, task); parent !== undefined; parent = parentToComplete(board, tx, task))
    task = closeOne(board, tx, parent, 'completed', options, 'children', unblocked);
  return unblocked;
}

/** Closes one task (closeInTx without the parents above it), adding the dependents it unblocked to `unblocked`. */
function closeOne(
  board: BoardFiles,
  tx: Transaction,
  id: number,
  status: 'completed' | 'deleted',
  options: ActorOptions,
  by: 'children' | undefined,
  unblocked: number[],
): Task {
  const task = tx.edit(id);
  // Propagation writes the dependents: the board lock; a task nobody waits for is a change of one file.
  if (task.blocks.length) tx.need({ board: true, tasks: task.blocks });
  const wasOpen = task.status !== status;
  task.status = status;
  tx.put(task);
  if (tx.readLease(id)) tx.dropLease(id);
  if (wasOpen) tx.event({ type: status, task: id, owner: options.actor, ...(by ? { by } : {}) });
  if (status === 'deleted') dropLinksOfDeleted(tx, id);
  for (const d of task.blocks) {
    const dependent = tx.tryRead(d);
    if (!dependent) continue;
    if (!dependent.blockedBy.includes(id)) continue;
    const edited = tx.edit(d);
    removeId(edited.blockedBy, id);
    tx.put(edited);
    if (edited.blockedBy.length === 0 && !isClosed(edited.status)) {
      unblocked.push(d);
      tx.event({ type: 'unblocked', task: d, by: id });
    }
  }
  if (status === 'deleted') liftChildren(board, tx, task, options.actor);
  return task;
}

/** The locks a completion or deletion of `id` will want: its own, and its dependents' (a deletion's: its links' too) under the board lock. */
function closingScope(board: BoardFiles, id: number, deleting = false): Partial<TxScope> {
  const task = board.peekTask(id);
  const others = [...(task?.blocks ?? []), ...(deleting ? linkedTasks(task) : []), ...(deleting ? [] : parentsItMayComplete(board, task))];
  return { board: others.length > 0, tasks: [id, ...others] };
}

/**
 * With `"completeParents": true`, the open ancestors a completion may
 * complete in turn, and the tasks each of them blocks: locked from the start,
 * since a change that learnt of each one as it went up would start again once
 * per level and give up on a deep hierarchy. A guess from the files as they
 * are (peeked): the transaction still asks for anything else it needs.
 */
export function parentsItMayComplete(board: BoardFiles, task: Task | undefined): number[] {
  if (!board.config.completeParents || !task) return [];
  const out: number[] = [];
  const seen = new Set([task.id]);
  for (let id = task.parent; id !== undefined && !seen.has(id);) {
    const parent = board.peekTask(id);
    if (!parent || isClosed(parent.status)) break;
    seen.add(id);
    out.push(id);
    for (const d of parent.blocks) out.push(d);
    id = parent.parent;
  }
  return out;
}

/** What a completion may also check and write (a finish after its check, engine/verify.ts). */
export interface CompleteOptions extends ActorOptions {
  force?: boolean;
  heldBy?: string;
  metadata?: Record<string, unknown>;
  /** Refuse unless the task still has this status and owner (they were read before a check that ran without locks); a completed one is fine. */
  expect?: { status: TaskStatus; owner: string };
  /** The task's `result` (checked: engine/outcome-fields.ts). */
  result?: string;
  /** A note appended in the same write (a completion that skipped its check says so). */
  note?: string;
}

/**
 * Refuses a completion by `actor` of a task that another owner holds or is
 * assigned, or whose blockers are still open (`tasks done` without --force).
 */
export function assertCompletable(task: Task, actor: string | undefined, lookup: TaskLookup): void {
  const id = task.id;
  if (task.owner !== '' && actor !== undefined && task.owner !== actor && inReview(task))
    throw new TasksError('E_NOT_OWNER', `task #${id} waits for review of ${printable(task.owner)}'s work; approve it ('tasks approve ${id}') or reject it`, {
      id,
      owner: task.owner,
    });
  if (task.owner !== '' && actor !== undefined && task.owner !== actor)
    throw new TasksError('E_NOT_OWNER', `task #${id} belongs to ${task.owner}; only they complete it, or add --force`, { id, owner: task.owner });
  const open = openBlockers(task, lookup);
  if (open.length)
    throw new TasksError('E_BLOCKED', `task #${id} is still blocked by ${open.map((b) => `#${b}`).join(', ')}; finish those first or add --force`, {
      id,
      blockedBy: open,
    });
}

/**
 * Completes a task and propagates. A task owned by someone else needs
 * `force`; so does one whose blockers are still open. A task that requires
 * review goes into review instead (review-entry.ts), `force` or not: force
 * is for the owner and blocker checks, and review is someone else's call.
 */
export async function completeTask(board: BoardFiles, id: number, options: CompleteOptions = {}): Promise<MutationResult> {
  const unblocked: number[] = [];
  const result = await board.transact(closingScope(board, id), (tx) => {
    unblocked.length = 0;
    const task = tx.read(id);
    if (options.heldBy !== undefined) assertHeldBy(task, options.heldBy);
    if (options.expect) assertUnchanged(task, options.expect);
    if (task.status === 'deleted') checkTransition(task, 'completed');
    // Not even with force: a completed parent of open work would say the work is done (docs/protocol.md, "Parents").
    if (task.status !== 'completed') assertNoOpenChildren(board, tx, id, 'complete');
    if (task.status !== 'completed' && !options.force) assertCompletable(task, options.actor, (n) => tx.view(n));
    if (options.metadata || options.result !== undefined || options.note !== undefined) {
      const edited = tx.edit(id);
      if (options.metadata) applyMetadata(edited, options.metadata);
      if (options.result !== undefined) edited.result = checkResult(options.result);
      if (options.note !== undefined) appendNote(edited, { at: new Date().toISOString(), owner: options.actor ?? '', text: checkNoteText(options.note) });
      tx.put(edited);
      if (options.result !== undefined || options.note !== undefined)
        tx.event({
          type: 'updated',
          task: id,
          owner: options.actor,
          fields: [...(options.result !== undefined ? ['result'] : []), ...(options.note !== undefined ? ['notes'] : [])],
        });
    }
    // A task that requires review is finished into review, not completed (docs/protocol.md, "Review"): an approval completes it.
    if (finishesIntoReview(board, tx.read(id))) enterReviewInTx(tx, id, options);
    else for (const d of closeInTx(board, tx, id, 'completed', options)) unblocked.push(d);
  });
  const task = result.written.find((t) => t.id === id) ?? board.getTask(id);
  return { task, written: result.written, unblocked, events: result.events, ...parentsCompleted(result.events) };
}

/** A task that changed while its check ran (taken, released, deleted) is not completed on the strength of that check. */
function assertUnchanged(task: Task, expected: { status: TaskStatus; owner: string }): void {
  if (task.status === 'completed' || (task.status === expected.status && task.owner === expected.owner)) return;
  const now = `${task.status.replace('_', ' ')}${task.owner ? `, owner ${task.owner}` : ''}`;
  throw new TasksError(
    task.owner !== expected.owner ? 'E_NOT_OWNER' : 'E_TRANSITION',
    `task #${task.id} changed while its check ran (now ${now}); it was not completed`,
    { id: task.id, owner: task.owner, status: task.status },
  );
}

/** Propagates completions that were made by hand (idempotent; writes nothing when settled). */
export async function propagateCompletion(board: BoardFiles, id: number, options: ActorOptions = {}): Promise<MutationResult> {
  const unblocked: number[] = [];
  const result = await board.transact(closingScope(board, id), (tx) => {
    unblocked.length = 0;
    const task = tx.read(id);
    if (!isClosed(task.status)) return;
    for (const d of closeInTx(board, tx, id, task.status as 'completed' | 'deleted', options)) unblocked.push(d);
  });
  return { task: board.getTask(id), written: result.written, unblocked, events: result.events };
}

/** Tombstones a task: its file stays, it never blocks anyone again. */
export async function deleteTask(board: BoardFiles, id: number, options: ActorOptions = {}): Promise<MutationResult> {
  const unblocked: number[] = [];
  const result = await board.transact(closingScope(board, id, true), (tx) => {
    unblocked.length = 0;
    tx.read(id);
    for (const d of closeInTx(board, tx, id, 'deleted', options)) unblocked.push(d);
  });
  return { task: board.getTask(id), written: result.written, unblocked, events: result.events };
}
