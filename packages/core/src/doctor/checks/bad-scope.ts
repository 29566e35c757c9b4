import { findTopLevelKey, positionAt } from '../../format/json-locate.js';
import { isClosed } from '../../format/format.js';
import { removePathCommand, scopeProblem, shortGlob } from '../../scopes/glob-limits.js';
import type { DoctorCheck, Scan } from './check.js';

/**
 * An open task whose `paths` break a limit of glob-limits.ts (a hand edit, an
 * import or a merge can write one): claims hold that task back, so it waits
 * until a person mends its scope. Not fixable: which globs were meant is the
 * person's call.
 */
export const badScopes: DoctorCheck = {
  name: 'bad scopes',
  codes: ['bad_scope'],
  run({ files, findings }: Scan): void {
    for (const f of files) {
      const task = f.task;
      if (!task?.paths?.length || isClosed(task.status)) continue;
      const problem = scopeProblem(task.paths);
      if (!problem) continue;
      const at = positionAt(f.text, findTopLevelKey(f.text, 'paths'));
      findings.push({
        code: 'bad_scope',
        file: f.path,
        line: at.line,
        column: at.column,
        task: task.id,
        message: `task #${task.id} is held back from every claim: the path glob ${JSON.stringify(shortGlob(problem.glob))} ${problem.reason}`,
        fix: `mend its scope: ${removePathCommand(task.id, problem.glob)}, then --path with what was meant`,
        fixable: false,
      });
    }
  },
};
