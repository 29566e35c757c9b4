/**
 * The dependency graph as the files state it (BoardGraph), kept up to date
 * change by change: the one graph the watcher, doctor and imports ask about
 * cycles and about the tasks that name a task. The judgement of its edges is
 * reconcile.ts.
 */
import { searchPath, walkDepthFirst, type DepthFirstVisitor } from '../graph/walk.js';
import type { Task } from '../format/format.js';
import { LinkIndex, linkFacts } from './link-check.js';
import type { EdgeNode } from './verdicts.js';

/**
 * The dependency graph as the files state it, either side counting: the edge
 * "A blocks B" exists when `A.blocks ∋ B` or `B.blockedBy ∋ A`. Repairs only
 * make one-sided edges two-sided, so this graph is the one that must stay
 * acyclic. Reverse indexes make a change's work follow its own edges.
 */
export class BoardGraph {
  private nodes = new Map<number, EdgeNode>();
  /** id → tasks whose `blockedBy` names id. */
  private namedByBlockedBy = new Map<number, Set<number>>();
  /** id → tasks whose `blocks` names id. */
  private namedByBlocks = new Map<number, Set<number>>();
  /** id → tasks whose soft links name id (docs/protocol.md, "Links"). */
  readonly links = new LinkIndex();

  static fromTasks(tasks: Iterable<Task>): BoardGraph {
    const graph = new BoardGraph();
    for (const task of tasks) graph.set(task.id, task);
    return graph;
  }

  get size(): number {
    return this.nodes.size;
  }

  get(id: number): EdgeNode | undefined {
    return this.nodes.get(id);
  }

  ids(): IterableIterator<number> {
    return this.nodes.keys();
  }

  /** Records what task `id` says now; returns what it said before. */
  set(id: number, task: EdgeNode): EdgeNode | undefined {
    const before = this.delete(id);
    // Keep only the edge facts, so the rest of a parsed task can be collected.
    const node: EdgeNode = { status: task.status, blockedBy: [...task.blockedBy], blocks: [...task.blocks], ...linkFacts(task) };
    this.nodes.set(id, node);
    this.links.set(id, node);
    for (const b of node.blockedBy) addTo(this.namedByBlockedBy, b, id);
    for (const w of node.blocks) addTo(this.namedByBlocks, w, id);
    return before;
  }

  /** Forgets task `id` (its file is gone); returns what it said before. */
  delete(id: number): EdgeNode | undefined {
    const before = this.nodes.get(id);
    if (!before) return undefined;
    this.nodes.delete(id);
    this.links.delete(id, before);
    for (const b of before.blockedBy) removeFrom(this.namedByBlockedBy, b, id);
    for (const w of before.blocks) removeFrom(this.namedByBlocks, w, id);
    return before;
  }

  /** Tasks whose `blockedBy` names `id`. */
  waitersNaming(id: number): number[] {
    return [...(this.namedByBlockedBy.get(id) ?? [])];
  }

  /** Tasks whose `blocks` names `id`. */
  blockersNaming(id: number): number[] {
    return [...(this.namedByBlocks.get(id) ?? [])];
  }

  /** Tasks `id` blocks, by either side's word. */
  successors(id: number): number[] {
    const node = this.nodes.get(id);
    const out = new Set(node?.blocks ?? []);
    for (const w of this.namedByBlockedBy.get(id) ?? []) out.add(w);
    return [...out];
  }

  /**
   * A path `from → … → to` along "blocks" edges, or undefined. Deleted tasks
   * never block, so the walk does not pass through them. Cost follows the
   * edges reached, not the board's size.
   */
  findPath(from: number, to: number): number[] | undefined {
    return searchPath(from, to, {
      frontier: 'queue',
      next: (id) => this.successors(id),
      expand: (id) => id === from || this.nodes.get(id)?.status !== 'deleted',
    });
  }

  /**
   * A cycle through `id` (`[id, …, id]`, rotated to start at its lowest id):
   * the shortest one leaving by the lowest successor that comes back, staying
   * within `within` (ids of `id`'s cyclic component) when given.
   */
  cycleThrough(id: number, within?: readonly number[]): number[] | undefined {
    const inside = within && new Set(within);
    for (const next of this.successors(id).sort((a, b) => a - b)) {
      if (inside && !inside.has(next)) continue;
      const path = this.findPath(next, id);
      if (path) return rotateCycle([id, ...path]);
    }
    return undefined;
  }

  /** One cycle through each cyclic component, spelled from the component's lowest id. */
  cycles(): number[][] {
    return this.cyclicComponents().flatMap((ids) => {
      const cycle = this.cycleThrough(ids[0], ids);
      return cycle ? [cycle] : [];
    });
  }

  /** The strongly connected components with a cycle in them (Tarjan, iterative, O(tasks + edges)). */
  cyclicComponents(): number[][] {
    const index = new Map<number, number>();
    const low = new Map<number, number>();
    const onStack = new Set<number>();
    const stack: number[] = [];
    const out: number[][] = [];
    let counter = 0;
    const live = (id: number) => this.nodes.has(id) && this.nodes.get(id)!.status !== 'deleted';
    const visitor: DepthFirstVisitor = {
      next: (id) => this.successors(id).filter(live),
      enter: (id) => {
        index.set(id, counter);
        low.set(id, counter++);
        stack.push(id);
        onStack.add(id);
      },
      revisit: (id, edge) => {
        if (onStack.has(id)) low.set(edge.from, Math.min(low.get(edge.from)!, index.get(id)!));
      },
      leave: (id, parent) => {
        if (parent !== undefined) low.set(parent, Math.min(low.get(parent)!, low.get(id)!));
        if (low.get(id) !== index.get(id)) return;
        const component: number[] = [];
        let member: number;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== id);
        if (component.length > 1 || this.successors(id).includes(id)) out.push(component.sort((a, b) => a - b));
      },
    };
    const visited = new Set<number>();
    for (const root of this.nodes.keys()) if (live(root)) walkDepthFirst(root, visitor, visited);
    return out;
  }
}

function addTo(map: Map<number, Set<number>>, key: number, value: number): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

function removeFrom(map: Map<number, Set<number>>, key: number, value: number): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}

/** A cycle `[x, …, x]` started at its lowest id, so one cycle always reads the same. */
export function rotateCycle(cycle: number[]): number[] {
  const ring = cycle.slice(0, -1);
  if (ring.length === 0) return cycle;
  const start = ring.indexOf(ring.reduce((a, b) => Math.min(a, b)));
  const rotated = [...ring.slice(start), ...ring.slice(0, start)];
  return [...rotated, rotated[0]];
}
