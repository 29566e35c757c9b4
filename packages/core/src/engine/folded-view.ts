/**
 * A folded view of a board (open-view.ts): the open tasks in full, the
 * completed and deleted ones counted (`history`), a stub answering for each
 * closed id (closed, nothing else known), the closed children of open tasks
 * for their progress, and the closed tasks that blocked open ones for their
 * results. Made from a board read whole (foldHistory) or from the index's
 * head and the files read again (foldedView); `tasks show` reads the few
 * closed tasks it prints in full (withClosedRead).
 */
import { createRecord, isClosed, type Task, type TaskStatus } from '../format/format.js';
import { shareHierarchy } from '../graph/hierarchy.js';
import { inRanges } from './id-ranges.js';
import type { IndexHead } from './index-read.js';
import type { BoardSnapshot, TaskProblem } from './store-types.js';

/** The completed and deleted tasks a folded view counts without reading them. */
export type FoldedHistory = NonNullable<BoardSnapshot['history']>;

/**
 * A board read for its open work. With `history`, `tasks` holds the open
 * tasks only and the closed ones are counted there; `byId` still answers
 * for a closed task as far as its status goes (a stub: no subject), which
 * is all readiness needs. `children` lists the closed children of open
 * tasks, as stubs, for their progress. Without `history` it is the whole
 * board (loadBoardSnapshot), folded by nobody.
 */
export interface OpenSnapshot extends BoardSnapshot {
  children?: Task[];
  /** With `history`: the closed tasks that blocked open ones, as `[closed, open]` (their results go downstream). */
  closedBlockers?: [number, number][];
}

/**
 * The tasks to look for a task's blockers among (results.ts, upstreamOf):
 * the view's tasks, and for a folded history a stub for each closed task
 * that blocked an open one (a completed blocker leaves blockedBy).
 */
export function blockersAmong(open: OpenSnapshot): Task[] {
  if (!open.closedBlockers?.length) return open.tasks;
  const stubs = new Map<number, Task>();
  for (const [closed, dependent] of open.closedBlockers) {
    let s = stubs.get(closed);
    if (!s) stubs.set(closed, (s = stub(closed, 'completed')));
    s.blocks.push(dependent);
  }
  return [...open.tasks, ...stubs.values()];
}

/** A whole board as a folded view, when it has more than `foldAt` closed tasks. */
export function foldHistory(snapshot: BoardSnapshot, foldAt: number): OpenSnapshot {
  let completed = 0;
  let deleted = 0;
  for (const t of snapshot.tasks) {
    if (t.status === 'completed') completed++;
    else if (t.status === 'deleted') deleted++;
  }
  if (completed + deleted <= foldAt) return snapshot;
  const open = snapshot.tasks.filter((t) => !isClosed(t.status));
  const openIds = new Set(open.map((t) => t.id));
  const children = snapshot.tasks.filter((t) => isClosed(t.status) && t.parent !== undefined && openIds.has(t.parent));
  shareHierarchy(open, { tasks: [...open, ...children] });
  const closedBlockers: [number, number][] = [];
  for (const t of snapshot.tasks) if (isClosed(t.status)) for (const d of t.blocks) if (openIds.has(d)) closedBlockers.push([t.id, d]);
  return { tasks: open, byId: snapshot.byId, problems: snapshot.problems, history: { completed, deleted }, children, closedBlockers };
}

