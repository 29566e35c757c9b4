import { findTopLevelKey, positionAt } from '../../format/json-locate.js';
import type { DoctorCheck, Scan, ScannedFile } from './check.js';

/** Two files holding one id. */
export const duplicateIds: DoctorCheck = {
  name: 'duplicate ids',
  codes: ['duplicate_id'],
  run({ files, findings }: Scan): void {
    // The first file of each id, and a group only for the ids held by more than one (a list per file was a
    // board-sized heap of one-element arrays).
    const first = new Map<number, ScannedFile>();
    const byRawId = new Map<number, ScannedFile[]>();
    for (const f of files) {
      if (f.rawId === undefined) continue;
      const seen = first.get(f.rawId);
      if (seen === undefined) first.set(f.rawId, f);
      else {
        const group = byRawId.get(f.rawId);
        if (group) group.push(f);
        else byRawId.set(f.rawId, [seen, f]);
      }
    }
    for (const [id, group] of byRawId) {
      const [keep, ...others] = [...group].sort((a, b) => Number(b.fileId === id) - Number(a.fileId === id) || a.name.localeCompare(b.name));
      for (const other of others) {
        const at = positionAt(other.text, findTopLevelKey(other.text, 'id'));
        findings.push({
          code: 'duplicate_id',
          file: other.path,
          line: at.line,
          column: at.column,
          task: id,
          message: `${other.name} and ${keep.name} both hold task #${id}`,
          fix: `keep one: remove ${other.name} if it is a copy, or give it a new id ('tasks create' it again)`,
          fixable: false,
        });
      }
    }
  },
};
