import { judgeGraph, type EdgeField, type EdgeVerdict } from '../../consistency/reconcile.js';
import { settleEdge } from '../../consistency/repair.js';
import { formatCycle } from '../../errors.js';
import { copyTask } from '../../format/format.js';
import { findTopLevelKey, positionAt } from '../../format/json-locate.js';
import type { DoctorCheck, Scan } from './check.js';

/** Edges: missing tasks, cycles, one-sided edges, closed blockers still listed; plans the edge repairs. */
export const graph: DoctorCheck = {
  name: 'graph',
  codes: ['missing_task', 'cycle', 'one_sided_edge', 'closed_blocker'],
  run: diagnoseGraph,
};

/**
 * Doctor's findings and planned edits for the graph of the tasks it could
 * read. What is wrong, and which side a repair writes, is decided by
 * `judgeGraph` (reconcile.ts) and `settleEdge` (repair.ts), as for the watcher; here
 * verdicts only become findings with positions and one-line fixes.
 */
function diagnoseGraph(scan: Scan): void {
  const { byId, present } = scan;
  const unreadable = new Set([...present].filter((id) => !byId.has(id)));
  for (const v of judgeGraph([...byId.values()], { unreadable })) {
    if (v.kind === 'cycle') cycleFinding(scan, v.cycle, v.cycle[0], 'blocks', v.cycle[v.cycle.length - 1], v.cycle[v.cycle.length - 2]);
    else if (v.kind === 'broken') brokenEdge(scan, v);
    else if (v.kind === 'remove-side')
      continue; // only with an earlier look at the board, which doctor never has
    else if (v.kind === 'add-side' && clashFinding(scan, v)) continue;
    else repairEdge(scan, v);
  }
}

type Verdict<K extends EdgeVerdict['kind']> = Extract<EdgeVerdict, { kind: K }>;

/** Where the key `key` of task `id`'s file is. */
function keyAt({ fileOf }: Scan, id: number, key: EdgeField) {
  const f = fileOf.get(id)!;
  return { file: f.path, ...positionAt(f.text, findTopLevelKey(f.text, key)) };
}

/** The planned edit of task `id` (a copy of it and the changes made to it so far). */
function edit({ edits, byId }: Scan, id: number) {
  let e = edits.get(id);
  if (!e) {
    e = { task: copyTask(byId.get(id)!), changes: [] };
    edits.set(id, e);
  }
  return e;
}

/** A cycle, found at `id`'s `field`; `dep rm waiter blocker` removes one of its edges. */
function cycleFinding(scan: Scan, cycle: number[], id: number, field: EdgeField, waiter: number, blocker: number): void {
  scan.findings.push({
    code: 'cycle',
    ...keyAt(scan, id, field),
    task: id,
    cycle,
    message: `cycle ${formatCycle(cycle)}: none of these tasks can ever become ready`,
    fix: `remove one edge of it, e.g. tasks dep rm ${waiter} ${blocker}`,
    fixable: false,
  });
}

/** An edge only a person can settle: a self-edge, a cycle, a missing or deleted task. */
function brokenEdge(scan: Scan, v: Verdict<'broken'>): void {
  const { blocker: b, waiter: w } = v;
  if (v.reason === 'self' || v.reason === 'cycle') cycleFinding(scan, v.cycle ?? [b, b], v.task, v.field, w, b);
  else if (v.reason === 'missing' && v.field === 'blocks')
    scan.findings.push({
      code: 'missing_task',
      ...keyAt(scan, b, 'blocks'),
      task: b,
      message: `#${b} blocks #${w}, which does not exist`,
      fix: `remove the edge: tasks update ${b} --remove-blocks ${w}`,
      fixable: false,
    });
  else
    scan.findings.push({
      code: 'missing_task',
      ...keyAt(scan, w, 'blockedBy'),
      task: w,
      message:
        v.reason === 'missing'
          ? `#${w} is blocked by #${b}, which does not exist, so #${w} can never become ready`
          : `#${w} is blocked by #${b}, which was deleted before the edge was made (an edge may only name a task that is not deleted)`,
      fix: `remove the edge: tasks dep rm ${w} ${b}`,
      fixable: false,
    });
}

