import { statSync, watch as watchFolder, type FSWatcher as FolderWatcher } from 'node:fs';
import { TaskStore, TasksError, idFromFileName } from '@dotasks/core/internal';
import type { FSWatcher } from 'chokidar';

const TASK_NAME_RE = /^task_[^/\\]*\.json$/i;
const ENOSPC_HINT = ' (out of inotify watches: raise fs.inotify.max_user_watches, see docs/watcher.md)';
const EMFILE_HINT = ' (too many open files: raise ulimit -n)';

/** What an entry of the board folder is to the watcher. */
export type BoardEntry = { kind: 'task'; id: number } | { kind: 'misnamed' } | { kind: 'unknown' } | { kind: 'other' };

/** `name` is what fs.watch said changed in the board folder (null: it did not say). */
export function classifyBoardEntry(name: string | null): BoardEntry {
  if (name === null) return { kind: 'unknown' };
  const id = idFromFileName(name);
  if (id !== undefined) return { kind: 'task', id };
  if (TASK_NAME_RE.test(name) && !TaskStore.isIgnoredName(name)) return { kind: 'misnamed' };
  return { kind: 'other' };
}

export interface BoardFolderWatchOptions {
  /** Once closed, attach does nothing. */
  isClosed: () => boolean;
  /** Something happened to the entry `name` (null: the platform did not say which). */
  onEntry: (name: string | null) => void;
  /** The folder went away under the watch. */
  onLost: () => void;
  notice: (message: string) => void;
  reportFailure: (action: string, error: unknown) => Promise<void>;
}

/** fs.watch on the board folder itself: which task file changed. */
export interface BoardFolderWatch {
  /** Watches the folder's entries; again when the folder was re-created (a new inode), else nothing. */
  attach(): void;
  detach(): void;
}

export function createBoardFolderWatch(board: string, options: BoardFolderWatchOptions): BoardFolderWatch {
  let boardWatch: FolderWatcher | undefined;
  let boardIno: number | undefined;

  const detach = () => {
    boardWatch?.close();
    boardWatch = undefined;
    boardIno = undefined;
  };

  const attach = () => {
    if (options.isClosed()) return;
    const ino = statSync(board, { throwIfNoEntry: false })?.ino;
    if (ino !== undefined && ino === boardIno && boardWatch) return;
    detach();
    if (ino === undefined) return;
    try {
      const w = watchFolder(board, { persistent: true }, (_event, name) => options.onEntry(name === null ? null : String(name)));
      w.on('error', () => {
        // The folder went away under the watch; the parent's watcher or the next reconcile brings it back.
        if (boardWatch === w) detach();
        options.onLost();
      });
      boardWatch = w;
      boardIno = ino;
    } catch (error) {
      const err = error as NodeJS.ErrnoException;
      const hint = err.code === 'ENOSPC' ? ENOSPC_HINT : '';
      options.notice(`cannot watch ${board}: ${err.message}${hint}; only the periodic reconcile will notice changes`);
      void options.reportFailure('watch', new TasksError('E_IO', `cannot watch ${board}: ${err.message}${hint}`));
    }
  };

  return { attach, detach };
}

export interface ParentFolderWatchOptions {
  /** The board folder vanished. */
  onVanished: () => void;
  /** The board folder appeared. */
  onAppeared: () => void;
  notice: (message: string) => void;
  reportFailure: (action: string, error: unknown) => Promise<void>;
}

/**
 * chokidar on the board's parent folder, for the board folder coming and
 * going (what is inside is fs.watch's), so a `.tasks/` removed and re-created
 * keeps being watched. Resolve `ready` with the watcher's `ready` event.
 */
export function watchParentFolder(watch: typeof import('chokidar').watch, parent: string, board: string, options: ParentFolderWatchOptions): FSWatcher {
  // Only the board folder itself, as an entry of its parent.
  const ignored = (path: string) => path !== parent && path !== board;
  const w = watch(parent, { ignored, ignoreInitial: true, depth: 0, persistent: true });
  w.on('all', (event, path) => {
    if (path !== board) return;
    if (event === 'unlinkDir') options.onVanished();
    else if (event === 'addDir') options.onAppeared();
  });
  w.on('error', (error) => {
    const err = error as NodeJS.ErrnoException;
    const hint = err.code === 'ENOSPC' ? ENOSPC_HINT : err.code === 'EMFILE' ? EMFILE_HINT : '';
    options.notice(`watch error: ${err.message}${hint}`);
    void options.reportFailure('watch', new TasksError('E_IO', `${err.message}${hint}`));
  });
  return w;
}

/** Resolves once chokidar has read the folder. */
export function watcherReady(w: FSWatcher): Promise<void> {
  return new Promise<void>((resolveReady) => w.once('ready', () => resolveReady()));
}
