/**
 * The hierarchy of a board (docs/protocol.md, "Parents"): a task's `parent`
 * is kept in the child's file only, and everything else is derived from
 * the children: a parent's children and its progress ("3/5 done"), the
 * chain of its ancestors, the priority a child inherits from them, and the
 * cycles a hand edit or a merge can make.
 */
import { isClosed, type Task } from '../format/format.js';
import type { TaskLookup } from './graph.js';

const NONE: readonly number[] = [];

/** How far a parent's children are: `done` completed of `total` (deleted ones not counted). */
export interface Progress {
  done: number;
  total: number;
}

/** The children of every task of a board, from each child's `parent`. */
export class Hierarchy {
  private readonly kids = new Map<number, Task[]>();
  private readonly open = new Map<number, readonly number[]>();

  constructor(tasks: Iterable<Task>) {
    for (const task of tasks) {
      if (task.parent === undefined) continue;
      const list = this.kids.get(task.parent);
      if (list) list.push(task);
      else this.kids.set(task.parent, [task]);
    }
    for (const list of this.kids.values()) list.sort((a, b) => a.id - b.id);
  }

  /** The tasks whose parent is `id`, ascending id, deleted ones included (they are history). */
  children(id: number): readonly Task[] {
    return this.kids.get(id) ?? [];
  }

  /** The open (pending or in progress) children of `id`, ascending (computed once: readiness asks for every task). */
  openChildren(id: number): readonly number[] {
    const list = this.kids.get(id);
    if (!list) return NONE;
    let open = this.open.get(id);
    if (open === undefined) {
      const ids = list.filter((t) => !isClosed(t.status)).map((t) => t.id);
      this.open.set(id, (open = ids.length ? ids : NONE));
    }
    return open;
  }

  /** Completed of all children but the deleted ones; undefined for a task with none. */
  progress(id: number): Progress | undefined {
    const list = this.kids.get(id);
    if (!list) return undefined;
    let done = 0;
    let total = 0;
    for (const t of list) {
      if (t.status === 'deleted') continue;
      total++;
      if (t.status === 'completed') done++;
    }
    return total ? { done, total } : undefined;
  }

  /** Whether any task of the board has a parent. */
  get empty(): boolean {
    return this.kids.size === 0;
  }
}

/** A board's tasks and their index by id, as a snapshot holds them. */
export interface TaskSet {
  tasks: readonly Task[];
  byId: ReadonlyMap<number, Task>;
}

const built = new WeakMap<readonly Task[], Hierarchy>();

/** The hierarchy of a snapshot's tasks, built once per list of tasks. */
export function hierarchyOf(board: { tasks: readonly Task[] }): Hierarchy {
  let hierarchy = built.get(board.tasks);
  if (!hierarchy) built.set(board.tasks, (hierarchy = new Hierarchy(board.tasks)));
  return hierarchy;
}

/**
 * Lets `tasks` (copies of a board's tasks: the printable ones a listing
 * shows) share the hierarchy of the tasks they were copied from, instead of
 * deriving it again: what it answers (open children, progress) depends on
 * ids and statuses, which a copy keeps.
 */
export function shareHierarchy(tasks: readonly Task[], from: { tasks: readonly Task[] }): void {
  built.set(tasks, hierarchyOf(from));
}

/** A lookup over a whole board that knows each task's open children (so readiness does: graph.ts, isReady). */
export function boardLookup(board: TaskSet): TaskLookup {
  // The map itself, not `board.byId` on every call: every listing's lookups share this closure, over snapshots of several shapes.
  const byId = board.byId;
  const lookup: TaskLookup = (id) => byId.get(id);
  let hierarchy: Hierarchy | undefined;
  lookup.openChildren = (id) => (hierarchy ??= hierarchyOf(board)).openChildren(id);
  lookup.tasks = board.tasks;
  return lookup;
}

/** The ancestors of `task`, its parent first; the chain stops at a parent that is missing (listed) or at a cycle (made by hand). */
export function ancestorsOf(task: Task, lookup: TaskLookup): number[] {
  const out: number[] = [];
  const seen = new Set([task.id]);
  for (let parent = task.parent; parent !== undefined && !seen.has(parent); parent = lookup(parent)?.parent) {
    out.push(parent);
    seen.add(parent);
  }
  return out;
}

/**
 * Would `parent` as the parent of `child` close a cycle of parents? The
 * cycle from `child` up to itself (`[child, parent, …, child]`) if so. Walks
 * up from `parent` only: the cost is the depth of the hierarchy.
 */
