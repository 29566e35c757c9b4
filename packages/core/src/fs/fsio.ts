import { closeSync, existsSync, fsync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isErrnoException } from '../errors.js';

/** Temp files start with this; listings and the watcher ignore them. */
export const TEMP_PREFIX = '.tmp-';
export const TEMP_SUFFIX = '.tmp';

/** True for names of temp files written by atomicWriteFile. */
export function isTempFileName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX) && name.endsWith(TEMP_SUFFIX);
}

// ---- the write path's file system calls, where tests inject faults ---------

/** A file system call of the write path that a test can make fail. */
export type FsCall = 'open' | 'write' | 'fsync' | 'rename' | 'unlink' | 'append';

/** Called before each call of the write path; throwing makes that call fail (tests only). */
export type FaultHook = (call: FsCall, path: string) => void;

let faultHook: FaultHook | undefined;

/**
 * Installs a hook that sees (and may fail) every file system call the board's
 * write path makes: the way in-process tests inject EIO at the third rename of
 * a commit. Returns a function that removes it. Not for production use.
 */
export function setFaultHook(hook: FaultHook | undefined): () => void {
  const previous = faultHook;
  faultHook = hook;
  return () => {
    faultHook = previous;
  };
}

/** An Error shaped like Node's system errors, for fault hooks. */
export function systemError(code: string, call: string, path: string): NodeJS.ErrnoException {
  const error = new Error(`${code}: injected fault, ${call} '${path}'`) as NodeJS.ErrnoException;
  error.code = code;
  error.syscall = call;
  error.path = path;
  return error;
}

/**
 * TASKS_FSYNC=0 skips every fsync (files, folders, the event log): for
 * benchmarks that measure what durability costs, and throwaway boards. A
 * power cut can then lose changes whose command exited 0.
 */
const FSYNC = process.env.TASKS_FSYNC !== '0';

function fault(call: FsCall, path: string): void {
  if (faultHook) faultHook(call, path);
}

const pauseSpec = parsePauseSpec(process.env.TASKS_TEST_PAUSE);
const pauseCounts = new Map<string, number>();

function parsePauseSpec(spec: string | undefined): Map<string, number> | undefined {
  if (!spec) return undefined;
  const out = new Map<string, number>();
  for (const part of spec.split(',')) {
    const [step, nth] = part.split(':');
    if (step) out.set(step.trim(), Number(nth) || 1);
  }
  return out;
}

/**
 * A named step of a commit (`locked`, `staged`, `committed`, `rename`,
 * `renamed`, `logged`). With TASKS_TEST_PAUSE=step[:n] in the environment
 * the process stops itself (SIGSTOP) the n-th time it reaches that step, so a
 * test can freeze a writer exactly there, let another process work, and
 * resume it (SIGCONT). Costs one map lookup otherwise.
 */
export function pausePoint(step: string): void {
  if (!pauseSpec) return;
  const nth = pauseSpec.get(step);
  if (nth === undefined) return;
  const count = (pauseCounts.get(step) ?? 0) + 1;
  pauseCounts.set(step, count);
  if (count === nth) process.kill(process.pid, 'SIGSTOP');
}

/** renameSync through the fault hook. */
export function renameFile(from: string, to: string): void {
  fault('rename', to);
  renameSync(from, to);
}

/** unlinkSync through the fault hook; a missing file is fine. Returns whether it removed one. */
export function removeFile(path: string): boolean {
  fault('unlink', path);
  try {
    unlinkSync(path);
    return true;
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return false;
    throw error;
  }
}

