import { statSync } from 'node:fs';
import { join } from 'node:path';
import { journalDir, journalTasks, listJournals, readJournal } from '../../engine/journal.js';
import type { DoctorCheck, Scan } from './check.js';

/**
 * Changes a writer committed but did not finish (it died or lost its
 * locks). A journal whose lock is held and fresh belongs to a change in
 * flight right now: not a problem.
 */
export const unfinishedChanges: DoctorCheck = {
  name: 'unfinished changes',
  codes: ['unfinished_change'],
  run({ store, now, staleMs, findings, plan }: Scan): void {
    for (const name of listJournals(store.runtimeDir)) {
      const lockPath = name === 'board.json' ? store.boardLockPath() : store.taskLockPath(Number(/[0-9]+/.exec(name)![0]));
      const lockAge = statSync(lockPath, { throwIfNoEntry: false })?.mtimeMs;
      if (lockAge !== undefined && now - lockAge <= staleMs) continue;
      let tasks: number[] = [];
      try {
        const journal = readJournal(store.runtimeDir, name);
        if (!journal) continue;
        tasks = journalTasks(journal);
      } catch {
        // an unreadable record is reported the same way; its tasks are unknown
      }
      const file = join(journalDir(store.runtimeDir), name);
      findings.push({
        code: 'unfinished_change',
        file,
        ...(tasks.length === 1 ? { task: tasks[0] } : {}),
        message: `a change to ${tasks.length ? tasks.map((id) => `#${id}`).join(', ') : 'the board'} was committed but not finished (its writer died or lost its locks)`,
        fix: 'the next command that takes those locks finishes it (tasks doctor --fix does)',
        fixable: true,
      });
      for (const task of tasks) plan.journals.push(task);
    }
  },
};
