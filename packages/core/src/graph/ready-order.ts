import { isClosed, priorityOf, type Task } from '../format/format.js';
import { isReady, type TaskLookup } from './graph.js';
import { LongestChains, walkDepthFirst, type DepthFirstVisitor } from './walk.js';

/**
 * The order in which ready work is handed out (`tasks claim --next`, `tasks
 * ready`, the agent tool's claim): priority first (0 before 4), a task
 * ranking with the most urgent priority of the open work waiting behind it
 * (so the P3 blocker of a P0 release goes before plain P2 work; only a
 * priority a file sets flows, the default does not), then the work
 * a task unblocks, the length of the longest chain of open tasks waiting
 * behind it (so the critical path starts first), then the lower id
 * (docs/protocol.md, "Ready").
 */

/** Why a ready task stands where it does. */
export interface ReadyRank {
  id: number;
  /** The priority it ranks with: its own, or the most urgent of the open tasks waiting behind it. */
  priority: number;
  /** The task's own priority (the default when it has none), as its file has it. */
  ownPriority: number;
  /** When `priority` comes from behind: the open task it comes from (the first such on its chain, lowest id first). */
  through?: number;
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
 * For each of `ids`, the longest chain of open tasks that follows it through
 * `blocks` (the task itself first). One depth-first walk over the open tasks
 * reached (walk.ts), each visited once whatever the number of ids; cycles
 * (a hand-edited board) are cut, not followed; ties go to the lower id.
 */
export function openChains(ids: Iterable<number>, lookup: TaskLookup): Map<number, number[]> {
  const chains = new LongestChains(openDependents(lookup));
  const out = new Map<number, number[]>();
  for (const id of ids) {
    // Most ready tasks have nothing open behind them: their chain is themselves, with no walk.
    if (lookup(id)?.blocks.length === 0) {
      out.set(id, [id]);
      continue;
    }
    out.set(id, chains.chain(id));
  }
  return out;
}

/** The most urgent priority among a task and the open tasks waiting behind it, and where it comes from. */
interface Urgency {
  priority: number;
  /** The task whose own priority it is. */
  source: number;
}

/**
 * For each task asked about, the most urgent priority among it and the open
 * tasks that wait for it through `blocks`, transitively: one depth-first walk
 * over what they reach, each task visited once (as LongestChains), cycles cut.
 * A dependent's urgency wins only when strictly more urgent, so a task that is
 * as urgent as what waits for it ranks with its own.
 */
class MostUrgentBehind {
  private readonly best = new Map<number, Urgency>();
  private readonly visited = new Set<number>();
  private readonly visitor: DepthFirstVisitor;

  constructor(next: (id: number) => readonly number[], own: (id: number) => number) {
    const current = new Map<number, Urgency>();
    const improve = (id: number, candidate: Urgency) => {
      if (candidate.priority < current.get(id)!.priority) current.set(id, candidate);
    };
    this.visitor = {
      next,
      enter: (id) => {
        current.set(id, { priority: own(id), source: id });
      },
      revisit: (id, edge) => {
        const known = this.best.get(id);
        if (known) improve(edge.from, known);
      },
      leave: (id, parent) => {
        const settled = current.get(id)!;
        this.best.set(id, settled);
        current.delete(id);
        if (parent !== undefined) improve(parent, settled);
      },
    };
  }

  of(id: number): Urgency {
    walkDepthFirst(id, this.visitor, this.visited);
    return this.best.get(id)!;
  }
}

/** The open tasks that wait for `id` (its `blocks`), ascending, itself left out. */
function openDependents(lookup: TaskLookup): (id: number) => number[] {
  return (id) => {
    const task = lookup(id);
    if (!task || task.blocks.length === 0) return [];
    return task.blocks
      .filter((d) => {
        const dependent = lookup(d);
        return dependent !== undefined && !isClosed(dependent.status) && d !== id;
      })
      .sort((a, b) => a - b);
  };
}

/** The ranks of `tasks` (all of them, ready or not), best first. */
export function rankTasks(tasks: readonly Task[], lookup: TaskLookup): ReadyRank[] {
  const chains = openChains(
    tasks.map((t) => t.id),
    lookup,
  );
  // Only a priority a file sets flows: a task left at the default pushes nothing ahead of it.
  const urgency = new MostUrgentBehind(openDependents(lookup), (id) => lookup(id)?.priority ?? Number.POSITIVE_INFINITY);
  return tasks
    .map((t) => {
      const chain = chains.get(t.id) ?? [t.id];
      const ownPriority = priorityOf(t);
      // Most tasks have nothing open behind them: their own priority, with no walk.
      const most = t.blocks.length === 0 ? undefined : urgency.of(t.id);
      const inherited = most !== undefined && most.priority < ownPriority ? most : undefined;
      const rank: ReadyRank = { id: t.id, priority: inherited?.priority ?? ownPriority, ownPriority, unblocks: chain.length - 1, chain };
      if (inherited) rank.through = inherited.source;
      return rank;
    })
    .sort(compareRanks);
}

/** The ready tasks among `tasks` (for `forOwner`, as isReady), in the order they are handed out. */
export function readyOrder(tasks: readonly Task[], lookup: TaskLookup, forOwner?: string): ReadyRank[] {
  return rankTasks(
    tasks.filter((t) => isReady(t, lookup, forOwner)),
    lookup,
  );
}

/** `P1 · unblocks 3 (#3 → #5 → #8 → #9) · #3`: why a task stands where it does. */
export function explainRank(rank: ReadyRank): string {
  const behind = rank.unblocks === 0 ? 'unblocks nothing' : `unblocks ${rank.unblocks} (${rank.chain.map((id) => `#${id}`).join(' → ')})`;
  const priority = rank.through === undefined ? `P${rank.priority}` : `P${rank.priority} through #${rank.through} (own P${rank.ownPriority})`;
  return `${priority} · ${behind} · id ${rank.id}`;
}
