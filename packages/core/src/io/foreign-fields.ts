import { TasksError } from '../errors.js';
import { cloneJson, createRecord, setOwn } from '../format/format.js';
import { readFileIfExists } from '../fs/fsio.js';
import { findJsonSyntaxError, positionAt } from '../format/json-locate.js';

/**
 * Small readers shared by the import formats (board-import.ts and
 * import-tools.ts): what another tool wrote, read leniently where that is
 * harmless and refused with a file position where it is not.
 */

/** A file's text; `E_NOT_FOUND` when it is not there. */
export function readSourceText(file: string): string {
  const text = readFileIfExists(file);
  if (text === undefined) throw new TasksError('E_NOT_FOUND', `${file} does not exist`, { file });
  return text;
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
export function readJson(file: string): unknown {
  return parseSourceJson(readSourceText(file), file);
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
export function extras(obj: Record<string, unknown>, known: Set<string>): Record<string, unknown> {
  const out = createRecord();
  for (const key of Object.keys(obj)) if (!known.has(key)) setOwn(out, key, cloneJson(obj[key]));
  return out;
}
