// Option values that lists take, apart from context.ts so the read path (list, ready, search) does not load the store.
import { TasksError } from './core-read.js';

/** Values given repeatedly or as `a,b`, trimmed, without empty parts (labels, statuses, priorities). */
export function splitList(values: unknown): string[] {
  if (values === undefined) return [];
  const list = Array.isArray(values) ? values : [values];
  return list
    .flatMap((v) => String(v).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `--priority` values as numbers: `0`…`4`, also written `P0`…`P4`; anything else is a usage error. */
export function parsePriorities(values: unknown): number[] {
  return splitList(values).map((raw) => {
    const m = /^[pP]?([0-4])$/.exec(raw);
    if (!m) throw new TasksError('E_USAGE', `--priority takes 0 (highest) to 4, got '${raw}'`);
    return Number(m[1]);
  });
}
