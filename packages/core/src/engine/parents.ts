// Parents as the write engine keeps them (docs/protocol.md, "Parents"): a
// task's `parent` is written in the child's file only, so every rule about a
// parent asks the board for its children. Setting a parent (no cycle, no
// missing, deleted or completed parent of open work), the completion rules
// (a parent waits for its open children; with `completeParents` it completes
// itself with its last one) and what deleting a parent does to its children
// (they move up to its own parent), each inside the caller's transaction.
import { ClaimError, TasksError, formatCycle } from '../errors.js';
import type { TaskEvent } from '../events/events.js';
import { isClosed, type Task } from '../format/format.js';
import { openBlockers } from '../graph/graph.js';
import { findParentCycle, hierarchyOf } from '../graph/hierarchy.js';
import type { BoardFiles } from './board-files.js';
import { loadBoardSnapshot } from './board-index.js';
import type { ClaimView } from './claim-view.js';
import { unknownIds } from './open-view.js';
import { inRanges } from './id-ranges.js';
import { boardIndexPath } from './index-file.js';
import { readIndexHead, readIndexHeader } from './index-read.js';
import type { Transaction } from './transaction.js';

/**
 * The open tasks whose parent is `parent`, ascending, as the files (and this
 * transaction's staged tasks) have them now. The candidates come from the
 * board index: none from its open part when its header does not list
 * `parent` among the parents of open tasks (most tasks: the header line is
 * all that is read), else the open lines that say `"parent":N`; and its
 * unsure entries and the ids above its high-water mark. What dotasks writes
 * reaches the index before anyone acts
 * on it (a change of parent refreshes it before its locks go,
 * run-transaction.ts), and each candidate is then read from its file. A
 * parent set by hand on a task the index holds counts from the next exact
 * pass (docs/decisions.md, "Parents"). Without a usable index: one exact pass.
 */
export function openChildrenOf(board: BoardFiles, tx: Transaction, parent: number): number[] {
  return openChildrenNow(board.dir, parent, (id) => tx.view(id), tx.stagedTasks());
}

/** openChildrenOf outside a transaction: each candidate as `view` has it (the file, for a reader), and the `extra` tasks as candidates too. */
export function openChildrenNow(dir: string, parent: number, view: (id: number) => Task | undefined, extra: readonly Task[] = []): number[] {
  const candidates = childCandidates(dir, parent);
  for (const task of extra) candidates.add(task.id);
  const open: number[] = [];
  for (const id of candidates) {
    const task = view(id);
    if (task && task.parent === parent && !isClosed(task.status)) open.push(id);
  }
  return open.sort((a, b) => a - b);
}

/** The open children of each parent among claimNext's candidates (every open task is one), as the index has them. */
export function openChildrenAmong(view: ClaimView): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const id of view.candidates) {
    const task = view.peek(id);
    if (task?.parent === undefined || isClosed(task.status)) continue;
    const list = out.get(task.parent);
    if (list) list.push(id);
    else out.set(task.parent, [id]);
  }
  return out;
}

// The most task files a look for children reads one by one before it reads the index's open part instead.
const MAX_READ_AHEAD = 256;

function childCandidates(dir: string, parent: number): Set<number> {
  const file = boardIndexPath(dir);
  // Most tasks are nobody's parent: the header line says so, and only the files it is unsure of, or new since, are read.
  const header = readIndexHeader(file);
  if (header && !header.parents.includes(parent)) {
    // Without the open part, an open task the index has looks new: many such (a mark the pass did not know) are cheaper read from it.
    const since = unknownIds(dir, header, (id) => inRanges(header.closed, id));
    if (!since.present && since.unknown.size <= MAX_READ_AHEAD) return new Set([...header.unsure, ...since.unknown]);
  }
  const head = readIndexHead(file);
  // No index yet: one exact pass, which writes one, but not one claim --next may rank on without its own pass (its edges can go stale).
  if (!head) {
    const tasks = loadBoardSnapshot(dir, { claimTrust: false }).tasks;
    return new Set(tasks.filter((t) => t.parent === parent && !isClosed(t.status)).map((t) => t.id));
  }
  const unsure = new Set<number>(head.header.unsure);
  const out = new Set<number>(unsure);
  const needle = `"parent":${parent}`;
  for (const [id, line] of head.open) if (namesParent(line, needle)) out.add(id);
  const known = (id: number) => head.open.has(id) || unsure.has(id) || inRanges(head.header.closed, id);
  for (const id of unknownIds(dir, head.header, known).unknown) out.add(id);
  return out;
}

/** Whether an index line holds `"parent":N` with N whole (not the start of a longer number); a key of that name elsewhere is read and dropped. */
function namesParent(line: string, needle: string): boolean {
  for (let at = line.indexOf(needle); at >= 0; at = line.indexOf(needle, at + 1)) {
    const next = line.charCodeAt(at + needle.length);
    if (next === 44 || next === 125) return true; // ',' or '}'
  }
  return false;
}

/**
 * Sets (or, with null, clears) `task`'s parent, refusing a parent that is
 * itself, missing, deleted, completed while `task` is open, or one that would
 * make `task` its own ancestor; the parent's lock is taken, so it cannot
 * complete meanwhile, and the board lock, like a change of edges, so two
 * changes that would close a cycle together are serialised. Changes `task`
 * only; the caller puts it.
 */
