import { inReview } from '../../format/format.js';
import { readLease } from '../../runtime/leases.js';
import type { DoctorCheck, Scan } from './check.js';

/**
 * Claims made by hand or pulled through git have no record, so the
 * single-in-progress rule cannot see them until they are adopted.
 */
export const untrackedClaims: DoctorCheck = {
  name: 'untracked claims',
  codes: ['untracked_claim'],
  run({ store, byId, findings }: Scan): void {
    for (const task of byId.values()) {
      // A task waiting for review has no claim record on purpose (docs/protocol.md, "Review").
      if (task.status !== 'in_progress' || task.owner === '' || inReview(task)) continue;
      const lease = readLease(store.runtimeDir, task.id);
      if (lease && lease.owner === task.owner) continue;
      // Our commands write the record before the task says in_progress and
      // remove it after it stops, so the file read earlier in this scan may be
      // stale: look at the file, then the record, again before reporting.
      const now = store.peekTask(task.id);
      if (!now || now.status !== 'in_progress' || now.owner !== task.owner || inReview(now)) continue;
      if (readLease(store.runtimeDir, task.id)?.owner === task.owner) continue;
      findings.push({
        code: 'untracked_claim',
        file: store.taskPath(task.id),
        task: task.id,
        message: `#${task.id} is in progress for ${task.owner} but has no claim record, so ${task.owner} could start a second task`,
        fix: 'record the claim (tasks doctor --fix; the watcher does it too)',
        fixable: true,
      });
    }
  },
};