export function findParentCycle(child: number, parent: number, lookup: TaskLookup): number[] | undefined {
  if (child === parent) return [child, child];
  const path = [child];
  const seen = new Set<number>([child]);
  for (let at: number | undefined = parent; at !== undefined; at = lookup(at)?.parent) {
    path.push(at);
    if (at === child) return path;
    // A cycle above that does not pass through `child` was there before; this edge adds none.
    if (seen.has(at)) return undefined;
    seen.add(at);
  }
  return undefined;
}

/**
 * Every cycle of parents among `tasks` (each task has at most one parent,
 * so each cycle is found once), each from its lowest id in the direction
 * child → parent, first == last: `[1, 2, 3, 1]` when #1's parent is #2.
 */
export function parentCycles(tasks: Iterable<Task>): number[][] {
  const parentOf = new Map<number, number>();
  for (const t of tasks) if (t.parent !== undefined) parentOf.set(t.id, t.parent);
  const state = new Map<number, 'walking' | 'done'>();
  const cycles: number[][] = [];
  for (const start of [...parentOf.keys()].sort((a, b) => a - b)) {
    const walk: number[] = [];
    let at: number | undefined = start;
    while (at !== undefined && !state.has(at)) {
      state.set(at, 'walking');
      walk.push(at);
      at = parentOf.get(at);
    }
    if (at !== undefined && state.get(at) === 'walking') {
      const ring = walk.slice(walk.indexOf(at));
      const low = ring.indexOf(ring.reduce((a, b) => Math.min(a, b)));
      const cycle = [...ring.slice(low), ...ring.slice(0, low)];
      cycles.push([...cycle, cycle[0]]);
    }
    for (const id of walk) state.set(id, 'done');
  }
  return cycles.sort((a, b) => a[0] - b[0]);
}

/** The most urgent priority set on a task's open ancestors, and the ancestor it is set on. */
export interface ParentUrgency {
  priority: number;
  source: number;
}

/**
 * For each task asked about, the most urgent priority a file sets on its
 * open ancestors (a child ranks at least as urgent as the work it is part
 * of; the default, set by nobody, passes nothing down). The nearest ancestor
 * wins a tie; the chain stops at a closed or missing ancestor and at a
 * cycle. Each task is walked once, however many ask.
 */
export class AncestorPriority {
  private readonly memo = new Map<number, ParentUrgency | null>();

  constructor(private readonly lookup: TaskLookup) {}

  /** What `task`'s ancestors pass down to it, if anything. */
  of(task: Task): ParentUrgency | undefined {
    if (task.parent === undefined) return undefined;
    const known = this.memo.get(task.id);
    if (known !== undefined) return known ?? undefined;
    const quick = task.parent !== task.id ? this.fromKnownParent(task) : undefined;
    if (quick !== undefined) return quick ?? undefined;
    // Up the chain while the parent is open and its answer unknown; then the answers down again.
    const chain: Task[] = [];
    const seen = new Set<number>();
    let cut = true;
    let at: Task | undefined = task;
    while (at) {
      if (this.memo.has(at.id)) {
        cut = false;
        break;
      }
      chain.push(at);
      seen.add(at.id);
      const next: Task | undefined = at.parent === undefined || seen.has(at.parent) ? undefined : this.lookup(at.parent);
      at = next && !isClosed(next.status) ? next : undefined;
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const last = i === chain.length - 1;
      const parent = last ? (cut ? undefined : this.lookup(chain[i].parent!)) : chain[i + 1];
      let urgency: ParentUrgency | null = null;
      if (parent) {
        const own = parent.priority !== undefined ? { priority: parent.priority, source: parent.id } : null;
        const above = this.memo.get(parent.id) ?? null;
        // Set by the parent itself wins a tie with what comes from further up.
        urgency = own && (!above || own.priority <= above.priority) ? own : above;
      }
      this.memo.set(chain[i].id, urgency);
    }
    return this.memo.get(task.id) ?? undefined;
  }

  /**
   * The answer without a walk when the parent's is known: missing or closed
   * (nothing passes down), at the top, or asked about before; undefined when
   * it takes the walk. Almost every call of a listing ends here.
   */
  private fromKnownParent(task: Task): ParentUrgency | null | undefined {
    const parent = this.lookup(task.parent!);
    let urgency: ParentUrgency | null = null;
    if (parent && !isClosed(parent.status)) {
      if (parent.parent !== undefined && !this.memo.has(parent.id)) return undefined;
      const own = parent.priority !== undefined ? { priority: parent.priority, source: parent.id } : null;
      const above = parent.parent === undefined ? null : (this.memo.get(parent.id) ?? null);
      if (parent.parent === undefined) this.memo.set(parent.id, null);
      // Set by the parent itself wins a tie with what comes from further up.
      urgency = own && (!above || own.priority <= above.priority) ? own : above;
    }
    this.memo.set(task.id, urgency);
    return urgency;
  }
}
