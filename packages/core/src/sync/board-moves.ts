/**
 * Moving a board between its two homes (docs/decisions.md, "Where a synced
 * board lives"), and a fresh clone joining a board its remote holds.
 */
import { userInfo } from 'node:os';
import { TasksError } from '../errors.js';
import { findBoard, resolveBoardDir, type FindBoardOptions } from '../find-board.js';
import { readConfig } from '../board-config.js';
import { TaskStore } from '../store.js';
import {
  SYNCED_GITIGNORE_LINES,
  commitBoardFiles,
  committedBoardTree,
  headCommit,
  markSynced,
  remoteHasBranch,
  setConfigKey,
  setGitignoreLines,
  trackedBoardFiles,
} from './board-home.js';
import { syncBoard, type SyncOptions, type SyncReport } from './sync.js';

/** What a move between the homes did. */
export interface BoardMove {
  report: SyncReport;
  /** The commit on the checked-out branch that moved the task files (none when there was nothing to move). */
  commit?: string;
  /** The task files it untracked or committed. */
  files: string[];
}

/**
 * `tasks sync --adopt`: the board's committed tasks go onto the board
 * branch (one sync, merged against the committed versions, so a clone that
 * adopts after another finds the same tasks, not clashing ones), then one
 * commit on the checked-out branch untracks them and records the board as
 * synced. The commit is the user's to review, amend or push.
 */
export async function adoptBoard(store: TaskStore, options: SyncOptions = {}): Promise<BoardMove> {
  const tracked = trackedBoardFiles(store.dir);
  // The move ends in a commit: a repository that cannot take one refuses before the sync publishes anything.
  if (tracked.length) headCommit(store.dir);
  const report = await syncBoard(store, { ...options, home: { adoptBase: tracked.length ? committedBoardTree(store.dir) : undefined } });
  if (tracked.length === 0) return { report, files: [] };
  markSynced(store.dir);
  const where = `${report.remote}/${report.branch}`;
  const commit = commitBoardFiles(store.dir, {
    remove: tracked,
    add: ['.gitignore', 'config.json'],
    message: `tasks: the board moves to ${where}\n\n${tracked.length} board file(s) leave the code branch: they live on ${where} now (tasks sync).\n.tasks/config.json says "sync": true, and .tasks/.gitignore keeps them out.\n`,
  });
  return { report, commit, files: tracked };
}

/**
 * `tasks sync --retire`: the last sync brings everything in and marks the
 * board branch retired (other clones' syncs then stop and say where the
 * board went), and one commit on the checked-out branch adds the task
 * files and records the board as kept with the code again.
 */
export async function retireBoard(store: TaskStore, options: SyncOptions = {}): Promise<BoardMove> {
  const by = `${userInfo().username}`;
  const note = 'the board is kept on the code branch again (tasks sync --retire)';
  // Before the sync retires the board branch for every clone: the commit that brings the files back needs a parent.
  headCommit(store.dir);
  const report = await syncBoard(store, { ...options, home: { retire: { at: new Date().toISOString(), by, note } } });
  setGitignoreLines(store.dir, SYNCED_GITIGNORE_LINES, false);
  setConfigKey(store.dir, 'sync', undefined);
  const files = ['.highwatermark', ...store.listIds().map((id) => `task_${id}.json`)];
  const commit = commitBoardFiles(store.dir, {
    remove: [],
    add: [...files, '.gitignore', 'config.json'],
    message: `tasks: the board is kept on the code branch again\n\n${files.length} board file(s) come back from ${report.remote}/${report.branch}, which is retired.\n`,
  });
  return { report, commit, files };
}

/**
 * The board for a command that syncs: the one found as usual, or, in a
 * fresh clone without one whose remote holds a board branch, a new board
 * set up to sync it in (`note` says so). Anything else is E_NO_BOARD, saying
 * whether the remote had a board.
 */
export function openBoardToSync(options: FindBoardOptions & { remote?: string; branch?: string }): { store: TaskStore; note?: string } {
  try {
    return { store: new TaskStore(findBoard(options)) };
  } catch (error) {
    if (!(error instanceof TasksError) || error.code !== 'E_NO_BOARD') throw error;
    const { dir, via } = resolveBoardDir(options);
    if (via !== 'git') throw error;
    const remote = options.remote ?? 'origin';
    const branch = options.branch ?? 'tasks';
    if (!remoteHasBranch(dir.replace(/[/\\][^/\\]+$/, ''), remote, branch))
      throw new TasksError(
        'E_NO_BOARD',
        `${error.message.replace(/; run 'tasks init'.*$/, '')}, and ${remote} has no board branch '${branch}'; run 'tasks init' to create one`,
        error.details,
      );
    const store = TaskStore.init(dir);
    markSynced(dir);
    return { store, note: `set up the board in ${dir} from ${remote}/${branch}` };
  }
}

/** Whether a board records that it syncs (`"sync": true` in its config.json). */
export function boardSyncs(dir: string): boolean {
  return readConfig(dir).sync;
}
