import { formatCycle } from '../../errors.js';
import { findTopLevelKey, positionAt } from '../../format/json-locate.js';
import { Hierarchy, parentCycles } from '../../graph/hierarchy.js';
import type { DoctorCheck, Scan } from './check.js';

/**
 * Parents that a hand edit or a merge can leave wrong (docs/protocol.md,
 * "Parents"): a cycle of parents, in which no task can complete since each
 * waits for its child, a parent that names no task file, and a parent
 * completed (by hand: dotasks refuses it) while a child is open. None is
 * fixable: which parent was meant, or whether the work is done, is a
 * person's call.
 */
export const hierarchy: DoctorCheck = {
  name: 'hierarchy',
  codes: ['parent_cycle', 'missing_parent', 'completed_parent_open_children'],
  run: diagnoseHierarchy,
};

function diagnoseHierarchy(scan: Scan): void {
  const { byId, present, findings } = scan;
  for (const cycle of parentCycles(byId.values())) {
    const id = cycle[0];
    findings.push({
      code: 'parent_cycle',
      ...parentAt(scan, id),
      task: id,
      cycle,
      message: `a cycle of parents ${formatCycle(cycle)}: none of these tasks can complete, each waits for its child`,
      fix: `take one of them out of it, e.g. tasks update ${id} --parent none`,
      fixable: false,
    });
  }
  for (const task of byId.values()) {
    // A parent whose file is there but bad is reported as a bad file, not as missing.
    if (task.parent === undefined || present.has(task.parent)) continue;
    findings.push({
      code: 'missing_parent',
      ...parentAt(scan, task.id),
      task: task.id,
      message: `#${task.id} has the parent #${task.parent}, which does not exist`,
      fix: `tasks update ${task.id} --parent none, or --parent with the task meant`,
      fixable: false,
    });
  }
  completedParents(scan);
}

/**
 * A completed parent with open children: the board says the work is done
 * while part of it is open, and readers of the parent (its dependents, the
 * reports) believe it. Reported at the parent's `status`, where the hand
 * edit is.
 */
function completedParents(scan: Scan): void {
  const hierarchy = new Hierarchy(scan.byId.values());
  // Without a parent on the board no task has children: nothing to sort and look at.
  if (hierarchy.empty) return;
  const completed = [...scan.byId.values()].filter((task) => task.status === 'completed');
  for (const task of completed.sort((a, b) => a.id - b.id)) {
    const open = hierarchy.openChildren(task.id);
    if (open.length === 0) continue;
    const progress = hierarchy.progress(task.id)!;
    const ids = open.map((id) => `#${id}`).join(', ');
    const bare = open.join(' ');
    scan.findings.push({
      code: 'completed_parent_open_children',
      ...keyAt(scan, task.id, 'status'),
      task: task.id,
      message: `#${task.id} is completed but its children are open: ${ids} (${progress.done}/${progress.total} done); a completed task takes no open children`,
      fix: `finish them (tasks done ${bare}) or move them out (tasks update ${open[0]} --parent none); completed by mistake: set "status" back to "pending" in its file`,
      fixable: false,
    });
  }
}

/** Where the `parent` key of task `id`'s file is. */
function parentAt(scan: Scan, id: number) {
  return keyAt(scan, id, 'parent');
}

/** Where a top-level key of task `id`'s file is. */
function keyAt({ fileOf }: Scan, id: number, key: string) {
  const f = fileOf.get(id)!;
  return { file: f.path, ...positionAt(f.text, findTopLevelKey(f.text, key)) };
}
