/**
 * The one way the core walks the dependency graph: a search for a path
 * (`searchPath`) and a depth-first walk that reports each step
 * (`walkDepthFirst`). Both keep their own stack or queue instead of the call
 * stack, so a 10,000-task chain is walked like any other board
 * (docs/decisions.md, "Graph searches keep their own stacks"), and both visit
 * each task once. What an edge is (`blocks`, either side's word, open tasks
 * only …) is the caller's: it passes `next`.
 */

/** The tasks reached from `id` by one edge, in the order to follow them. */
export type NextIds = (id: number) => Iterable<number>;

/** How a search looks for its target. */
export interface SearchOptions {
  next: NextIds;
  /**
   * `queue`: breadth first, so the path found is a shortest one. `stack`:
   * the last task reached is looked at first (each task marked when first
   * reached), which finds a path without keeping a level in memory.
   */
  frontier: 'queue' | 'stack';
  /** Whether to go on from `id` (it is still a possible target); default: always. */
  expand?: (id: number) => boolean;
}

/**
 * A path `from → … → to` (`[from]` when they are one), or undefined; `to`
 * may be a test, for a path to the first task that passes it. Cost follows
 * the edges reached.
 */
export function searchPath(from: number, to: number | ((id: number) => boolean), options: SearchOptions): number[] | undefined {
  const isTarget = typeof to === 'number' ? (id: number) => id === to : to;
  const parent = new Map<number, number>([[from, from]]);
  const frontier = [from];
  for (let head = 0; options.frontier === 'queue' ? head < frontier.length : frontier.length > 0;) {
    const current = options.frontier === 'queue' ? frontier[head++] : frontier.pop()!;
    if (isTarget(current)) {
      const path = [current];
      for (let at = current; at !== from;) path.push((at = parent.get(at)!));
      return path.reverse();
    }
    if (options.expand && !options.expand(current)) continue;
    for (const next of options.next(current)) {
      if (parent.has(next)) continue;
      parent.set(next, current);
      frontier.push(next);
    }
  }
  return undefined;
}

/** The edge a depth-first walk arrived by. */
export interface WalkEdge {
  from: number;
  /** Position of the edge among `from`'s, and how many it has. */
  index: number;
  count: number;
  /** Depth of the task reached (a root is 0). */
  depth: number;
}

/** What a depth-first walk reports, in the order a recursive walk would. */
export interface DepthFirstVisitor {
  next: (id: number) => readonly number[];
  /**
   * `id` is reached for the first time (`edge` undefined for the root).
   * Returning false leaves it unvisited and not entered: it may be reached
   * again, by another edge.
   */
  enter?: (id: number, edge: WalkEdge | undefined) => boolean | void;
  /** An edge to a task visited already: on the current path (a cycle) or finished. */
  revisit?: (id: number, edge: WalkEdge) => void;
  /** Every edge out of `id` has been followed; `parent` is where the walk came from. */
  leave?: (id: number, parent: number | undefined) => void;
}

/**
 * Walks depth first from `root`, unless `visited` (shared by the walks of
 * one traversal) has it already; each task is entered at most once.
 */
export function walkDepthFirst(root: number, visitor: DepthFirstVisitor, visited: Set<number> = new Set()): void {
  if (visited.has(root)) return;
  if (visitor.enter?.(root, undefined) === false) return;
  visited.add(root);
  const frames = [{ id: root, next: visitor.next(root), i: 0, depth: 0 }];
  while (frames.length) {
    const frame = frames[frames.length - 1];
    if (frame.i < frame.next.length) {
      const index = frame.i++;
      const id = frame.next[index];
      const edge: WalkEdge = { from: frame.id, index, count: frame.next.length, depth: frame.depth + 1 };
      if (visited.has(id)) visitor.revisit?.(id, edge);
      else if (visitor.enter?.(id, edge) !== false) {
        visited.add(id);
        const next = visitor.next(id);
        // A task with nothing further is left at once, without a frame (most tasks of a board).
        if (next.length === 0) visitor.leave?.(id, frame.id);
        else frames.push({ id, next, i: 0, depth: edge.depth });
      }
      continue;
    }
    frames.pop();
    visitor.leave?.(frame.id, frames.at(-1)?.id);
  }
}

/**
 * Longest chains (by task count) through `next`, for the critical path of
 * `tasks graph` and the ready order's "work it unblocks": one depth-first
 * walk over what the roots reach, each task visited once, remembering each
 * task's best length and next step instead of whole chains. Cycles are cut,
 * not followed; ties go to the lower id when `next` lists ids in ascending
 * order.
 */
export class LongestChains {
  private readonly best = new Map<number, { length: number; next?: number }>();
  private readonly visited = new Set<number>();
  private readonly visitor: DepthFirstVisitor;

  constructor(next: (id: number) => readonly number[]) {
    // Length and next step of the tasks on the walk's current path, settled into `best` when left.
    const length = new Map<number, number>();
    const step = new Map<number, number>();
    const lengthen = (id: number, via: number, viaLength: number) => {
      if (viaLength + 1 <= length.get(id)!) return;
      length.set(id, viaLength + 1);
      step.set(id, via);
    };
    this.visitor = {
      next,
      enter: (id) => {
        length.set(id, 1);
      },
      // A task on the current path closes a cycle: cut, not followed.
      revisit: (id, edge) => {
        const known = this.best.get(id);
        if (known) lengthen(edge.from, id, known.length);
      },
      leave: (id, parent) => {
        this.best.set(id, { length: length.get(id)!, next: step.get(id) });
        if (parent !== undefined) lengthen(parent, id, length.get(id)!);
      },
    };
  }

  /** The number of tasks on the longest chain from `id` (itself included). */
  length(id: number): number {
    walkDepthFirst(id, this.visitor, this.visited);
    return this.best.get(id)!.length;
  }

  /** The longest chain from `id`, `id` first. */
  chain(id: number): number[] {
    walkDepthFirst(id, this.visitor, this.visited);
    const out: number[] = [];
    for (let at: number | undefined = id; at !== undefined && out.length <= this.best.size; at = this.best.get(at)?.next) out.push(at);
    return out;
  }
}
