import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptTaskError, isErrnoException } from '../../errors.js';
import { MAX_TASK_FILE_BYTES, TASK_STATUSES, idFromFileName, stripBom, validateTask } from '../../format/format.js';
import { findArrayElement, findJsonSyntaxError, findTopLevelKey, positionAt } from '../../format/json-locate.js';
import { readFileIfExists } from '../../fs/fsio.js';
import type { DoctorFinding, FindingCode } from '../findings.js';
import { show, type DoctorCheck, type Scan, type ScannedFile } from './check.js';

const EDGE_KEYS = ['blockedBy', 'blocks'] as const;
const STRING_ID_RE = /^\s*(?:#|task_)?([1-9][0-9]{0,15})\s*$/;
const CONFLICT_RE = /^(<{7}|={7}|>{7})(?: |$)/m;

/**
 * Every task_*.json of the board, read leniently (raw JSON, edge ids written
 * as strings accepted) so doctor can diagnose and fix files the strict parser
 * refuses: names, non-files, conflicts, JSON, fields, ids as strings.
 */
export const taskFiles: DoctorCheck = {
  name: 'task files',
  codes: ['bad_file_name', 'not_a_file', 'merge_conflict', 'invalid_json', 'invalid_field', 'id_mismatch', 'string_id'],
  run(scan: Scan): void {
    const { store, findings, files } = scan;
    // One listing of the board folder, with each entry's type: a regular file is read without a stat of its
    // own (a stat per file was a sixth of doctor's time at 300,000 tasks). Symbolic links and entries whose
    // type the file system does not say are stat'ed as before. The other checks reuse the names (leftovers).
    const entries = readdirSync(store.dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    scan.boardNames = entries.map((e) => e.name);
    // join(store.dir, name) for a name from the listing (no separator in it), without a normalisation per file.
    const prefix = join(store.dir, '-').slice(0, -1);
    for (const entry of entries) {
      const name = entry.name;
      if (!/^task_.*\.json$/i.test(name)) continue;
      const path = prefix + name;
      const fileId = idFromFileName(name);
      if (fileId === undefined)
        findings.push({
          code: 'bad_file_name',
          file: path,
          message: `${name} is not a task file name (task_N.json, N a positive integer without leading zeros), so it is ignored`,
          fix: `rename it to task_N.json with N its "id", or remove it if it is a copy`,
          fixable: false,
        });
      let text: string | undefined;
      try {
        if (entry.isFile() || statSync(path).isFile()) text = readFileIfExists(path);
      } catch (error) {
        if (isErrnoException(error, 'ENOENT')) continue;
        // Made a folder since the listing.
        if (!isErrnoException(error, 'EISDIR')) throw error;
      }
      if (text === undefined) {
        // Gone since the listing (as a failed stat always was), or not a regular file.
        if (!existsSync(path)) continue;
        findings.push({
          code: 'not_a_file',
          file: path,
          ...(fileId !== undefined ? { task: fileId } : {}),
          message: `${name} is not a regular file (a folder or a device), so it is not a task and is skipped`,
          fix: `move it out of ${store.dir}`,
          fixable: false,
        });
        continue;
      }
      const settled = fileId !== undefined && scan.options.pending?.ids.includes(fileId);
      const file = scanTaskFile(name, path, fileId, text, findings, settled);
      files.push(file);
    }

    // The graph and the checks after it look at the files that hold valid tasks under their own name.
    for (const f of files) if (f.fileId !== undefined) scan.present.add(f.fileId);
    for (const f of files) {
      if (f.task && f.fileId === f.task.id) {
        scan.byId.set(f.task.id, f.task);
        scan.fileOf.set(f.task.id, f);
      }
    }
  },
};

/** One task file being scanned: what is known of it, and where its findings go. */
class FileScan {
  readonly file: ScannedFile;

  constructor(
    readonly text: string,
    private readonly findings: DoctorFinding[],
    file: Omit<ScannedFile, 'text' | 'stringIds'>,
  ) {
    // A literal, not a spread of `file`: one object shape for every file of the scan (as validateTask's tasks).
    this.file = { name: file.name, path: file.path, fileId: file.fileId, text, stringIds: false };
  }

  /** The findings pushed so far (of every file). */
  get found(): number {
    return this.findings.length;
  }

  /** A finding at `offset` of the text, or at a line and column already known. */
  push(code: FindingCode, offset: number | { line: number; column: number }, message: string, fix: string, fixable = false): void {
    const at = typeof offset === 'number' ? positionAt(this.text, offset) : offset;
    const { path, fileId } = this.file;
    this.findings.push({ code, file: path, line: at.line, column: at.column, ...(fileId !== undefined ? { task: fileId } : {}), message, fix, fixable });
  }

  /** Where the top-level key `key` is. */
  key(key: string): number {
    return findTopLevelKey(this.text, key);
  }
}

/** Reads one task file leniently and reports what is wrong with it. */
function scanTaskFile(name: string, path: string, fileId: number | undefined, text: string, findings: DoctorFinding[], inMerge = false): ScannedFile {
  const scan = new FileScan(text, findings, { name, path, fileId });
  const obj = parseLeniently(scan, inMerge);
  if (!obj) return scan.file;
  if (typeof obj.id === 'number' && Number.isSafeInteger(obj.id) && obj.id > 0) scan.file.rawId = obj.id;
  readStringIds(scan, obj);
  // The core validator first: what it accepts, the field checks below accept too (they look at a part of what it
  // does, to say more about it), so they run only on a file it refuses, which spares them on every good file.
  let refusal: unknown;
  try {
    scan.file.task = validateTask(obj, path, text);
    return scan.file;
  } catch (error) {
    refusal = error;
  }
  const before = scan.found;
  checkFields(scan, obj);
  checkEdges(scan, obj);
  checkMetadata(scan, obj);
  if (scan.found === before) {
    // The core validator knows best; anything it refuses that the checks above missed.
    const details = (refusal as { details?: { problem?: string } }).details;
    // At the field the validator names (its line and column), as every other reader reports it.
    const at = refusal instanceof CorruptTaskError ? { line: refusal.line, column: refusal.column } : 0;
    scan.push('invalid_field', at, details?.problem ?? String(refusal), 'edit the file by hand (see docs/format.md)');
  }
  return scan.file;
}

/** The file's JSON object (a copy), or undefined with the finding that says why there is none: too big, conflict markers, bad JSON, not an object. */
function parseLeniently(scan: FileScan, inMerge: boolean): Record<string, unknown> | undefined {
  const { text } = scan;
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most files are too short to need counting.
  if (text.length * 3 > MAX_TASK_FILE_BYTES && Buffer.byteLength(text) > MAX_TASK_FILE_BYTES) {
    scan.push(
      'invalid_field',
      0,
      `file is over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task`,
      'shorten the description or move data out of the task',
    );
    return undefined;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(stripBom(text));
  } catch {
    const marker = CONFLICT_RE.exec(text);
    if (marker) {
      scan.push(
        'merge_conflict',
        marker.index,
        'unresolved merge conflict (the file holds <<<<<<< ======= >>>>>>> lines)',
        // In the middle of a merge git could not finish, the board of both sides settles it (id-clashes.ts).
        inMerge
          ? 'tasks doctor --fix (merges the board of both sides), then finish the merge'
          : 'keep one side of each conflict, delete the marker lines, then git add the file',
        inMerge,
      );
    } else {
      const problem = findJsonSyntaxError(text);
      scan.push(
        'invalid_json',
        problem?.offset ?? 0,
        `invalid JSON: ${problem?.message ?? 'does not parse'}`,
        'fix the JSON by hand at this spot (tasks never rewrites a file that does not parse)',
      );
    }
    return undefined;
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    scan.push('invalid_field', 0, 'a task file must hold a JSON object', 'write the task as a JSON object (see docs/format.md)');
    return undefined;
  }
  return { ...(raw as Record<string, unknown>) };
}

/** Edge ids written as strings ("2", "task_2", "#2"): reported, and read as the numbers they mean. */
function readStringIds(scan: FileScan, obj: Record<string, unknown>): void {
  const { fileId } = scan.file;
  for (const key of EDGE_KEYS) {
    const value = obj[key];
    if (!Array.isArray(value)) continue;
    obj[key] = value.map((item, index) => {
      if (typeof item !== 'string') return item;
      const m = STRING_ID_RE.exec(item);
      if (!m) return item;
      const id = Number(m[1]);
      scan.file.stringIds = true;
      const fixable = fileId !== undefined;
      scan.push(
        'string_id',
        findArrayElement(scan.text, key, index),
        `"${key}" holds the id ${JSON.stringify(item)} as a string`,
        fixable ? `write it as ${id} (tasks doctor --fix)` : `write it as ${id}`,
        fixable,
      );
      return id;
    });
  }
}

/** The fields before the edges: id, subject, description, status, owner, activeForm. */
function checkFields(scan: FileScan, obj: Record<string, unknown>): void {
  const { fileId } = scan.file;
  const key = (k: string) => scan.key(k);
  const id = obj.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
    scan.push(
      'invalid_field',
      key('id'),
      `"id" must be a positive integer, got ${show(id)}`,
      fileId !== undefined ? `set "id" to ${fileId}` : 'set "id" to the number in the file name',
    );
  else if (fileId !== undefined && id !== fileId)
    scan.push(
      'id_mismatch',
      key('id'),
      `"id" is ${id} but the file name says ${fileId}`,
      `set "id" to ${fileId}, or rename the file to task_${id}.json if that is free`,
    );
  if (typeof obj.subject !== 'string' || obj.subject.trim() === '')
    scan.push('invalid_field', key('subject'), `"subject" must be a non-empty string, got ${show(obj.subject)}`, 'give the task a one-line "subject"');
  if (obj.description !== undefined && obj.description !== null && typeof obj.description !== 'string')
    scan.push(
      'invalid_field',
      key('description'),
      `"description" must be a string, got ${show(obj.description)}`,
      'make "description" a string ("" when empty)',
    );
  if (typeof obj.status !== 'string' || !(TASK_STATUSES as readonly string[]).includes(obj.status))
    scan.push('invalid_field', key('status'), `unknown status ${show(obj.status)}`, `set "status" to one of ${TASK_STATUSES.join(', ')}`);
  if (obj.owner !== undefined && obj.owner !== null && typeof obj.owner !== 'string')
    scan.push('invalid_field', key('owner'), `"owner" must be a string, got ${show(obj.owner)}`, 'make "owner" a string ("" when unclaimed)');
  if (obj.activeForm !== undefined && typeof obj.activeForm !== 'string')
    scan.push('invalid_field', key('activeForm'), `"activeForm" must be a string, got ${show(obj.activeForm)}`, 'make "activeForm" a string, or remove it');
}

/** The edges: arrays of task ids. */
function checkEdges(scan: FileScan, obj: Record<string, unknown>): void {
  for (const k of EDGE_KEYS) {
    const value = obj[k];
    if (value === undefined || value === null) continue;
    if (!Array.isArray(value)) {
      scan.push('invalid_field', scan.key(k), `"${k}" must be an array of task ids, got ${show(value)}`, `write "${k}" as a list of ids, e.g. [2, 3]`);
      continue;
    }
    value.forEach((item, index) => {
      if (typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1)
        scan.push(
          'invalid_field',
          findArrayElement(scan.text, k, index),
          `"${k}" holds ${show(item)}, which is not a task id`,
          `replace it with a task id (a positive integer) or remove it`,
        );
    });
  }
}

/** `metadata`: an object when present. */
function checkMetadata(scan: FileScan, obj: Record<string, unknown>): void {
  const metadata = obj.metadata;
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)))
    scan.push('invalid_field', scan.key('metadata'), `"metadata" must be an object, got ${show(metadata)}`, 'make "metadata" an object, or remove it');
}
