import { formatCycle } from '../../errors.js';
import { findTopLevelKey, positionAt } from '../../format/json-locate.js';
import { parentCycles } from '../../graph/hierarchy.js';
import type { DoctorCheck, Scan } from './check.js';

/**
 * Parents that a hand edit or a merge can leave wrong (docs/protocol.md,
 * "Parents"): a cycle of parents, in which no task can complete since each
 * waits for its child, and a parent that names no task file. Neither is
 * fixable: which parent was meant is a person's call.
 */
export const hierarchy: DoctorCheck = {
  name: 'hierarchy',
  codes: ['parent_cycle', 'missing_parent'],
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
}

/** Where the `parent` key of task `id`'s file is. */
function parentAt({ fileOf }: Scan, id: number) {
  const f = fileOf.get(id)!;
  return { file: f.path, ...positionAt(f.text, findTopLevelKey(f.text, 'parent')) };
}
