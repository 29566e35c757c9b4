/**
 * Repairs of board consistency (docs/protocol.md, "Edges"): the edit that
 * settles an edge verdict (settleEdge, the one rule for which side a repair
 * writes, shared by the watcher and doctor) and a finding fixed in one
 * transaction, re-read under the locks first (applyFinding). What needs
 * repairing is reconcile.ts's to judge.
 */
import { CycleError } from '../errors.js';
import type { TaskEvent } from '../events/events.js';
import { copyTask, isClosed, normalizeIds, serializeTask, taskFileName, type Task } from '../format/format.js';
import type { ActorOptions, TaskStore } from '../store.js';
import { rotateCycle, type BoardGraph } from './board-graph.js';
import { applyLinkFinding } from './link-check.js';
import type { BoardFinding, EdgeVerdict } from './verdicts.js';

/** A finding that `applyFinding` acts on (the others need a person). */
export function isFixable(finding: BoardFinding): boolean {
  return finding.kind !== 'invalid';
}

/**
 * The edit that settles an edge verdict, made in place on `blocker` and
 * `waiter` (copies of the two tasks); returns the ones it changed. The one
 * rule for which side a repair writes, shared by the watcher and doctor:
 * a completed blocker gets the missing side as history (docs/protocol.md,
 * "Edges") and leaves the waiter's `blockedBy`, like a propagation.
 */
export function settleEdge(verdict: Extract<EdgeVerdict, { kind: 'propagate' | 'add-side' | 'remove-side' }>, blocker: Task, waiter: Task): Task[] {
  const dropBlocker = () => {
    waiter.blockedBy = waiter.blockedBy.filter((b) => b !== blocker.id);
  };
  if (verdict.kind === 'propagate') {
    dropBlocker();
    return [waiter];
  }
  if (verdict.kind === 'remove-side') {
    if (verdict.field === 'blockedBy') {
      dropBlocker();
      return [waiter];
    }
    blocker.blocks = blocker.blocks.filter((w) => w !== waiter.id);
    return [blocker];
  }
  if (verdict.field === 'blockedBy') {
    waiter.blockedBy = normalizeIds([...waiter.blockedBy, blocker.id]);
    return [waiter];
  }
  blocker.blocks = normalizeIds([...blocker.blocks, waiter.id]);
  if (blocker.status !== 'completed') return [blocker];
  dropBlocker();
  return [blocker, waiter];
}

/**
 * Fixes one finding in one transaction (the board lock and both tasks'
 * locks), re-reading both files first: when they no longer show the problem
 * (someone fixed it meanwhile, or it was a command caught half-way), nothing
 * is written. Idempotent. Returns the events appended (`repaired`,
 * `unblocked`). An `add-side` that would close a cycle in `graph` is refused
 * with E_CYCLE. `onWrite` sees each file's bytes before and after (the
 * watcher remembers what it replaced, to recognise an editor's stale save).
 */
export async function applyFinding(
  store: TaskStore,
  finding: BoardFinding,
  options: ActorOptions & { graph?: BoardGraph; onWrite?: (id: number, before: string, after: string) => void } = {},
): Promise<TaskEvent[]> {
  if (finding.kind === 'invalid') return [];
  if (finding.kind === 'propagate') {
    if (!store.hasTask(finding.task)) return [];
    return (await store.propagateCompletion(finding.task, options)).events;
  }
  if (finding.kind === 'link-side') return applyLinkFinding(store, finding, { ...options, setNode: (id, task) => options.graph?.set(id, task) });
  const { blocker, waiter } = finding;
  if (blocker === waiter) return [];
  const result = await store.transact({ board: true, tasks: [blocker, waiter] }, (tx) => {
    const a = tx.tryRead(blocker);
    const w = tx.tryRead(waiter);
    if (!a || !w) return [];
    const inBlocks = a.blocks.includes(waiter);
    const inBlockedBy = w.blockedBy.includes(blocker);
    // Still exactly the one-sided edge the finding describes?
    const stated =
      finding.field === 'blocks'
        ? finding.kind === 'add-side'
          ? inBlockedBy && !inBlocks
          : inBlocks && !inBlockedBy
        : finding.kind === 'add-side'
          ? inBlocks && !inBlockedBy
          : inBlockedBy && !inBlocks;
    if (!stated) return [];
    if (finding.kind === 'add-side') {
      if (a.status === 'deleted' || w.status === 'deleted') return [];
      if (finding.field === 'blockedBy' && (isClosed(a.status) || isClosed(w.status))) return [];
      if (a.status !== 'completed') {
        const path = options.graph?.findPath(waiter, blocker);
        if (path) throw new CycleError(rotateCycle([blocker, ...path]));
      }
    }
    const edited = { blocker: copyTask(a), waiter: copyTask(w) };
    const writes = settleEdge(finding, edited.blocker, edited.waiter);
    const source = taskFileName(finding.task === blocker ? waiter : blocker);
    const other = finding.field === 'blocks' ? waiter : blocker;
    tx.event({
      type: 'repaired',
      task: finding.task,
      owner: options.actor,
      field: finding.field,
      ...(finding.kind === 'add-side' ? { added: other } : { removed: other }),
      source,
    });
    if (writes.includes(edited.waiter) && w.blockedBy.length > 0 && edited.waiter.blockedBy.length === 0 && !isClosed(w.status))
      tx.event({ type: 'unblocked', task: waiter, owner: options.actor, by: blocker });
    for (const task of writes) tx.put(task);
    return writes.map((task) => ({ id: task.id, before: tx.readText(task.id)!, after: serializeTask(task), task }));
  });
  for (const w of result.value) {
    // What we wrote is what the file says now; the other file keeps its last-seen entry.
    options.graph?.set(w.id, w.task);
    if (w.before !== w.after) options.onWrite?.(w.id, w.before, w.after);
  }
  return result.events;
}
