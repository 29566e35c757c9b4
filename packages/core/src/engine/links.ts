// Soft links between tasks (docs/protocol.md, "Links"): `related` and
// `discoveredFrom`/`discovered`, written on both sides in the transaction of
// the create or update that asks for them, and taken off the other side
// when a task is deleted. They never block, never rank and are never cycles.
import { existsSync } from 'node:fs';
import { TasksError } from '../errors.js';
import { normalizeIds, type Task } from '../format/format.js';
import { LINK_FIELDS, LINK_OTHER_SIDE, addLink, linkedIds, removeLink, type LinkField } from '../format/task-links.js';
import type { BoardFiles } from './board-files.js';
import type { CreateTaskInput, UpdateTaskInput } from './store-types.js';
import type { Transaction } from './transaction.js';

/** The link changes of a create or an update. */
export type LinkPatch = Pick<UpdateTaskInput, 'addRelated' | 'removeRelated' | 'addDiscoveredFrom' | 'removeDiscoveredFrom'>;

/** A create's links as a patch: everything it names is added. */
export function createLinks(input: Pick<CreateTaskInput, 'related' | 'discoveredFrom'>): LinkPatch {
  return { addRelated: input.related, addDiscoveredFrom: input.discoveredFrom };
}

/** Every id a patch names, for the transaction's first guess at its locks. */
export function linkPatchIds(patch: LinkPatch): number[] {
  return normalizeIds([...(patch.addRelated ?? []), ...(patch.removeRelated ?? []), ...(patch.addDiscoveredFrom ?? []), ...(patch.removeDiscoveredFrom ?? [])]);
}

/** The changes of a patch, one field and one id each, removals after additions. */
function changesOf(patch: LinkPatch): { add: boolean; field: LinkField; other: number }[] {
  const each = (ids: number[] | undefined, add: boolean, field: LinkField) => normalizeIds(ids ?? []).map((other) => ({ add, field, other }));
  return [
    ...each(patch.addRelated, true, 'related'),
    ...each(patch.addDiscoveredFrom, true, 'discoveredFrom'),
    ...each(patch.removeRelated, false, 'related'),
    ...each(patch.removeDiscoveredFrom, false, 'discoveredFrom'),
  ];
}

/** Refuses a link from `self` to `other` unless `other` exists, is not deleted and is another task. */
function checkLinkTarget(board: BoardFiles, tx: Transaction, self: number, other: number, field: LinkField): void {
  if (other === self)
    throw new TasksError('E_INVALID', field === 'related' ? `task #${self} cannot be related to itself` : `task #${self} cannot be discovered from itself`, {
      id: self,
    });
  const task = tx.view(other);
  if (!task) {
    if (existsSync(board.taskPath(other))) board.getTask(other); // throws the corruption with its position
    throw new TasksError('E_NOT_FOUND', `cannot link to task #${other}: it does not exist (see 'tasks list')`, { id: other });
  }
  if (task.status === 'deleted') throw new TasksError('E_INVALID', `cannot link to task #${other}: it is deleted`, { id: other });
}

/**
 * Applies a patch's links to task `id` inside a transaction, both sides of
 * each written together; an added link to a task that is missing, deleted
 * or `id` itself is refused (the transaction then writes nothing). Removing
 * a link that is not there changes nothing; removing one to a task that is
 * gone clears this side. Returns whether anything changed.
 */
export function applyLinksInTx(board: BoardFiles, tx: Transaction, id: number, patch: LinkPatch): boolean {
  const changes = changesOf(patch);
  if (changes.length === 0) return false;
  // Two files at once: under the board lock, so the watcher never sees one side without the other.
  tx.need({ board: true, tasks: [id, ...changes.map((c) => c.other)] });
  for (const c of changes) if (c.add) checkLinkTarget(board, tx, id, c.other, c.field);
  let changed = false;
  for (const c of changes) changed = (c.add ? linkInTx(tx, id, c.field, c.other) : unlinkInTx(tx, id, c.field, c.other)) || changed;
  return changed;
}

/** States "`id` `field` `other`" on both sides; true when a side was missing. */
function linkInTx(tx: Transaction, id: number, field: LinkField, other: number): boolean {
  const self = tx.edit(id);
  const them = tx.edit(other);
  const added = addLink(self, field, other);
  const mirrored = addLink(them, LINK_OTHER_SIDE[field], id);
  if (!added && !mirrored) return false;
  tx.put(self);
  tx.put(them);
  tx.event({ type: 'link.added', task: id, field, other });
  return true;
}

/** Takes "`id` `field` `other`" off both sides (the other only if its file is there); true when a side had it. */
function unlinkInTx(tx: Transaction, id: number, field: LinkField, other: number): boolean {
  const self = tx.edit(id);
  const them = tx.tryRead(other) ? tx.edit(other) : undefined;
  const removed = removeLink(self, field, other);
  const mirrored = them ? removeLink(them, LINK_OTHER_SIDE[field], id) : false;
  if (removed) tx.put(self);
  if (them && mirrored) tx.put(them);
  if (removed || mirrored) tx.event({ type: 'link.removed', task: id, field, other });
  return removed || mirrored;
}

/** The tasks a task's links name, for the locks its deletion will want. */
export function linkedTasks(task: Task | undefined): number[] {
  return task ? linkedIds(task) : [];
}

/**
 * A deleted task's links leave the other side, as its id leaves its
 * dependents' `blockedBy`: the tasks it names drop it. Its own fields stay
 * as they were, as history (docs/protocol.md, "Links"). Idempotent.
 */
export function dropLinksOfDeleted(tx: Transaction, id: number): void {
  const task = tx.read(id);
  const others = linkedIds(task);
  if (others.length === 0) return;
  tx.need({ board: true, tasks: others });
  for (const other of others) {
    const them = tx.tryRead(other);
    if (!them) continue;
    const edited = tx.edit(other);
    let changed = false;
    for (const field of LINK_FIELDS) if (task[field]?.includes(other)) changed = removeLink(edited, LINK_OTHER_SIDE[field], id) || changed;
    if (changed) tx.put(edited);
  }
}
