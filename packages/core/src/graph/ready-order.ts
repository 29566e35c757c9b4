import { isClosed, priorityOf, type Task } from '../format/format.js';
import { readyWith, type TaskLookup } from './graph.js';
import { AncestorPriority } from './hierarchy.js';
import { walkDepthFirst, type DepthFirstVisitor } from './walk.js';

/**
 * The order in which ready work is handed out (`tasks claim --next`, `tasks
 * ready`, the agent tool's claim): priority first (0 before 4), a task
 * ranking with the most urgent priority of the open work waiting behind it
 * (so the P3 blocker of a P0 release goes before plain P2 work; only a
 * priority a file sets flows, the default does not), a child ranking at
 * least as urgent as the priorities set on its open ancestors (docs/protocol.md,
 * "Parents"), then the work
 * a task unblocks, the length of the longest chain of open tasks waiting
 * behind it (so the critical path starts first), then the lower id
 * (docs/protocol.md, "Ready").
 */

/** Why a ready task stands where it does. */
export interface ReadyRank {
  id: number;
  /** The priority it ranks with: its own, its ancestors', or the most urgent of the open tasks waiting behind it. */
  priority: number;
  /** The task's own priority (the default when it has none), as its file has it. */
  ownPriority: number;
  /** When `priority` comes from behind: the open task it comes from (the first such on its chain, lowest id first). */
  through?: number;
  /** When `priority` comes from above: the open ancestor that sets it (the nearest of the most urgent). */
  fromParent?: number;
  /** With `fromParent`: true when that is an ancestor further up than the task's own parent. */
  fromAncestor?: boolean;
  /** How many open tasks the longest chain behind this one holds (0: nothing waits for it). */
  unblocks: number;
  /** That chain, this task first: `[3, 5, 8]` for #3 → #5 → #8. */
  chain: number[];
}

/** Compares two ranks: priority, then the longer chain, then the lower id. */
export function compareRanks(a: ReadyRank, b: ReadyRank): number {
  return a.priority - b.priority || b.unblocks - a.unblocks || a.id - b.id;
}

/**
 * What waits behind one open task, through `blocks` and open tasks only: the
 * longest chain's length (itself counted) and its next step, and the most
 * urgent priority a file sets on it (or on its open ancestors) or on any task
 * of what waits, with the task it is set on.
 */
interface Behind {
  length: number;
  next?: number;
  priority: number;
  source: number;
}

/**
 * Behind for each task asked about: one depth-first walk over the open tasks
 * reached, each visited once whatever the number asked about, both answers
 * settled in the same step. Dependents are followed in ascending id, and a
 * longer chain or a more urgent priority wins only when strictly better, so
 * ties go to the lower id; a cycle (a hand-edited board) is cut, not followed.
 * Its own stack, not the call stack (docs/decisions.md, "Graph searches keep
 * their own stacks"), and no allocation for a task whose dependents are all
 * open and in order, which is almost every task.
 */
class WorkBehind {
  private readonly settled = new Map<number, Behind>();
  private readonly visited = new Set<number>();
  private readonly visitor: DepthFirstVisitor;
  /** The same answers for every open task at once, when the board allows it (BehindInIdOrder). */
  private readonly inIdOrder: BehindInIdOrder | undefined;

  constructor(
    private readonly lookup: TaskLookup,
    parents: AncestorPriority,
  ) {
    // What the tasks on the walk's current path have learnt so far, settled when left.
    const current = new Map<number, Behind>();
    // Only a priority a file sets flows (a task's own, or its ancestors'): a task left at the default pushes nothing ahead of it.
    const set = (id: number) => {
      const task = this.lookup(id);
      return task ? setPriority(task, parents) : Number.POSITIVE_INFINITY;
    };
    this.inIdOrder = lookup.tasks ? BehindInIdOrder.of(lookup.tasks, parents) : undefined;
    this.visitor = {
      next: (id) => this.openDependents(id),
      enter: (id) => {
        current.set(id, { length: 1, priority: set(id), source: id });
      },
      // A task on the current path closes a cycle: cut, not followed.
      revisit: (id, edge) => {
        const known = this.settled.get(id);
        if (known) absorb(current.get(edge.from)!, id, known);
      },
      leave: (id, parent) => {
        const behind = current.get(id)!;
        current.delete(id);
        this.settled.set(id, behind);
        if (parent !== undefined) absorb(current.get(parent)!, id, behind);
      },
    };
  }

  of(root: number): Behind {
    const known = this.inIdOrder?.of(root);
    if (known) return known;
    walkDepthFirst(root, this.visitor, this.visited);
    return this.settled.get(root)!;
  }

