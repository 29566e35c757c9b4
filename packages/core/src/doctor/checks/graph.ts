import { checkGraph, settleEdge, type EdgeField } from '../../consistency/reconcile.js';
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
 * `checkGraph` and `settleEdge` (reconcile.ts), as for the watcher; here
 * verdicts only become findings with positions and one-line fixes.
 */
function diagnoseGraph({ byId, present, fileOf, findings, edits: edited, options, git }: Scan): void {
  // An edge to an id two branches handed out twice may name the wrong one of the two tasks: never settled by
  // adding its other side, only by the whole-board merge that brings the other task back (id-clashes.ts), or
  // by a person when the clash was settled by hand already (git's history shows the file created twice).
  const clashing = new Set(options.pending?.ids ?? []);
  // The scan under the board lock asks no git: it has the first scan's answers.
  const createdTwice = (id: number): string[] => git.commitsCreating(id, options.git !== false);
  const unreadable = new Set([...present].filter((id) => !byId.has(id)));
  const { verdicts } = checkGraph([...byId.values()], { unreadable });
  const edit = (id: number) => {
    let e = edited.get(id);
    if (!e) {
      e = { task: copyTask(byId.get(id)!), changes: [] };
      edited.set(id, e);
    }
    return e;
  };
  const keyAt = (id: number, key: EdgeField) => {
    const f = fileOf.get(id)!;
    return { file: f.path, ...positionAt(f.text, findTopLevelKey(f.text, key)) };
  };
  /** A cycle, found at `id`'s `field`; `dep rm waiter blocker` removes one of its edges. */
  const cycleFinding = (cycle: number[], id: number, field: EdgeField, waiter: number, blocker: number) =>
    findings.push({
      code: 'cycle',
      ...keyAt(id, field),
      task: id,
      cycle,
      message: `cycle ${formatCycle(cycle)}: none of these tasks can ever become ready`,
      fix: `remove one edge of it, e.g. tasks dep rm ${waiter} ${blocker}`,
      fixable: false,
    });

  for (const v of verdicts) {
    if (v.kind === 'cycle') {
      cycleFinding(v.cycle, v.cycle[0], 'blocks', v.cycle[v.cycle.length - 1], v.cycle[v.cycle.length - 2]);
      continue;
    }
    const { blocker: b, waiter: w } = v;
    if (v.kind === 'broken') {
      if (v.reason === 'self' || v.reason === 'cycle') cycleFinding(v.cycle ?? [b, b], v.task, v.field, w, b);
      else if (v.reason === 'missing' && v.field === 'blocks')
        findings.push({
          code: 'missing_task',
          ...keyAt(b, 'blocks'),
          task: b,
          message: `#${b} blocks #${w}, which does not exist`,
          fix: `remove the edge: tasks update ${b} --remove-blocks ${w}`,
          fixable: false,
        });
      else
        findings.push({
          code: 'missing_task',
          ...keyAt(w, 'blockedBy'),
          task: w,
          message:
            v.reason === 'missing'
              ? `#${w} is blocked by #${b}, which does not exist, so #${w} can never become ready`
              : `#${w} is blocked by #${b}, which was deleted before the edge was made (an edge may only name a task that is not deleted)`,
          fix: `remove the edge: tasks dep rm ${w} ${b}`,
          fixable: false,
        });
      continue;
    }
    if (v.kind === 'remove-side') continue; // only with an earlier look at the board, which doctor never has
    // The task whose side is missing.
    const other = v.kind === 'propagate' ? w : v.field === 'blocks' ? b : w;
    if (v.kind !== 'propagate' && !clashing.has(w) && !clashing.has(b) && createdTwice(other).length > 1) {
      const commits = createdTwice(other);
      findings.push({
        code: 'one_sided_edge',
        ...keyAt(other, v.field),
        task: other,
        message:
          v.field === 'blocks'
            ? `#${w} is blocked by #${b}, but #${b} does not list #${w} in "blocks"`
            : `#${b} lists #${w} in "blocks", but #${w} does not list #${b} in "blockedBy"`,
        fix: `task_${other}.json was created twice in git's history (commits ${commits.map((c) => c.slice(0, 10)).join(', ')}): the edge may mean the other #${other}; look (git log -p -- .tasks/task_${other}.json), then tasks dep add or tasks dep rm`,
        fixable: false,
      });
      continue;
    }
    if (v.kind !== 'propagate' && (clashing.has(w) || clashing.has(b))) {
      const id = clashing.has(b) ? b : w;
      findings.push({
        code: 'one_sided_edge',
        ...keyAt(v.field === 'blocks' ? b : w, v.field),
        task: v.field === 'blocks' ? b : w,
        message:
          v.field === 'blocks'
            ? `#${w} is blocked by #${b}, but #${b} does not list #${w} in "blocks"`
            : `#${b} lists #${w} in "blocks", but #${w} does not list #${b} in "blockedBy"`,
        fix: `part of the id clash of #${id}: tasks doctor --fix settles it (the edge may mean the other #${id})`,
        fixable: true,
      });
      continue;
    }
    const blocker = edit(b);
    const waiter = edit(w);
    const changed = settleEdge(v, blocker.task, waiter.task);
    const status = byId.get(b)!.status;
    if (v.kind === 'propagate' || (v.field === 'blocks' && changed.includes(waiter.task))) {
      // A completed or deleted blocker still in blockedBy: dropped, as propagation would.
      findings.push({
        code: 'closed_blocker',
        ...keyAt(w, 'blockedBy'),
        task: w,
        message: `#${w} still lists #${b} in "blockedBy" though #${b} is ${status}`,
        fix: v.kind === 'propagate' ? `drop it (tasks doctor --fix), or run 'tasks done ${b}' again to propagate` : `drop it (tasks doctor --fix)`,
        fixable: true,
      });
      waiter.changes.push({ code: 'closed_blocker', text: `dropped #${b} (${status}) from "blockedBy"` });
      if (changed.includes(blocker.task)) blocker.changes.push({ code: 'closed_blocker', text: `added #${w} to "blocks" as history (#${b} is ${status})` });
    } else if (v.field === 'blocks') {
      findings.push({
        code: 'one_sided_edge',
        ...keyAt(b, 'blocks'),
        task: b,
        message: `#${w} is blocked by #${b}, but #${b} does not list #${w} in "blocks"`,
        fix: `add the missing side (tasks doctor --fix), or remove the edge: tasks dep rm ${w} ${b}`,
        fixable: true,
      });
      blocker.changes.push({ code: 'one_sided_edge', text: `added #${w} to "blocks" (the other side of #${w}'s "blockedBy")` });
    } else {
      findings.push({
        code: 'one_sided_edge',
        ...keyAt(w, 'blockedBy'),
        task: w,
        message: `#${b} lists #${w} in "blocks", but #${w} does not list #${b} in "blockedBy"`,
        fix: `add the missing side (tasks doctor --fix), or remove the edge: tasks update ${b} --remove-blocks ${w}`,
        fixable: true,
      });
      waiter.changes.push({ code: 'one_sided_edge', text: `added #${b} to "blockedBy" (the other side of #${b}'s "blocks")` });
    }
  }
}
