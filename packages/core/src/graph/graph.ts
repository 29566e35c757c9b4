import { isClosed, type Task } from '../format/format.js';
import { searchPath } from './walk.js';

/**
 * Looks a task up by id; undefined when missing (or unreadable). A lookup
 * over a whole board also knows each task's open children (hierarchy.ts,
 * `boardLookup`), which readiness needs: a parent with open children waits
 * for them (docs/protocol.md, "Parents"). A plain function knows none.
 */
export interface TaskLookup {
  (id: number): Task | undefined;
  /** The open tasks whose parent is `id`, ascending; absent on a lookup that does not know the board's hierarchy. */
  openChildren?: (id: number) => readonly number[];
  /** Every task the lookup knows (a whole board's), for work that is cheaper over all of them at once; absent when it cannot list them. */
  tasks?: readonly Task[];
}

/**
 * Would the edge "`blocker` blocks `waiter`" close a cycle? Walks `blocks`
 * edges from `waiter`; if it reaches `blocker`, returns the cycle in blocks
 * order starting and ending at `blocker` (`[blocker, waiter, …, blocker]`),
 * else undefined. Deleted tasks are skipped: they never block anyone.
 * Cost follows the edges reached, not the board's size.
 */
export function findCycle(blocker: number, waiter: number, lookup: TaskLookup): number[] | undefined {
  if (blocker === waiter) return [blocker, blocker];
  const path = searchPath(waiter, blocker, {
    frontier: 'stack',
    next: (id) => {
      const task = lookup(id);
      return task && task.status !== 'deleted' ? task.blocks : [];
    },
  });
  return path && [blocker, ...path];
}

/** Ids in `task.blockedBy` whose task is not completed or deleted (missing ones count as open). */
export function openBlockers(task: Task, lookup: TaskLookup): number[] {
  return task.blockedBy.filter((id) => {
    const blocker = lookup(id);
    return !blocker || !isClosed(blocker.status);
  });
}

/** Ready = pending, unowned, every blocker completed or deleted, and no open child (docs/protocol.md, "Ready"). */
export function isReady(task: Task, lookup: TaskLookup, forOwner?: string): boolean {
  return readyWith(task, lookup, forOwner, lookup.openChildren);
}

/**
 * isReady with the lookup's `openChildren` taken once by the caller: a loop
 * over a board's tasks that read the property of the function on every task
 * (a miss on a plain function) spent a third of `readyOrder` on it.
 */
export function readyWith(task: Task, lookup: TaskLookup, forOwner: string | undefined, openChildren: TaskLookup['openChildren']): boolean {
  if (task.status !== 'pending') return false;
  if (task.owner !== '' && task.owner !== forOwner) return false;
  if (openBlockers(task, lookup).length !== 0) return false;
  return openChildren === undefined || openChildren(task.id).length === 0;
}
