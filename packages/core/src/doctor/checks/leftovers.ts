import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_DIR } from '../../engine/store-types.js';
import { isErrnoException } from '../../errors.js';
import { isTempFileName } from '../../fs/fsio.js';
import { formatAge, type DoctorCheck, type Scan } from './check.js';

/** Stale locks and leftover temp files, in the board and its runtime folders. */
export const leftovers: DoctorCheck = {
  name: 'stale locks and temp files',
  codes: ['stale_lock', 'temp_file'],
  run({ store, boardNames, now, staleMs, findings, plan }: Scan): void {
    for (const dir of [store.dir, join(store.dir, RUNTIME_DIR), join(store.dir, RUNTIME_DIR, 'leases')]) {
      let entries: string[];
      try {
        // The board folder was listed once already, by task-files.
        entries = dir === store.dir ? boardNames : readdirSync(dir);
      } catch (error) {
        if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) continue;
        throw error;
      }
      for (const name of entries) {
        const path = join(dir, name);
        const isLock = name.endsWith('.lock');
        if (!isLock && !isTempFileName(name)) continue;
        let mtime: number;
        try {
          mtime = statSync(path).mtimeMs;
        } catch (error) {
          if (isErrnoException(error, 'ENOENT')) continue;
          throw error;
        }
        const ageMs = now - mtime;
        // A held lock is refreshed every stale/2 by its live holder; a fresh temp file is a write in flight.
        if (ageMs <= staleMs) continue;
        const age = `untouched for ${formatAge(ageMs)}`;
        if (isLock) {
          findings.push({
            code: 'stale_lock',
            file: path,
            message: `stale lock ${name}, ${age} (a process was killed holding it)`,
            fix: `remove it (tasks doctor --fix); the next writer would also take it over`,
            fixable: true,
          });
          plan.staleLocks.push({ path, age });
        } else {
          findings.push({
            code: 'temp_file',
            file: path,
            message: `leftover temp file ${name}, ${age} (an interrupted write; the target file is intact)`,
            fix: `remove it (tasks doctor --fix)`,
            fixable: true,
          });
          plan.temps.push({ path, age });
        }
      }
    }
  },
};
