import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isErrnoException } from './errors.js';

/** Temp files start with this; listings and the watcher ignore them. */
export const TEMP_PREFIX = '.tmp-';
export const TEMP_SUFFIX = '.tmp';

/** True for names of temp files written by atomicWriteFile. */
export function isTempFileName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX) && name.endsWith(TEMP_SUFFIX);
}

/**
 * Writes a file atomically: a complete temp file in the same directory,
 * fsync, rename over the target. A reader (or watcher) never sees a torn or
 * empty file. The temp file is removed if anything fails. `fsync: false`
 * skips the flush, for runtime records that need atomicity but not durability.
 */
export function atomicWriteFile(path: string, data: string, options: { fsync?: boolean } = {}): void {
  const temp = join(dirname(path), `${TEMP_PREFIX}${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
  let renamed = false;
  try {
    const fd = openSync(temp, 'wx', 0o644);
    try {
      const buf = Buffer.from(data, 'utf8');
      let off = 0;
      while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
      if (options.fsync !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
    renamed = true;
  } finally {
    if (!renamed) {
      try {
        unlinkSync(temp);
      } catch (error) {
        if (!isErrnoException(error, 'ENOENT')) throw error;
      }
    }
  }
}

/** Reads a UTF-8 file, or undefined when it does not exist. */
export function readFileIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    throw error;
  }
}
