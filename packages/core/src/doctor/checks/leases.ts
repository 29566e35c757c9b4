import { ownerFlag } from '../../hints.js';
import { join } from 'node:path';
import { taskFileName } from '../../format/format.js';
import { leaseExpiry, listLeases } from '../../runtime/leases.js';
import type { DoctorCheck, Scan } from './check.js';

/** Expired leases: of a task still held (for `tasks reap`), or left behind by a claim that ended. */
export const expiredLeases: DoctorCheck = {
  name: 'expired leases',
  codes: ['expired_lease'],
  run({ store, now, byId, findings, plan }: Scan): void {
    for (const lease of listLeases(store.runtimeDir)) {
      const why = leaseExpiry(lease, now);
      if (!why) continue;
      const file = join(store.runtimeDir, 'leases', taskFileName(lease.task));
      const task = byId.get(lease.task);
      const held = task !== undefined && task.status === 'in_progress' && task.owner === lease.owner;
      const reason = why === 'expired' ? `expired at ${lease.expiresAt}` : `its process ${lease.pid} is gone`;
      if (held) {
        findings.push({
          code: 'expired_lease',
          file,
          task: lease.task,
          message: `#${lease.task} is claimed by ${lease.owner}, but the lease ${reason}`,
          fix: `release it with 'tasks reap' (or 'tasks heartbeat ${lease.task}${ownerFlag(lease.owner)}' if ${lease.owner} is still working)`,
          fixable: false,
        });
      } else {
        findings.push({
          code: 'expired_lease',
          file,
          task: lease.task,
          message: `a lease of #${lease.task} for ${lease.owner} ${reason}, and the task is no longer held by ${lease.owner}`,
          fix: `remove the record (tasks doctor --fix)`,
          fixable: true,
        });
        plan.leases.push({ task: lease.task, file, why: `${reason}; the task is no longer held by ${lease.owner}` });
      }
    }
  },
};