/** The folded view: the open tasks, the closed ones counted, a stub for each closed id. */
export function foldedView(tasks: Task[], closedNow: Task[], problems: TaskProblem[], header: IndexHead['header']): OpenSnapshot {
  tasks.sort((a, b) => a.id - b.id);
  problems.sort((a, b) => (a.id ?? 0) - (b.id ?? 0) || a.file.localeCompare(b.file));
  const known = new Map<number, Task>(tasks.map((t) => [t.id, t]));
  const nowClosed = new Set(closedNow.map((t) => t.id));
  for (const t of closedNow) known.set(t.id, t);
  let completed = header.completed;
  let deleted = header.deleted;
  for (const t of closedNow) {
    if (inRanges(header.closed, t.id)) continue; // counted already
    if (t.status === 'completed') completed++;
    else deleted++;
  }
  const openIds = new Set(tasks.map((t) => t.id));
  const children: Task[] = closedNow.filter((t) => t.parent !== undefined && openIds.has(t.parent));
  for (const [parent, child, gone] of header.closedKids) {
    if (openIds.has(parent) && !nowClosed.has(child)) children.push(stub(child, gone ? 'deleted' : 'completed', parent));
  }
  // Progress ("3/5 done") counts the closed children too.
  shareHierarchy(tasks, { tasks: [...tasks, ...children] });
  const closedBlockers = header.closedBlockers.filter(([closed, dependent]) => openIds.has(dependent) && !nowClosed.has(closed));
  for (const t of closedNow) for (const d of t.blocks) if (openIds.has(d)) closedBlockers.push([t.id, d]);
  return { tasks, byId: new ClosedStubs(known, header.closed), problems, history: { completed, deleted }, children, closedBlockers };
}

/** The tasks read, and for any other id the index has as closed, a stub: closed, nothing else known. */
class ClosedStubs extends Map<number, Task> {
  constructor(
    known: Map<number, Task>,
    private readonly closed: [number, number][],
  ) {
    super(known);
  }

  override get(id: number): Task | undefined {
    return super.get(id) ?? (inRanges(this.closed, id) ? stub(id, 'completed') : undefined);
  }

  override has(id: number): boolean {
    return super.has(id) || inRanges(this.closed, id);
  }

  /** Whether `id` is only a stub here (closed, its file not read). */
  isStub(id: number): boolean {
    return !super.has(id) && inRanges(this.closed, id);
  }

  /** The same, with these tasks read in full. */
  with(tasks: Task[]): ClosedStubs {
    const known = new Map<number, Task>(this);
    for (const t of tasks) known.set(t.id, t);
    return new ClosedStubs(known, this.closed);
  }
}

/**
 * A folded view with some closed tasks read in full (`tasks show`: the
 * task's closed children and ancestors, whose subjects it prints).
 * `read` gives a task's file, or undefined.
 */
export function withClosedRead(open: OpenSnapshot, ids: Iterable<number>, read: (id: number) => Task | undefined): OpenSnapshot {
  const byId = open.byId;
  if (!(byId instanceof ClosedStubs)) return open;
  const full: Task[] = [];
  for (const id of ids) {
    const stubbed = byId.isStub(id) || open.children?.some((c) => c.id === id);
    const task = stubbed ? read(id) : undefined;
    if (task) full.push(task);
  }
  if (!full.length) return open;
  const replaced = new Map(full.map((t) => [t.id, t]));
  const children = (open.children ?? []).map((c) => replaced.get(c.id) ?? c);
  const tasks = [...open.tasks];
  shareHierarchy(tasks, { tasks: [...tasks, ...children] });
  return { ...open, tasks, byId: byId.with(full), children };
}

/** The ids of a task's closed children in a folded view, and of the closed ones above it. */
export function closedAround(open: OpenSnapshot, task: Task): number[] {
  const ids = (open.children ?? []).filter((c) => c.parent === task.id).map((c) => c.id);
  const seen = new Set<number>([task.id]);
  for (let at = task.parent; at !== undefined && !seen.has(at);) {
    seen.add(at);
    ids.push(at);
    at = open.byId.get(at)?.parent;
  }
  return ids;
}

/** A closed task known by its id alone (and its parent, for a closed child). */
function stub(id: number, status: TaskStatus, parent?: number): Task {
  return {
    id,
    subject: '',
    description: '',
    status,
    owner: '',
    blockedBy: [],
    blocks: [],
    extra: createRecord(),
    ...(parent !== undefined ? { parent } : {}),
  };
}
