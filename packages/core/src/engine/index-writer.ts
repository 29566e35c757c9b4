/**
 * Putting the board index in place: a temp file in the runtime folder,
 * written whole, given the mtime that says when an exact pass last found it
 * right, renamed over the index. No fsync: it is a cache, and a torn one
 * reads as none (docs/decisions.md, "The board index").
 */
import { isErrnoException } from '../errors.js';
import { BOARD_INDEX_FILE, tempName } from './index-file.js';
import { rememberWritten } from './index-read.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { closeSync, fstatSync, futimesSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } = process.getBuiltinModule('node:fs');

/** Sets a file's mtime (through a descriptor of the very file that was checked); failing only means a staler time. */
export function touch(fd: number, ms: number): void {
  try {
    futimesSync(fd, ms / 1000, ms / 1000);
  } catch {
    // someone else's file, or a file system without times
  }
}

/**
 * Writes the index atomically. Its temp file is made lazily, by the first
 * call of stamp(), whose ctime is the file system's clock at that moment.
 * Any failure (a read-only board, no space) only means no index.
 */
export class IndexWriter {
  private temp?: { fd: number | undefined; path: string; stamp: number } | null;

  constructor(private readonly runtimeDir: string) {}

  /** The file system's clock now (a new file's ctime), or undefined when nothing can be written. */
  stamp(): number | undefined {
    if (this.temp === undefined) this.temp = this.create();
    return this.temp?.stamp;
  }

  private create(): { fd: number; path: string; stamp: number } | null {
    const path = tempName(this.runtimeDir, BOARD_INDEX_FILE);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o644);
        return { fd, path, stamp: fstatSync(fd).ctimeMs };
      } catch (error) {
        if (attempt > 0 || !isErrnoException(error, 'ENOENT')) return null;
        try {
          mkdirSync(this.runtimeDir, { recursive: true });
        } catch {
          return null;
        }
      }
    }
    return null;
  }

  /** Puts `data` in place as `target`, with `verifiedAt` as its mtime; false when it could not. */
  write(target: string, data: Buffer, verifiedAt: number): boolean {
    if (this.temp === undefined) this.temp = this.create();
    const temp = this.temp;
    if (!temp || temp.fd === undefined) return false;
    try {
      let off = 0;
      while (off < data.length) off += writeSync(temp.fd, data, off, data.length - off);
      touch(temp.fd, verifiedAt);
      const { ino, size, mtimeMs } = fstatSync(temp.fd);
      closeSync(temp.fd);
      temp.fd = undefined;
      renameSync(temp.path, target);
      this.temp = null;
      rememberWritten(target, ino, size, mtimeMs, data);
      return true;
    } catch {
      // No index this time; the next reader tries again.
      return false;
    }
  }

  /** Removes the temp file unless it became the index. */
  close(): void {
    const temp = this.temp;
    if (!temp) return;
    this.temp = null;
    try {
      if (temp.fd !== undefined) closeSync(temp.fd);
      unlinkSync(temp.path);
    } catch {
      // already gone
    }
  }
}
