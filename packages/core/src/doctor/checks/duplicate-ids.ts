import { findTopLevelKey, positionAt } from '../../format/json-locate.js';
import type { DoctorCheck, Scan, ScannedFile } from './check.js';

/** Two files holding one id. */
export const duplicateIds: DoctorCheck = {
  name: 'duplicate ids',
  codes: ['duplicate_id'],
  run({ files, findings }: Scan): void {
    const byRawId = new Map<number, ScannedFile[]>();
    for (const f of files) if (f.rawId !== undefined) byRawId.set(f.rawId, [...(byRawId.get(f.rawId) ?? []), f]);
    for (const [id, group] of byRawId) {
      if (group.length < 2) continue;
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
