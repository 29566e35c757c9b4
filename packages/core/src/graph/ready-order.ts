import { isClosed, priorityOf, type Task } from '../format/format.js';
import { isReady, type TaskLookup } from './graph.js';
import { LongestChains } from './walk.js';

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
  const chains = new LongestChains((id) => [...next(id)].sort((a, b) => a - b));
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
