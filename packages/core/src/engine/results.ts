/**
 * Results travel downstream (docs/protocol.md, "Results"): what the tasks a
 * task waits for came to, for whoever works on it next (a worker's
 * `TASK_UPSTREAM`, the agents' tool's `get`).
 */
import type { Task } from '../format/format.js';

/** One blocker of a task and what it came to. */
export interface UpstreamResult {
  id: number;
  subject: string;
  /** Its `result`; null when it left none (or is still open). */
  result: string | null;
}

/** The most bytes of `TASK_UPSTREAM`: well inside the 128 KiB Linux allows one environment string. */
export const UPSTREAM_ENV_BYTES = 64 * 1024;

/**
 * The direct blockers of `task`, by id: the tasks whose `blocks` names it
 * (a completed blocker keeps it there, as history, while it leaves the
 * task's `blockedBy`) and the ones its `blockedBy` still names. Deleted
 * tasks are left out: a tombstone's work was dropped.
 */
export function upstreamOf(task: Task, tasks: Iterable<Task>, lookup: (id: number) => Task | undefined): UpstreamResult[] {
  const ids = new Set(task.blockedBy);
  for (const t of tasks) if (t.blocks.includes(task.id)) ids.add(t.id);
  const out: UpstreamResult[] = [];
  for (const id of [...ids].sort((a, b) => a - b)) {
    const blocker = lookup(id);
    if (!blocker || blocker.status === 'deleted') continue;
    out.push({ id, subject: blocker.subject, result: blocker.status === 'completed' ? (blocker.result ?? null) : null });
  }
  return out;
}

/**
 * `TASK_UPSTREAM` for a worker's command: the upstream results as JSON, each
 * result cut (with `…`) to a share of UPSTREAM_ENV_BYTES when all of them
 * would not fit, so a task behind many blockers still starts.
 */
export function upstreamEnv(upstream: readonly UpstreamResult[]): string {
  let json = JSON.stringify(upstream);
  // Bytes, not characters: the limit is the kernel's, and escapes and UTF-8 both grow the text.
  for (let share = Math.floor(UPSTREAM_ENV_BYTES / Math.max(1, upstream.length)); Buffer.byteLength(json) > UPSTREAM_ENV_BYTES && share > 0; share >>= 1)
    json = JSON.stringify(upstream.map((u) => ({ ...u, result: u.result === null || u.result.length <= share ? u.result : `${u.result.slice(0, share)}…` })));
  return json;
}
