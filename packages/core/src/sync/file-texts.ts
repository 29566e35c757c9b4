/**
 * The board's task file texts as a sync reads them, cached in this process
 * by the identity each file had when it was read (inode, size, mtime,
 * ctime): a process that syncs again and again (a worker, `watch --sync`)
 * stats an unchanged file instead of opening and reading it, and hashes its
 * text once. As with quiet-sync.ts's look, an identity is kept only if it is
 * older than a clock reading of the board's file system taken before the
 * read, so a file rewritten within the same clock tick with the same size is
 * read again, never taken for its older text.
 */
import { statSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { readTaskFile } from '../format/task-file.js';
import type { TaskStore } from '../store.js';

interface Known {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  text: string;
}

const known = new Map<string, Known>();
/** Past this many files the cache starts again. */
const LIMIT = 250_000;

const same = (k: Known, s: Stats) => k.ino === s.ino && k.size === s.size && k.mtimeMs === s.mtimeMs && k.ctimeMs === s.ctimeMs;

/** A clock reading of the board's file system: the ctime of a file made for it. */
export function fileSystemNow(runtimeDir: string): number {
  const probe = join(runtimeDir, `.sync-clock-${process.pid}`);
  writeFileSync(probe, '');
  try {
    return statSync(probe).ctimeMs;
  } finally {
    unlinkSync(probe);
  }
}

/**
 * A reader of the board's task file texts for one look (the texts as
 * `store.readTaskText` gives them, and its errors), through this process's
 * cache.
 */
export function taskTextReader(store: TaskStore): (id: number) => string | undefined {
  const now = fileSystemNow(store.runtimeDir);
  return (id) => {
    const path = store.taskPath(id);
    const k = known.get(path);
    if (k) {
      const stat = statSync(path, { throwIfNoEntry: false });
      if (stat?.isFile() && same(k, stat)) return k.text;
      known.delete(path);
    }
    const read = readTaskFile(path);
    if (!read) return undefined;
    const { stat, text } = read;
    if (stat.ctimeMs < now) {
      if (known.size >= LIMIT) known.clear();
      known.set(path, { ino: stat.ino, size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, text });
    }
    return text;
  };
}