  /** The longest chain from `id`, `id` first (after `of(id)`). */
  chain(id: number): number[] {
    if (this.inIdOrder?.of(id)) return this.inIdOrder.chain(id);
    const out: number[] = [];
    for (let at: number | undefined = id; at !== undefined && out.length <= this.settled.size; at = this.settled.get(at)?.next) out.push(at);
    return out;
  }

  /** The open tasks that wait for `id` (its `blocks`), ascending, itself left out: its own array when that is what it holds. */
  private openDependents(id: number): readonly number[] {
    const blocks = this.lookup(id)?.blocks;
    if (!blocks || blocks.length === 0) return NONE;
    let fit = true;
    for (let i = 0; fit && i < blocks.length; i++) {
      const dependent = this.lookup(blocks[i]);
      fit = dependent !== undefined && !isClosed(dependent.status) && blocks[i] !== id && (i === 0 || blocks[i - 1] < blocks[i]);
    }
    if (fit) return blocks;
    return blocks
      .filter((d) => {
        const dependent = this.lookup(d);
        return dependent !== undefined && !isClosed(dependent.status) && d !== id;
      })
      .sort((a, b) => a - b);
  }
}

const NONE: readonly number[] = [];

/** The priority a task's file sets on it, or its open ancestors' when more urgent; none (Infinity) when neither sets one. */
function setPriority(task: Task, parents: AncestorPriority): number {
  const own = task.priority ?? Number.POSITIVE_INFINITY;
  return task.parent === undefined ? own : Math.min(own, parents.of(task)?.priority ?? Number.POSITIVE_INFINITY);
}

/**
 * WorkBehind's answers for every open task of a board, in one pass from the
 * highest id down, when every open task waits only for lower ids (a
 * dependent made after its blocker, as boards are built): then each task's
 * dependents are settled before it, and a task's answer is its dependents'
 * folded in ascending id, exactly as the walk folds them. A board where an
 * open task waits for a higher id (an edge added later by hand or by `dep
 * add`) gets no table and is walked. Typed arrays indexed by id, no object
 * per task: on 10,000 tasks this is a few milliseconds where the walk, cold,
 * cost tens.
 */
class BehindInIdOrder {
  private constructor(
    private readonly length: Int32Array,
    private readonly next: Int32Array,
    private readonly priority: Float64Array,
    private readonly source: Int32Array,
  ) {}

  /** The table, or undefined when the board is not in id order (or its ids are too sparse for arrays). */
  static of(tasks: readonly Task[], parents: AncestorPriority): BehindInIdOrder | undefined {
    let max = 0;
    for (const t of tasks) if (Number.isSafeInteger(t.id) && t.id > max) max = t.id;
    if (max > 4 * tasks.length + 1024) return undefined;
    const open: (Task | undefined)[] = new Array(max + 1);
    for (const t of tasks) if (t.id >= 1 && t.id <= max && !isClosed(t.status)) open[t.id] = t;
    const table = new BehindInIdOrder(new Int32Array(max + 1), new Int32Array(max + 1), new Float64Array(max + 1), new Int32Array(max + 1));
    for (let id = max; id >= 1; id--) {
      const task = open[id];
      if (task && !table.settle(task, open, parents)) return undefined;
    }
    return table;
  }

  /** Folds `task`'s open dependents (all settled: higher ids) into its answer; false when one is a lower id. */
  private settle(task: Task, open: readonly (Task | undefined)[], parents: AncestorPriority): boolean {
    const id = task.id;
    let length = 1;
    let next = 0;
    let priority = setPriority(task, parents);
    let source = id;
    // The fold in ascending id, strictly better winning, whatever order `blocks` is in: ties go to the lower id.
    let bestVia = 0;
    for (const d of task.blocks) {
      if (d === id) continue;
      // Closed or missing: the walk does not follow it either.
      if (!(d >= 1 && d < open.length && open[d])) continue;
      if (d < id) return false;
      const l = this.length[d] + 1;
      if (l > length || (l === length && next !== 0 && d < next)) {
        length = l;
        next = d;
      }
      const p = this.priority[d];
      if (p < priority || (p === priority && bestVia !== 0 && d < bestVia)) {
        priority = p;
        source = this.source[d];
        bestVia = d;
      }
    }
    this.length[id] = length;
    this.next[id] = next;
    this.priority[id] = priority;
    this.source[id] = source;
    return true;
  }

  /** The answer for an open task of the board (undefined for any other id). */
  of(id: number): Behind | undefined {
    if (!(id >= 1 && id < this.length.length) || this.length[id] === 0) return undefined;
    return { length: this.length[id], next: this.next[id] || undefined, priority: this.priority[id], source: this.source[id] };
  }

