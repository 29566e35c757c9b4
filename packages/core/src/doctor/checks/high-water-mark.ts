import { join } from 'node:path';
import { HIGHWATERMARK_FILE } from '../../engine/transaction.js';
import { readFileIfExists } from '../../fs/fsio.js';
import type { DoctorCheck, Scan } from './check.js';

/**
 * `.highwatermark` missing, not a number, below the highest task (ids could
 * be handed out twice), or so high that no id can follow it (a remote or a
 * hand once wrote 9007199254740991: every create fails).
 */
export const highWaterMark: DoctorCheck = {
  name: 'high-water mark',
  codes: ['highwatermark'],
  run({ store, present, findings, plan }: Scan): void {
    const hwPath = join(store.dir, HIGHWATERMARK_FILE);
    const hwText = readFileIfExists(hwPath);
    let highest = 0;
    for (const id of present) if (id > highest) highest = id;
    const hw = hwText !== undefined && /^\s*\d+\s*$/.test(hwText) ? Number(hwText.trim()) : undefined;
    const exhausted = hw !== undefined && hw >= Number.MAX_SAFE_INTEGER && highest < Number.MAX_SAFE_INTEGER;
    if (hw !== undefined && hw >= highest && !exhausted) return;
    // Every number in a garbled file is a mark someone had; one that leaves no id to hand out is not.
    const numbers =
      (hwText ?? '')
        .match(/\d+/g)
        ?.map(Number)
        .filter((n) => Number.isSafeInteger(n) && n < Number.MAX_SAFE_INTEGER) ?? [];
    const to = numbers.reduce((a, b) => Math.max(a, b), highest);
    const from = hwText === undefined ? 'missing' : hw === undefined ? JSON.stringify(hwText.trim().slice(0, 40)) : String(hw);
    if (hwText === undefined && highest === 0) return;
    findings.push({
      code: 'highwatermark',
      file: hwPath,
      message: exhausted
        ? `.highwatermark is ${hw}, after which no id can be handed out (every create fails); the highest task is #${highest}`
        : hw === undefined
          ? `.highwatermark is ${hwText === undefined ? 'missing' : `not a number (${from})`}; the highest task is #${highest}`
          : `.highwatermark is ${hw}, lower than the highest task #${highest}, so ids could be handed out twice`,
      fix: `set it to ${to} (tasks doctor --fix)`,
      fixable: true,
    });
    plan.highWaterMark = { from, to };
  },
};
