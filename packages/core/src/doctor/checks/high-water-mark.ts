import { join } from 'node:path';
import { HIGHWATERMARK_FILE } from '../../board/transaction.js';
import { readFileIfExists } from '../../fs/fsio.js';
import type { DoctorCheck, Scan } from './check.js';

/** `.highwatermark` missing, not a number, or below the highest task (ids could be handed out twice). */
export const highWaterMark: DoctorCheck = {
  name: 'high-water mark',
  codes: ['highwatermark'],
  run({ store, present, findings, plan }: Scan): void {
    const hwPath = join(store.dir, HIGHWATERMARK_FILE);
    const hwText = readFileIfExists(hwPath);
    const highest = Math.max(0, ...present);
    const hw = hwText !== undefined && /^\s*\d+\s*$/.test(hwText) ? Number(hwText.trim()) : undefined;
    if (hw === undefined || hw < highest) {
      const numbers = (hwText ?? '').match(/\d+/g)?.map(Number).filter(Number.isSafeInteger) ?? [];
      const to = Math.max(highest, ...numbers);
      const from = hwText === undefined ? 'missing' : hw === undefined ? JSON.stringify(hwText.trim().slice(0, 40)) : String(hw);
      if (hwText !== undefined || highest > 0) {
        findings.push({
          code: 'highwatermark',
          file: hwPath,
          message:
            hw === undefined
              ? `.highwatermark is ${hwText === undefined ? 'missing' : `not a number (${from})`}; the highest task is #${highest}`
              : `.highwatermark is ${hw}, lower than the highest task #${highest}, so ids could be handed out twice`,
          fix: `set it to ${to} (tasks doctor --fix)`,
          fixable: true,
        });
        plan.highWaterMark = { from, to };
      }
    }
  },
};
