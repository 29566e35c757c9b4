import { positionAt } from '../../format/json-locate.js';
import { canonicalText, type DoctorCheck, type Scan } from './check.js';

/** A valid task file not in canonical form; after the graph check, whose findings at the same spot come first. */
export const canonicalForm: DoctorCheck = {
  name: 'canonical form',
  codes: ['non_canonical'],
  run({ files, findings }: Scan): void {
    for (const file of files) {
      const { task, text, path, fileId, stringIds } = file;
      // A file under a name that is not task_N.json is never rewritten: its name is the problem.
      // Edge ids written as strings are their own finding, and their rewrite canonicalises the file.
      if (!task || stringIds || fileId === undefined) continue;
      const canonical = canonicalText(file);
      if (canonical === text) continue;
      let i = 0;
      while (i < text.length && text[i] === canonical[i]) i++;
      const at = positionAt(text, i);
      findings.push({
        code: 'non_canonical',
        file: path,
        line: at.line,
        column: at.column,
        task: fileId,
        message: 'not in canonical form (key order, 2-space indent, sorted ids, trailing newline)',
        fix: 'rewrite it (tasks doctor --fix); the meaning does not change',
        fixable: true,
      });
    }
  },
};
