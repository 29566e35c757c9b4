import { isClosed, priorityOf, type Task } from '../format/format.js';
import { isReady, type TaskLookup } from './graph.js';
import { walkDepthFirst, type DepthFirstVisitor } from './walk.js';

/**
 * The order in which ready work is handed out (`tasks claim --next`, `tasks
 * ready`, the agent tool's claim): priority first (0 before 4), then the work
 * a task unblocks, the length of the longest chain of open tasks waiting
 * behind it (so the critical path starts first), then the lower id
 * (docs/protocol.md, "Ready").
 */

/** Why a ready task stands where it does. */
export interface ReadyRank {
  id: number;
  /** The task's priority (the default when it has none). */
  priority: number;
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
  const next = (id: number): number[] => {
    const task = lookup(id);
    if (!task || task.blocks.length === 0) return [];
    return task.blocks.filter((d) => {
      const dependent = lookup(d);
      return dependent !== undefined && !isClosed(dependent.status) && d !== id;
    });
  };
  const best = new Map<number, { length: number; next?: number }>();
  const length = new Map<number, number>();
  const step = new Map<number, number>();
  const lengthen = (id: number, via: number, viaLength: number) => {
    const current = length.get(id)!;
    if (viaLength + 1 < current || (viaLength + 1 === current && via > step.get(id)!)) return;
    length.set(id, viaLength + 1);
    step.set(id, via);
  };
  const visitor: DepthFirstVisitor = {
    next: (id) => [...next(id)].sort((a, b) => a - b),
    enter: (id) => {
      length.set(id, 1);
    },
    revisit: (id, edge) => {
      const known = best.get(id);
      if (known) lengthen(edge.from, id, known.length);
    },
    leave: (id, parent) => {
      best.set(id, { length: length.get(id)!, next: step.get(id) });
      if (parent !== undefined) lengthen(parent, id, length.get(id)!);
    },
  };
  const visited = new Set<number>();
  const out = new Map<number, number[]>();
  for (const id of ids) {
    // Most ready tasks have nothing open behind them: their chain is themselves, with no walk.
    if (!visited.has(id) && lookup(id)?.blocks.length === 0) {
      out.set(id, [id]);
      continue;
    }
    walkDepthFirst(id, visitor, visited);
    const chain: number[] = [];
    for (let at: number | undefined = id; at !== undefined && chain.length <= best.size; at = best.get(at)?.next) chain.push(at);
    out.set(id, chain);
  }
  return out;
}

/** The ranks of `tasks` (all of them, ready or not), best first. */
export function rankTasks(tasks: readonly Task[], lookup: TaskLookup): ReadyRank[] {
  const chains = openChains(
    tasks.map((t) => t.id),
    lookup,
  );
  return tasks
    .map((t) => {
      const chain = chains.get(t.id) ?? [t.id];
      return { id: t.id, priority: priorityOf(t), unblocks: chain.length - 1, chain };
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
  return `P${rank.priority} · ${behind} · id ${rank.id}`;
}