/** Writes a new file (never an existing one) and returns its open descriptor, for a later fsync. */
export function writeNewFile(path: string, data: string | Buffer): number {
  fault('open', path);
  const fd = openSync(path, 'wx', 0o644);
  try {
    fault('write', path);
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Appends text at the end of an open file (opened with 'a'), through the fault hook. */
export function appendToFile(fd: number, path: string, text: string): void {
  fault('append', path);
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/** fsyncSync through the fault hook. */
export function syncFile(fd: number, path: string): void {
  fault('fsync', path);
  if (FSYNC) fsyncSync(fd);
}

/** fsyncs then closes descriptors, several at a time on libuv's pool (ext4 commits concurrent fsyncs together). */
export async function syncAndClose(fds: { fd: number; path: string }[], parallel = 16): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < fds.length) {
      const { fd, path } = fds[next++];
      try {
        if (!failure) {
          fault('fsync', path);
          if (FSYNC) await new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
        }
      } catch (error) {
        failure ??= error;
      } finally {
        closeSync(fd);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, fds.length) }, worker));
  if (failure) throw failure;
}

/**
 * Makes a folder (and its parents) unless it exists. A commit asks for
 * `.runtime/` and its folders several times; `mkdir` of an existing folder
 * still takes the parent folder's lock in the kernel, which every other
 * writer's lock folders, renames and removals on the board wait for, while
 * looking at it does not.
 */
export function ensureFolder(dir: string): void {
  if (existsSync(dir)) return;
  const made = mkdirSync(dir, { recursive: true });
  if (made === undefined) return;
  // Durable like the files that will be renamed into it: each new folder's name is fsync'd into its parent, or a
  // power cut could take the folder, and a committed change's files with it.
  const created = [dir];
  while (created[0] !== made && dirname(created[0]) !== created[0]) created.unshift(dirname(created[0]));
  for (const folder of created) syncFolder(dirname(folder));
}

/**
 * fsyncs a folder, so the names renamed into it (or removed from it) survive
 * a power cut. A file system that cannot fsync a folder (EINVAL, EISDIR on
 * some platforms) is left to its own guarantees.
 */
export function syncFolder(dir: string): void {
  const fd = openFolder(dir);
  if (fd === undefined) return;
  try {
    fsyncSync(fd);
  } catch (error) {
    if (!folderCannotSync(error)) throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * syncFolder for several folders at once, on libuv's pool: ext4 commits
 * concurrent fsyncs together, so the folders a commit renamed into cost one
 * wait for the disk instead of one each.
 */
export async function syncFolders(dirs: Iterable<string>): Promise<void> {
  const fds: number[] = [];
  let failure: unknown;
  try {
    for (const dir of dirs) {
      const fd = openFolder(dir);
      if (fd !== undefined) fds.push(fd);
    }
    await Promise.all(
      fds.map(
        (fd) =>
          new Promise<void>((resolve) =>
            fsync(fd, (error) => {
              if (error && !folderCannotSync(error)) failure ??= error;
              resolve();
            }),
          ),
      ),
    );
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  if (failure) throw failure;
}

/** A folder opened to fsync it; undefined when fsyncs are off or it is gone. */
function openFolder(dir: string): number | undefined {
  fault('fsync', dir);
  if (!FSYNC) return undefined;
  try {
    return openSync(dir, 'r');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/** A file system that cannot fsync a folder (EINVAL, EISDIR on some platforms) is left to its own guarantees. */
function folderCannotSync(error: unknown): boolean {
  return isErrnoException(error, 'EINVAL') || isErrnoException(error, 'EISDIR') || isErrnoException(error, 'EPERM');
}

/**
 * Writes a file atomically: a complete temp file in the same directory,
 * fsync, rename over the target. A reader (or watcher) never sees a torn or
 * empty file. The temp file is removed if anything fails. `fsync: false`
 * skips the flush, for runtime records that need atomicity but not durability.
 * Board files (tasks, the high-water mark, claim records, the event log) are
 * written by the core's transaction instead; this is for everything else.
 */
export function atomicWriteFile(path: string, data: string, options: { fsync?: boolean } = {}): void {
  const temp = join(dirname(path), `${TEMP_PREFIX}${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`);
  let renamed = false;
  try {
    const fd = writeNewFile(temp, data);
    try {
      if (options.fsync !== false && FSYNC) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameFile(temp, path);
    renamed = true;
    if (options.fsync !== false) syncFolder(dirname(path));
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
