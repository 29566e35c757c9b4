import type { Stats } from 'node:fs';
import { CorruptTaskError, isErrnoException } from '../errors.js';
import { MAX_TASK_FILE_BYTES } from './format.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { closeSync, constants, fstatSync, openSync, readSync } = process.getBuiltinModule('node:fs');

/**
 * Reads one task file with the identity (fstat) it had when it was read, or
 * undefined when it does not exist. Refuses what cannot be a task without
 * reading it: a folder or other non-regular file of that name, a file over
 * the size limit. Kept apart from store.ts so the read path (`tasks list`)
 * does not load the write path's modules.
 */
export function readTaskFile(path: string): { text: string; stat: Stats } | undefined {
  let fd: number;
  try {
    // Non-blocking, so a named pipe called task_N.json cannot hang a listing.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    if (isErrnoException(error, 'EISDIR')) throw notRegular(path);
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw notRegular(path);
    if (stat.size > MAX_TASK_FILE_BYTES)
      throw new CorruptTaskError(
        path,
        1,
        1,
        `file is ${(stat.size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task`,
      );
    return { text: readOpenFile(fd, stat.size), stat };
  } finally {
    closeSync(fd);
  }
}

/**
 * The text of an open file `size` bytes long (its fstat's), read from the
 * start: as much of it as there is, should it have shrunk since.
 */
export function readOpenFile(fd: number, size: number): string {
  const buf = Buffer.alloc(size);
  let off = 0;
  while (off < buf.length) {
    const n = readSync(fd, buf, off, buf.length - off, off);
    if (n === 0) break;
    off += n;
  }
  return buf.toString('utf8', 0, off);
}

function notRegular(path: string): CorruptTaskError {
  return new CorruptTaskError(path, 1, 1, 'not a regular file (a folder or a device has this name); move it out of the board folder');
}