  /** The longest chain from `id`, `id` first. */
  chain(id: number): number[] {
    const out: number[] = [];
    for (let at = id; at !== 0; at = this.next[at]) out.push(at);
    return out;
  }
}

/** `into` (a task on the walk) learns what waits behind `via`, one of its dependents. */
function absorb(into: Behind, via: number, behind: Behind): void {
  if (behind.length + 1 > into.length) {
    into.length = behind.length + 1;
    into.next = via;
  }
  if (behind.priority < into.priority) {
    into.priority = behind.priority;
    into.source = behind.source;
  }
}

/**
 * A task's rank; its chain only when asked for (the summary's ten ids need
 * none). Its own priority, raised by its open ancestors' (a child ranks at
 * least as urgent as the work it is part of), then by the open work behind
 * it, which wins only when more urgent still.
 */
function rankOf(task: Task, behind: WorkBehind, parents: AncestorPriority, withChain: boolean): ReadyRank {
  const ownPriority = priorityOf(task);
  const above = task.parent === undefined ? undefined : parents.of(task);
  const fromParent = above !== undefined && above.priority < ownPriority ? above : undefined;
  const ranked = fromParent ? fromParent.priority : ownPriority;
  let rank: ReadyRank;
  // Most tasks have nothing behind them: no chain and no walk.
  if (task.blocks.length === 0) rank = { id: task.id, priority: ranked, ownPriority, unblocks: 0, chain: withChain ? [task.id] : NO_CHAIN };
  else {
    const most = behind.of(task.id);
    const inherited = most.source !== task.id && most.priority < ranked;
    rank = {
      id: task.id,
      priority: inherited ? most.priority : ranked,
      ownPriority,
      unblocks: most.length - 1,
      chain: withChain ? behind.chain(task.id) : NO_CHAIN,
    };
    if (inherited) {
      rank.through = most.source;
      return rank;
    }
  }
  if (fromParent) {
    rank.fromParent = fromParent.source;
    if (fromParent.source !== task.parent) rank.fromAncestor = true;
  }
  return rank;
}

const NO_CHAIN: number[] = [];

/** The ranks of `tasks` (all of them, ready or not), best first. */
export function rankTasks(tasks: readonly Task[], lookup: TaskLookup): ReadyRank[] {
  const parents = new AncestorPriority(lookup);
  const behind = new WorkBehind(lookup, parents);
  return tasks.map((t) => rankOf(t, behind, parents, true)).sort(compareRanks);
}

/**
 * The ids of the first `count` of rankTasks' order, for a summary: the same
 * ranks without their chains, the best kept as they come instead of sorting
 * them all.
 */
export function firstRanked(tasks: readonly Task[], lookup: TaskLookup, count: number): number[] {
  if (count <= 0) return [];
  const parents = new AncestorPriority(lookup);
  const behind = new WorkBehind(lookup, parents);
  const best: ReadyRank[] = [];
  for (const task of tasks) {
    const rank = rankOf(task, behind, parents, false);
    if (best.length === count && compareRanks(rank, best[count - 1]) >= 0) continue;
    let at = best.length;
    while (at > 0 && compareRanks(rank, best[at - 1]) < 0) at--;
    best.splice(at, 0, rank);
    if (best.length > count) best.pop();
  }
  return best.map((r) => r.id);
}

/** The ready tasks among `tasks` (for `forOwner`, as isReady), in the order they are handed out. */
export function readyOrder(tasks: readonly Task[], lookup: TaskLookup, forOwner?: string): ReadyRank[] {
  const children = lookup.openChildren;
  return rankTasks(
    tasks.filter((t) => readyWith(t, lookup, forOwner, children)),
    lookup,
  );
}

/** `P1 · unblocks 3 (#3 → #5 → #8 → #9) · id 3`, `P0 from parent #4 (own P2) · …`: why a task stands where it does. */
export function explainRank(rank: ReadyRank): string {
  const behind = rank.unblocks === 0 ? 'unblocks nothing' : `unblocks ${rank.unblocks} (${rank.chain.map((id) => `#${id}`).join(' → ')})`;
  let priority = `P${rank.priority}`;
  if (rank.through !== undefined) priority += ` through #${rank.through} (own P${rank.ownPriority})`;
  else if (rank.fromParent !== undefined) priority += ` from ${rank.fromAncestor ? 'ancestor' : 'parent'} #${rank.fromParent} (own P${rank.ownPriority})`;
  return `${priority} · ${behind} · id ${rank.id}`;
}
