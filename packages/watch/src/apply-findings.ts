import { CorruptTaskError, TasksError, applyFinding, idFromFileName, taskFileName, type BoardFinding } from '@dotasks/core/internal';
import { basename } from 'node:path';
import type { WatchSession } from './watch-session.js';

/**
 * Makes the fixes among `findings` one at a time (each under its own locks),
 * remembering what each repair replaced; reports what cannot be fixed and
 * what failed. Problems (`invalid`) are the caller's to report.
 */
export async function applyFindings(session: WatchSession, findings: BoardFinding[]): Promise<void> {
  const { store, actor, events, problems, repairs } = session;
  for (const finding of findings) {
    if (session.closed) return;
    if (finding.kind === 'invalid') continue;
    try {
      const onWrite = (id: number, before: string) => repairs.remember(id, before, finding);
      for (const event of await applyFinding(store, finding, { actor, graph: session.graph, onWrite })) events.deliver(event);
    } catch (error) {
      if (error instanceof CorruptTaskError) {
        const id = idFromFileName(basename(error.file));
        await problems.reportNew(
          [
            {
              kind: 'invalid',
              file: basename(error.file),
              ...(id ? { task: id } : {}),
              line: error.line,
              column: error.column,
              problem: String(error.details.problem),
            },
          ],
          [],
        );
      } else if (error instanceof TasksError && error.code === 'E_CYCLE') {
        await problems.reportNew(
          [{ kind: 'invalid', file: taskFileName(finding.task), task: finding.task, problem: `${error.message}; nothing was written` }],
          [],
        );
      } else {
        // A lock timeout or a compromised lock fails this one fix; the next change or reconcile retries it.
        await events.reportFailure(finding.kind, error, finding.task);
      }
    }
  }
}