export function applyParent(tx: Transaction, task: Task, parent: number | null): void {
  if (parent === null) {
    delete task.parent;
    return;
  }
  if (parent === task.id)
    throw new TasksError('E_CYCLE', `refused: a task cannot be its own parent (${formatCycle([task.id, task.id])})`, {
      cycle: [task.id, task.id],
      kind: 'parent',
    });
  tx.need({ board: true, tasks: [parent] });
  const target = tx.tryRead(parent);
  if (!target) throw new TasksError('E_NOT_FOUND', `cannot make #${parent} a parent: it does not exist (see 'tasks list')`, { id: parent });
  if (target.status === 'deleted') throw new TasksError('E_INVALID', `cannot make #${parent} a parent: it is deleted`, { id: parent });
  if (target.status === 'completed' && !isClosed(task.status))
    throw new TasksError(
      'E_INVALID',
      `cannot make #${parent} the parent of #${task.id}: #${parent} is completed, and a completed task takes no open children`,
      { id: parent },
    );
  const cycle = findParentCycle(task.id, parent, (n) => (n === task.id ? task : tx.view(n)));
  if (cycle)
    throw new TasksError(
      'E_CYCLE',
      `refused: #${parent} as the parent of #${task.id} would close a cycle of parents ${formatCycle(cycle)} (a task cannot be its own ancestor)`,
      { cycle, kind: 'parent' },
    );
  task.parent = parent;
}

/**
 * Refuses to complete (or claim) task `id` while it has open children,
 * naming them and how far its children are.
 */
export function assertNoOpenChildren(board: BoardFiles, tx: Transaction, id: number, purpose: 'complete' | 'claim'): void {
  const open = openChildrenOf(board, tx, id);
  if (!open.length) return;
  // A refusal: worth the whole board, for the count of those done.
  const progress = hierarchyOf(loadBoardSnapshot(board.dir)).progress(id);
  const total = Math.max(progress?.total ?? 0, open.length);
  const done = Math.min(progress?.done ?? 0, total - open.length);
  const one = open.length === 1;
  const which = `${open.map((c) => `#${c}`).join(', ')} ${one ? 'is' : 'are'} open (${done}/${total} done)`;
  const next =
    purpose === 'claim'
      ? one
        ? 'claim it instead'
        : 'claim one of them'
      : `complete ${one ? 'it' : 'them'} first, or move ${one ? 'it' : 'them'}: tasks update ${open[0]} --parent none`;
  const message = `task #${id} waits for its children: ${which}; ${next}`;
  if (purpose === 'claim') throw new ClaimError('blocked', message, { task: id, children: open });
  throw new TasksError('E_BLOCKED', message, { id, children: open });
}

/**
 * With `completeParents` (config.json): the parent of `child`, which has just
 * completed, when that parent should now complete by itself: it is open, has
 * no other open child, no open blocker (a parent blocked by other work stays
 * open, and is then ready once that work is done) and no check before done.
 */
export function parentToComplete(board: BoardFiles, tx: Transaction, child: Task): number | undefined {
  if (!board.config.completeParents || child.status !== 'completed' || child.parent === undefined) return undefined;
  const id = child.parent;
  const seen = tx.view(id);
  // A check before done runs before any lock is taken, never inside a change: a parent that has one waits for `tasks done`.
  if (!seen || isClosed(seen.status) || seen.verify !== undefined || board.config.verify !== undefined) return undefined;
  tx.need({ board: true, tasks: [id] });
  const parent = tx.read(id);
  if (isClosed(parent.status) || openBlockers(parent, (n) => tx.view(n)).length) return undefined;
  return openChildrenOf(board, tx, id).length ? undefined : id;
}

/**
 * A parent deleted: its open children move up to its own parent (when that is
 * open), or become tasks of their own, so no open work stays under a
 * tombstone and the work above still waits for them. Closed children keep
 * the deleted parent, as history.
 */
export function liftChildren(board: BoardFiles, tx: Transaction, task: Task, actor: string | undefined): void {
  const open = openChildrenOf(board, tx, task.id);
  if (!open.length) return;
  const up = task.parent === undefined ? undefined : tx.view(task.parent);
  const to = up && !isClosed(up.status) ? up.id : undefined;
  // The parent they move to is locked too: it cannot complete before it has them.
  tx.need({ board: true, tasks: to === undefined ? open : [...open, to] });
  for (const id of open) {
    const child = tx.edit(id);
    if (to === undefined || to === id) delete child.parent;
    else child.parent = to;
    tx.put(child);
    tx.event({ type: 'updated', task: id, owner: actor, fields: ['parent'] });
  }
}

/** `completedParents` of a change's result: the parents it completed by themselves, in the order they completed (none: nothing). */
export function parentsCompleted(events: readonly TaskEvent[]): { completedParents?: number[] } {
  const ids = events.filter((e) => e.type === 'completed' && e.by === 'children' && typeof e.task === 'number').map((e) => e.task!);
  return ids.length ? { completedParents: ids } : {};
}