/** The message of a one-sided edge, by the side that states it. */
function oneSidedMessage(field: EdgeField, b: number, w: number): string {
  return field === 'blocks'
    ? `#${w} is blocked by #${b}, but #${b} does not list #${w} in "blocks"`
    : `#${b} lists #${w} in "blocks", but #${w} does not list #${b} in "blockedBy"`;
}

/**
 * A one-sided edge to an id two branches handed out twice, which may name
 * the wrong one of the two tasks: never settled by adding its other side,
 * only by the whole-board merge that brings the other task back
 * (id-clashes.ts), or by a person when the clash was settled by hand already
 * (git's history shows the file created twice). True when it was one.
 */
function clashFinding(scan: Scan, v: Verdict<'add-side'>): boolean {
  const { options, git } = scan;
  const { blocker: b, waiter: w } = v;
  const clashing = new Set(options.pending?.ids ?? []);
  if (clashing.has(w) || clashing.has(b)) {
    const id = clashing.has(b) ? b : w;
    const at = v.field === 'blocks' ? b : w;
    scan.findings.push({
      code: 'one_sided_edge',
      ...keyAt(scan, at, v.field),
      task: at,
      message: oneSidedMessage(v.field, b, w),
      fix: `part of the id clash of #${id}: tasks doctor --fix settles it (the edge may mean the other #${id})`,
      fixable: true,
    });
    return true;
  }
  // The task whose side is missing. The scan under the board lock asks no git: it has the first scan's answers.
  const other = v.field === 'blocks' ? b : w;
  const commits = git.commitsCreating(other, options.git !== false);
  if (commits.length <= 1) return false;
  scan.findings.push({
    code: 'one_sided_edge',
    ...keyAt(scan, other, v.field),
    task: other,
    message: oneSidedMessage(v.field, b, w),
    fix: `task_${other}.json was created twice in git's history (commits ${commits.map((c) => c.slice(0, 10)).join(', ')}): the edge may mean the other #${other}; look (git log -p -- .tasks/task_${other}.json), then tasks dep add or tasks dep rm`,
    fixable: false,
  });
  return true;
}

/** An edge doctor --fix repairs: a closed blocker still listed is dropped, a missing side is added. */
function repairEdge(scan: Scan, v: Verdict<'propagate' | 'add-side'>): void {
  const { blocker: b, waiter: w } = v;
  const blocker = edit(scan, b);
  const waiter = edit(scan, w);
  const changed = settleEdge(v, blocker.task, waiter.task);
  const status = scan.byId.get(b)!.status;
  if (v.kind === 'propagate' || (v.field === 'blocks' && changed.includes(waiter.task))) {
    // A completed or deleted blocker still in blockedBy: dropped, as propagation would.
    scan.findings.push({
      code: 'closed_blocker',
      ...keyAt(scan, w, 'blockedBy'),
      task: w,
      message: `#${w} still lists #${b} in "blockedBy" though #${b} is ${status}`,
      fix: v.kind === 'propagate' ? `drop it (tasks doctor --fix), or run 'tasks done ${b}' again to propagate` : `drop it (tasks doctor --fix)`,
      fixable: true,
    });
    waiter.changes.push({ code: 'closed_blocker', text: `dropped #${b} (${status}) from "blockedBy"` });
    if (changed.includes(blocker.task)) blocker.changes.push({ code: 'closed_blocker', text: `added #${w} to "blocks" as history (#${b} is ${status})` });
  } else if (v.field === 'blocks') {
    scan.findings.push({
      code: 'one_sided_edge',
      ...keyAt(scan, b, 'blocks'),
      task: b,
      message: oneSidedMessage('blocks', b, w),
      fix: `add the missing side (tasks doctor --fix), or remove the edge: tasks dep rm ${w} ${b}`,
      fixable: true,
    });
    blocker.changes.push({ code: 'one_sided_edge', text: `added #${w} to "blocks" (the other side of #${w}'s "blockedBy")` });
  } else {
    scan.findings.push({
      code: 'one_sided_edge',
      ...keyAt(scan, w, 'blockedBy'),
      task: w,
      message: oneSidedMessage('blockedBy', b, w),
      fix: `add the missing side (tasks doctor --fix), or remove the edge: tasks update ${b} --remove-blocks ${w}`,
      fixable: true,
    });
    waiter.changes.push({ code: 'one_sided_edge', text: `added #${b} to "blockedBy" (the other side of #${b}'s "blocks")` });
  }
}
