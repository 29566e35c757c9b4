// Closing a task (docs/protocol.md, "Status, edges and readiness"): a
// completion or a deletion, and its propagation, in which its id leaves
// every dependent's blockedBy; each one transaction. TaskStore (store.ts)
// delegates here; mutations.ts closes through closeInTx too.
import { TasksError } from '../errors.js';
import { isClosed } from '../format/format.js';
import { openBlockers } from '../graph/graph.js';
import type { BoardFiles } from './board-files.js';
import { dropLinksOfDeleted, linkedTasks } from './links.js';
import { applyMetadata, assertHeldBy, checkTransition, removeId } from './rules.js';
import type { ActorOptions, MutationResult } from './store-types.js';
import type { Transaction, TxScope } from './transaction.js';

/**
 * Marks a task completed or deleted and propagates: its id leaves every
 * dependent's blockedBy; returns the dependents that became unblocked.
 * Idempotent.
 */
export function closeInTx(board: BoardFiles, tx: Transaction, id: number, status: 'completed' | 'deleted', options: ActorOptions): number[] {
  const task = tx.edit(id);
  // Propagation writes the dependents: the board lock; a task nobody waits for is a change of one file.
  if (task.blocks.length) tx.need({ board: true, tasks: task.blocks });
  const wasOpen = task.status !== status;
  task.status = status;
  tx.put(task);
  if (tx.readLease(id)) tx.dropLease(id);
  if (wasOpen) tx.event({ type: status, task: id, owner: options.actor });
  if (status === 'deleted') dropLinksOfDeleted(tx, id);
  const unblocked: number[] = [];
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
  return unblocked;
}

/** The locks a completion or deletion of `id` will want: its own, and its dependents' (a deletion's: its links' too) under the board lock. */
function closingScope(board: BoardFiles, id: number, deleting = false): Partial<TxScope> {
  const task = board.peekTask(id);
  const others = [...(task?.blocks ?? []), ...(deleting ? linkedTasks(task) : [])];
  return { board: others.length > 0, tasks: [id, ...others] };
}

/**
 * Completes a task and propagates. A task owned by someone else needs
 * `force`; so does one whose blockers are still open.
 */
export async function completeTask(
  board: BoardFiles,
  id: number,
  options: ActorOptions & { force?: boolean; heldBy?: string; metadata?: Record<string, unknown> } = {},
): Promise<MutationResult> {
  const unblocked: number[] = [];
  const result = await board.transact(closingScope(board, id), (tx) => {
    unblocked.length = 0;
    const task = tx.read(id);
    if (options.heldBy !== undefined) assertHeldBy(task, options.heldBy);
    if (task.status === 'deleted') checkTransition(task, 'completed');
    if (task.status !== 'completed' && !options.force) {
      if (task.owner !== '' && options.actor !== undefined && task.owner !== options.actor)
        throw new TasksError('E_NOT_OWNER', `task #${id} belongs to ${task.owner}; only they complete it, or add --force`, {
          id,
          owner: task.owner,
        });
      const open = openBlockers(task, (n) => tx.view(n));
      if (open.length)
        throw new TasksError('E_BLOCKED', `task #${id} is still blocked by ${open.map((b) => `#${b}`).join(', ')}; finish those first or add --force`, {
          id,
          blockedBy: open,
        });
    }
    if (options.metadata) {
      const edited = tx.edit(id);
      applyMetadata(edited, options.metadata);
      tx.put(edited);
    }
    unblocked.push(...closeInTx(board, tx, id, 'completed', options));
  });
  const task = result.written.find((t) => t.id === id) ?? board.getTask(id);
  return { task, written: result.written, unblocked, events: result.events };
}

/** Propagates completions that were made by hand (idempotent; writes nothing when settled). */
export async function propagateCompletion(board: BoardFiles, id: number, options: ActorOptions = {}): Promise<MutationResult> {
  const unblocked: number[] = [];
  const result = await board.transact(closingScope(board, id), (tx) => {
    unblocked.length = 0;
    const task = tx.read(id);
    if (!isClosed(task.status)) return;
    unblocked.push(...closeInTx(board, tx, id, task.status as 'completed' | 'deleted', options));
  });
  return { task: board.getTask(id), written: result.written, unblocked, events: result.events };
}

/** Tombstones a task: its file stays, it never blocks anyone again. */
export async function deleteTask(board: BoardFiles, id: number, options: ActorOptions = {}): Promise<MutationResult> {
  const unblocked: number[] = [];
  const result = await board.transact(closingScope(board, id, true), (tx) => {
    unblocked.length = 0;
    tx.read(id);
    unblocked.push(...closeInTx(board, tx, id, 'deleted', options));
  });
  return { task: board.getTask(id), written: result.written, unblocked, events: result.events };
}
