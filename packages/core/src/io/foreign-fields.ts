import { closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { MAX_TASK_FILE_BYTES, cloneJson, createRecord, setOwn } from '../format/format.js';
import { MAX_NESTING_DEPTH, describeNesting, findDeepNesting } from '../format/json-nesting.js';
import { findJsonSyntaxError, positionAt } from '../format/json-locate.js';
import { readOpenFile } from '../format/task-file.js';

/**
 * Small readers shared by the import formats (board-import.ts and
 * import-tools.ts, backlog-lists.ts): what another tool wrote, read leniently where that is
 * harmless and refused with a file position where it is not.
 */

/** The most an import reads from one file that holds a whole list (a store, beads' issues.jsonl, an export): well under V8's longest string. */
export const MAX_SOURCE_FILE_BYTES = 256 * 1024 * 1024;

/** How a source file is read. */
export interface SourceFileOptions {
  /**
   * A file the import found in a folder (a list's `N.json`, a Backlog.md
   * task, beads' issues.jsonl in a project), not the path it was given: it
   * is never read through a symbolic link.
   */
  inFolder?: boolean;
  /** One task per file (a list's `N.json`, a Backlog.md task): no larger than a task file may be. */
  oneTask?: boolean;
}

const { O_RDONLY, O_NONBLOCK = 0, O_NOFOLLOW = 0 } = constants;

/** What a file that is not a regular one is, for messages. */
function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a named pipe';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * A source file's text; `E_NOT_FOUND` when it is not there. Only a regular
 * file is read: it is opened without blocking (a named pipe would hang the
 * import) and, found in a folder, without following a link (which could
 * point anywhere, and its content would be quoted in a message), then
 * checked on the open descriptor, so nothing can swap it meanwhile.
 */
export function readSourceText(file: string, options: SourceFileOptions = {}): string {
  const refuse = (what: string, more = '') =>
    new TasksError('E_INVALID', `${file} is ${what}${more}${options.inFolder ? '; move it out of the folder' : ''}; nothing was imported`, { file });
  let fd: number;
  try {
    fd = openSync(file, O_RDONLY | O_NONBLOCK | (options.inFolder ? O_NOFOLLOW : 0));
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) throw new TasksError('E_NOT_FOUND', `${file} does not exist`, { file }, { cause: error });
    // O_NOFOLLOW on a link: ELOOP (Linux, macOS), EMLINK (FreeBSD).
    if (options.inFolder && (isErrnoException(error, 'ELOOP') || isErrnoException(error, 'EMLINK')) && lstatSync(file).isSymbolicLink())
      throw new TasksError(
        'E_INVALID',
        `${file} is a symbolic link: an import never reads through a link in the folder; put the file itself there or move the link out; nothing was imported`,
        { file },
        { cause: error },
      );
    if (isErrnoException(error, 'ENXIO')) throw refuse('a socket', ': an import reads regular files only');
    if (isErrnoException(error, 'EISDIR')) throw refuse('a folder', ': an import reads regular files only');
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse(kindOf(stat), ': an import reads regular files only');
    const limit = options.oneTask ? MAX_TASK_FILE_BYTES : MAX_SOURCE_FILE_BYTES;
    if (stat.size > limit)
      throw new TasksError(
        'E_INVALID',
        `${file} is ${(stat.size / 1024 / 1024).toFixed(1)} MB, over the ${limit / 1024 / 1024} MiB an import reads from one ${options.oneTask ? 'task file' : 'file'}; nothing was imported`,
        { file, bytes: stat.size },
      );
    return readOpenFile(fd, stat.size);
  } finally {
    closeSync(fd);
  }
}

/**
 * True when `parts` under `dir` is a folder the import may look into: a
 * link among them is refused (the import reads nothing it finds through a
 * link), anything else that is not a folder is false. `dir` itself is the
 * path the import was given and is taken as it is.
 */
export function isFolderIn(dir: string, ...parts: string[]): boolean {
  let path = dir;
  for (const part of parts) {
    path = join(path, part);
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch (error) {
      if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return false;
      throw error;
    }
    if (stat.isSymbolicLink())
      throw new TasksError(
        'E_INVALID',
        `${path} is a symbolic link: an import never reads through a link it finds; give the folder it points to instead; nothing was imported`,
        { path },
      );
    if (!stat.isDirectory()) return false;
  }
  return true;
}

/**
 * Refuses a task read from a source whose fields nest deeper than a task
 * file's may (format.ts, MAX_NESTING_DEPTH), before anything recursive
 * (cloneJson) copies it: 20,000 levels overflow the stack.
 */
export function checkSourceNesting(raw: Record<string, unknown>, where: string): void {
  for (const key of Object.keys(raw)) {
    const deep = findDeepNesting(raw[key]);
    if (deep)
      throw new TasksError(
        'E_INVALID',
        `${where}: ${JSON.stringify(key)} nests deeper than ${MAX_NESTING_DEPTH} levels (at ${describeNesting(key, deep)}); nothing was imported`,
        { where, key },
      );
  }
}

/** Parses JSON text, refusing with `file:line:column` (offset by `firstLine - 1` lines, for one line of a JSONL file). */
export function parseSourceJson(text: string, file: string, firstLine = 1): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    const problem = findJsonSyntaxError(text);
    const at = positionAt(text, problem?.offset ?? 0);
    throw new TasksError(
      'E_INVALID',
      `${file}:${at.line + firstLine - 1}:${at.column}: invalid JSON: ${problem?.message ?? 'does not parse'}; nothing was imported`,
      { file },
      { cause },
    );
  }
}

/** A JSON file, parsed. */
export function readJson(file: string, options: SourceFileOptions = {}): unknown {
  return parseSourceJson(readSourceText(file, options), file);
}

/** A plain object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A string field; null and missing read as "", anything else as its string. */
export function text(value: unknown): string {
  return typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);
}

/** A list of ids as strings; anything but an array reads as none. */
export function idList(value: unknown): string[] {
  return Array.isArray(value) ? value.map((v) => String(v).trim()) : [];
}

/** A one-line subject, or the description's first line (with a warning) when there is none. */
export function subjectOf(value: unknown, description: string, where: string, warnings: string[]): string {
  const s = text(value)
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .trim();
  if (s) return s;
  const fallback =
    description
      .split('\n')
      .find((l) => l.trim())
      ?.trim()
      .slice(0, 80) || '(untitled)';
  warnings.push(`${where}: no subject, used ${JSON.stringify(fallback)}`);
  return fallback;
}

/** The keys of `obj` that are not in `known`, deep-copied in their order. */
export function extras(obj: Record<string, unknown>, known: ReadonlySet<string>): Record<string, unknown> {
  const out = createRecord();
  for (const key of Object.keys(obj)) if (!known.has(key)) setOwn(out, key, cloneJson(obj[key]));
  return out;
}
