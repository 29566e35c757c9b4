import { mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { idFromFileName, isClosed, taskFileName, type BoardCheck } from '@dotasks/core/internal';

/**
 * The periodic pass of an idle watcher (docs/decisions.md, "An idle tasks
 * watch"): the full reconcile exists for the changes the file events missed,
 * so it runs only when something moved since the last one. What the pass
 * looks at, against the mark the last full reconcile left:
 *
 * - the board folder's identity and times: a file made, removed or renamed
 *   into it (every write of our commands and of most editors, a checkout)
 *   moves them;
 * - each open task's file and each file that did not read: a ctime not older
 *   than a clock reading taken before the reconcile read the board means an
 *   edit in place since (a completion by hand, an edge);
 * - the next SWEEP_FILES of the closed tasks' files the same way, in turn,
 *   as the board index's sweep does (core open-view.ts): each is looked at
 *   within closed / SWEEP_FILES passes.
 *
 * Nothing is read: a stat of the folder and of the open work's files, and
 * of the slice.
 */
export interface QuietMark {
  /** The board folder's stamp after the last full reconcile. */
  folder: string;
  /** A clock reading of the board's file system taken before that reconcile read the board. */
  since: number;
  /** Looked at on every pass: open tasks, files that did not read. */
  always: number[];
  /** Closed tasks, SWEEP_FILES a pass. */
  closed: number[];
  /** Where the next slice starts in `closed`. */
  next: number;
}

/** Closed files a pass looks at: the pass costs the open work and this, whatever the history. */
export const SWEEP_FILES = 1000;

/** The folder's device, inode and times, or '' when it is gone. */
export function folderStamp(dir: string): string {
  const s = statSync(dir, { throwIfNoEntry: false });
  return s ? `${s.dev}:${s.ino}:${s.mtimeMs}:${s.ctimeMs}` : '';
}

/** A clock reading of the board's file system (the ctime of a file made for it), or undefined when none can be made there. */
export function fileSystemClock(runtimeDir: string): number | undefined {
  const probe = join(runtimeDir, `.watch-clock-${process.pid}`);
  try {
    mkdirSync(runtimeDir, { recursive: true });
    writeFileSync(probe, '');
    try {
      return statSync(probe).ctimeMs;
    } finally {
      unlinkSync(probe);
    }
  } catch {
    return undefined;
  }
}

/**
 * The mark a full reconcile leaves: `since` taken before its read, the folder
 * stamped after its own writes and locks. None when the folder's task files
 * are not the ones the reconcile read: a file made or removed after the read
 * and before the stamp moved the folder before it was stamped, and only the
 * next reconcile can see it (a listing, once per full reconcile, which reads
 * every file anyway).
 */
export function quietMark(board: string, since: number, check: BoardCheck): QuietMark | undefined {
  const always: number[] = [];
  const closed: number[] = [];
  const read = new Set<number>();
  for (const id of check.graph.ids()) {
    read.add(id);
    (isClosed(check.graph.get(id)!.status) ? closed : always).push(id);
  }
  for (const p of check.snapshot.problems)
    if (p.id !== undefined) {
      read.add(p.id);
      always.push(p.id);
    }
  const folder = folderStamp(board);
  let listed = 0;
  try {
    for (const entry of readdirSync(board, { withFileTypes: true })) {
      const id = entry.isDirectory() ? undefined : idFromFileName(entry.name);
      if (id === undefined) continue;
      if (!read.has(id)) return undefined;
      listed++;
    }
  } catch {
    return undefined;
  }
  return listed === read.size ? { folder, since, always, closed, next: 0 } : undefined;
}

/** Whether nothing the mark covers moved; moves the sweep on when so. */
export function nothingMoved(board: string, mark: QuietMark): boolean {
  if (folderStamp(board) !== mark.folder) return false;
  const changed = (id: number) => {
    const s = statSync(join(board, taskFileName(id)), { throwIfNoEntry: false });
    return !s?.isFile() || s.ctimeMs >= mark.since;
  };
  for (const id of mark.always) if (changed(id)) return false;
  const { closed } = mark;
  const count = Math.min(closed.length, SWEEP_FILES);
  for (let i = 0; i < count; i++) if (changed(closed[(mark.next + i) % closed.length])) return false;
  if (closed.length) mark.next = (mark.next + count) % closed.length;
  return true;
}
