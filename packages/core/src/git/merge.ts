import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { TASK_KEYS, normalizeIds, serializeTask, validateTask } from '../format/format.js';
import { LINK_FIELDS } from '../format/task-links.js';
import type { IdClash } from './id-clashes.js';

/**
 * The git merge driver for task files (`tasks merge-driver %O %A %B %P`):
 * a three-way merge field by field, so two branches that change different
 * fields of one task merge cleanly.
 *
 * - `blockedBy`, `blocks`, the soft links (`related`, `discoveredFrom`,
 *   `discovered`) and `labels` merge as sets: an item added on either side
 *   is kept, an item removed on either side is removed.
 * - `notes` merge as a union: every note of either side, once (the same
 *   at, owner and text), sorted by `at`; notes are only ever appended.
 * - Objects (`metadata`, unknown object fields) merge key by key, recursively.
 * - Any other field changed on one side takes that side; changed the same
 *   way on both, that value; changed differently on both, it is a conflict.
 *
 * A conflicted file keeps every cleanly merged field in canonical form and
 * puts git's familiar `<<<<<<< ours` / `=======` / `>>>>>>> theirs` lines
 * around each conflicted field, each side a complete `"field": value` line.
 * The file is then not valid JSON on purpose: no tool acts on a half-merged
 * task (they name the file, line and column), and deleting one side's lines
 * and the markers leaves a valid task.
 */

/** One field both sides changed differently. */
export interface MergeConflict {
  /** The field, dotted for nested keys (`metadata.priority`). */
  field: string;
  base: unknown;
  ours: unknown;
  theirs: unknown;
}

export interface MergeResult {
  /** The merged text (canonical, or with conflict markers). */
  text: string;
  conflicts: MergeConflict[];
  /** Why the merge was not field-level (a side is not a JSON object); the text is then git's line merge. */
  fallback?: string;
  /** Extra advice for people (e.g. both branches created the same id). */
  notes: string[];
}

type Json = unknown;
const ABSENT = undefined;
const EDGE_KEYS = new Set<string>(['blockedBy', 'blocks', ...LINK_FIELDS]);
const KNOWN = new Set<string>(TASK_KEYS);

/** How a top-level field merges when both sides changed it: as a set, as a union of notes, or as a value. */
type MergeKind = 'set' | 'union' | undefined;
function kindOf(key: string): MergeKind {
  return EDGE_KEYS.has(key) || key === 'labels' ? 'set' : key === 'notes' ? 'union' : undefined;
}

/** Every note of both sides once (by at, owner and text), sorted by `at`, stable. */
function unionNotes(ours: Json, theirs: Json): Json[] {
  const list = (v: Json): Json[] => (Array.isArray(v) ? v : []);
  const key = (n: Json) => (isObject(n) ? JSON.stringify([n.at, n.owner, n.text]) : JSON.stringify(n));
  const at = (n: Json) => (isObject(n) && typeof n.at === 'string' ? n.at : '');
  const seen = new Set<string>();
  const out: Json[] = [];
  for (const note of [...list(ours), ...list(theirs)]) {
    const k = key(note);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(note);
  }
  return out.sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : 0));
}

function isObject(value: Json): value is Record<string, Json> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function equal(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && equal(a[k], b[k]));
  }
  return false;
}

function parseObject(text: string): Record<string, Json> | undefined {
  try {
    const value = JSON.parse(text) as Json;
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Three-way set merge: x stays when both sides have it, or one side added it. */
function mergeSet(base: Json, ours: Json, theirs: Json): Json[] {
  const list = (v: Json): Json[] => (Array.isArray(v) ? v : []);
  const key = (v: Json) => JSON.stringify(v);
  const b = new Set(list(base).map(key));
  const o = new Set(list(ours).map(key));
  const t = new Set(list(theirs).map(key));
  const out: Json[] = [];
  const seen = new Set<string>();
  for (const item of [...list(ours), ...list(theirs)]) {
    const k = key(item);
    if (seen.has(k)) continue;
    seen.add(k);
    if ((o.has(k) && t.has(k)) || (o.has(k) && !b.has(k)) || (t.has(k) && !b.has(k))) out.push(item);
  }
  return out.every((x) => typeof x === 'number') ? normalizeIds(out as number[]) : out;
}

interface FieldMerge {
  value: Json;
  /** Present when the field conflicts: the whole field as each side would have it. */
  conflict?: { ours: Json; theirs: Json; details: MergeConflict[] };
}

/** Merges one value three ways; `path` names it in conflicts. */
function mergeValue(path: string, base: Json, ours: Json, theirs: Json, kind: MergeKind): FieldMerge {
  if (equal(ours, theirs)) return { value: ours };
  if (equal(ours, base)) return { value: theirs };
  if (equal(theirs, base)) return { value: ours };
  const setLike = (v: Json) => v === ABSENT || Array.isArray(v);
  if (kind === 'set' && setLike(base) && setLike(ours) && setLike(theirs)) return { value: mergeSet(base, ours, theirs) };
  if (kind === 'union' && setLike(ours) && setLike(theirs)) return { value: unionNotes(ours, theirs) };
  const objLike = (v: Json) => v === ABSENT || isObject(v);
  if (isObject(ours) && isObject(theirs) && objLike(base)) {
    const merged = mergeObject(path, (base ?? {}) as Record<string, Json>, ours, theirs, () => undefined);
    return merged.conflicts.length
      ? { value: merged.ours, conflict: { ours: merged.ours, theirs: merged.theirs, details: merged.conflicts } }
      : { value: merged.ours };
  }
  return { value: ours, conflict: { ours, theirs, details: [{ field: path, base, ours, theirs }] } };
}

/**
 * Merges two objects key by key. `ours`/`theirs` in the result are the merged
 * object with each conflict resolved to that side (they are equal when clean).
 */
function mergeObject(
  prefix: string,
  base: Record<string, Json>,
  ours: Record<string, Json>,
  theirs: Record<string, Json>,
  kindOfKey: (key: string) => MergeKind,
): { ours: Record<string, Json>; theirs: Record<string, Json>; conflicts: MergeConflict[]; conflictKeys: Set<string> } {
  const keys = [...new Set([...Object.keys(ours), ...Object.keys(theirs)])];
  const outOurs: Record<string, Json> = Object.create(null);
  const outTheirs: Record<string, Json> = Object.create(null);
  const conflicts: MergeConflict[] = [];
  const conflictKeys = new Set<string>();
  const set = (target: Record<string, Json>, key: string, value: Json) => {
    if (value !== ABSENT) Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  };
  for (const key of keys) {
    const own = (o: Record<string, Json>) => (Object.prototype.hasOwnProperty.call(o, key) ? o[key] : ABSENT);
    const m = mergeValue(prefix ? `${prefix}.${key}` : key, own(base), own(ours), own(theirs), kindOfKey(key));
    if (m.conflict) {
      conflictKeys.add(key);
      conflicts.push(...m.conflict.details);
      set(outOurs, key, m.conflict.ours);
      set(outTheirs, key, m.conflict.theirs);
    } else {
      set(outOurs, key, m.value);
      set(outTheirs, key, m.value);
    }
  }
  return { ours: outOurs, theirs: outTheirs, conflicts, conflictKeys };
}

/** Keys in canonical order: the known ones first, then the rest as they came. */
function orderKeys(keys: string[]): string[] {
  return [...TASK_KEYS.filter((k) => keys.includes(k)), ...keys.filter((k) => !KNOWN.has(k))];
}

/** Canonical text of a merged task; a task that does not validate is still written in canonical key order. */
function canonicalText(obj: Record<string, Json>, name: string): string {
  try {
    return serializeTask(validateTask(obj, name));
  } catch {
    const out: Record<string, Json> = Object.create(null);
    for (const key of orderKeys(Object.keys(obj))) out[key] = obj[key];
    return JSON.stringify(out, null, 2) + '\n';
  }
}

function fieldLines(key: string, value: Json, last: boolean): string[] {
  if (value === ABSENT) return [];
  const shown = EDGE_KEYS.has(key) && Array.isArray(value) && value.every((x) => typeof x === 'number') ? normalizeIds(value as number[]) : value;
  const text = `${JSON.stringify(key)}: ${JSON.stringify(shown, null, 2)}${last ? '' : ','}`;
  return text.split('\n').map((l) => `  ${l}`);
}

/** Three-way merge of task file texts. `base` is '' when both sides added the file. */
export function mergeTaskText(base: string, ours: string, theirs: string, name = 'task.json'): MergeResult {
  const o = parseObject(ours);
  const t = parseObject(theirs);
  const b = base.trim() === '' ? {} : parseObject(base);
  if (!o || !t || !b) {
    const which = !o ? 'ours' : !t ? 'theirs' : 'the common ancestor';
    const fallback = `${which} is not a JSON object, so the file was merged line by line`;
    const lines = mergeLines(base, ours, theirs);
    return {
      text: lines.text,
      conflicts: lines.conflicts ? [{ field: '(text)', base: undefined, ours: undefined, theirs: undefined }] : [],
      fallback,
      notes: [],
    };
  }
  const merged = mergeObject('', b, o, t, kindOf);
  const notes: string[] = [];
  if (base.trim() === '' && merged.conflicts.length)
    notes.push(
      `both branches created ${name} with different content (the same id was handed out twice); keep one here and create the other again with 'tasks create'`,
    );
  if (merged.conflicts.length === 0) return { text: canonicalText(merged.ours, name), conflicts: [], notes };

  const keys = orderKeys([...new Set([...Object.keys(merged.ours), ...Object.keys(merged.theirs)])]);
  const lines = ['{'];
  keys.forEach((key, i) => {
    const last = i === keys.length - 1;
    if (!merged.conflictKeys.has(key)) {
      lines.push(...fieldLines(key, merged.ours[key], last));
      return;
    }
    lines.push('<<<<<<< ours', ...fieldLines(key, merged.ours[key], last), '=======', ...fieldLines(key, merged.theirs[key], last), '>>>>>>> theirs');
  });
  lines.push('}');
  return { text: lines.join('\n') + '\n', conflicts: merged.conflicts, notes };
}

/**
 * Three-way merge of task file texts that never leaves a conflict marker:
 * each field both sides changed differently takes `prefer`'s value and is
 * reported (`tasks sync`: the remote's version was published first and wins).
 * Texts that are not JSON objects are refused with the side named.
 */
export function mergeTaskTextResolved(base: string, ours: string, theirs: string, prefer: 'ours' | 'theirs', name = 'task.json'): MergeResult {
  const o = parseObject(ours);
  const t = parseObject(theirs);
  const b = base.trim() === '' ? {} : parseObject(base);
  if (!o || !t || !b) throw new Error(`${name}: ${!o ? 'ours' : !t ? 'theirs' : 'the common ancestor'} is not a JSON object`);
  const merged = mergeObject('', b, o, t, kindOf);
  return { text: canonicalText(prefer === 'ours' ? merged.ours : merged.theirs, name), conflicts: merged.conflicts, notes: [] };
}

/** `.highwatermark` merges to the maximum of the three (ids are never reused). */
export function mergeHighWaterMark(base: string, ours: string, theirs: string): string {
  let highest = 0;
  for (const side of [base, ours, theirs]) for (const n of (side.match(/\d+/g) ?? []).map(Number)) if (Number.isSafeInteger(n) && n > highest) highest = n;
  return `${highest}\n`;
}

/** git's own line merge, for files that are not JSON objects. */
function mergeLines(base: string, ours: string, theirs: string): { text: string; conflicts: boolean } {
  const dir = mkdtempSync(join(tmpdir(), 'dotasks-merge-'));
  try {
    const files = ['ours', 'base', 'theirs'].map((n) => join(dir, n));
    writeFileSync(files[0], ours);
    writeFileSync(files[1], base);
    writeFileSync(files[2], theirs);
    const r = spawnSync('git', ['merge-file', '-p', '-L', 'ours', '-L', 'base', '-L', 'theirs', ...files], { encoding: 'utf8' });
    if (r.status === null || r.status < 0 || r.error) return { text: ours, conflicts: true };
    return { text: r.stdout, conflicts: r.status !== 0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface MergeDriverResult extends MergeResult {
  /** What kind of file %P named. */
  kind: 'task' | 'highwatermark' | 'other';
  path: string;
}

/**
 * Runs the merge driver on git's files: reads %O %A %B, writes the result to
 * %A (git's contract) and reports conflicts; `path` is %P, the file's path in
 * the repository, which says what kind of file it is.
 */
export function runMergeDriver(basePath: string, oursPath: string, theirsPath: string, path: string, clashes?: ClashBook): MergeDriverResult {
  const read = (p: string) => readFileSync(p, 'utf8');
  const base = read(basePath);
  const ours = read(oursPath);
  const theirs = read(theirsPath);
  const name = basename(path);
  let result: MergeDriverResult;
  const clash = /^task_.*\.json$/.test(name) ? idClashOf(base, ours, theirs, name, path, clashes) : undefined;
  if (clash) {
    // Two tasks under one id: this file keeps ours; the hooks (or tasks doctor --fix) bring theirs back under a new id.
    result = { text: ours, conflicts: [], notes: [clash], kind: 'task', path };
  } else if (name === '.highwatermark') {
    result = { text: mergeHighWaterMark(base, ours, theirs), conflicts: [], notes: [], kind: 'highwatermark', path };
  } else if (/^task_.*\.json$/.test(name)) {
    result = { ...mergeTaskText(base, ours, theirs, name), kind: 'task', path };
  } else {
    const lines = mergeLines(base, ours, theirs);
    result = {
      text: lines.text,
      conflicts: lines.conflicts ? [{ field: '(text)', base: undefined, ours: undefined, theirs: undefined }] : [],
      fallback: 'not a task file, so it was merged line by line',
      notes: [],
      kind: 'other',
      path,
    };
  }
  writeFileSync(oursPath, result.text);
  return result;
}

/** Where the driver keeps the operation's id clashes (id-clashes.ts): read and written through the caller. */
export interface ClashBook {
  add(clash: IdClash): void;
}

/**
 * Two tasks under one id (docs/protocol.md, "Ids across branches"), which
 * one file cannot merge: created on both sides (no base) under different
 * subjects; or the task of the base is another task on one side than on
 * the other (exactly one side changed its subject: an earlier merge may have
 * moved it to a free id there, or a person renamed it). The file keeps ours,
 * and the record sends the whole board to the hooks (or `tasks doctor
 * --fix`), which merge it with both sides' trees in view: that tells a moved
 * task from a renamed one. Returns what to tell the user.
 */
function idClashOf(base: string, ours: string, theirs: string, name: string, path: string, clashes: ClashBook | undefined): string | undefined {
  if (!clashes) return undefined; // no record to hand the board on with: merge the file as it is
  const o = parseObject(ours);
  const t = parseObject(theirs);
  if (!o || !t || typeof o.subject !== 'string' || typeof t.subject !== 'string') return undefined;
  const id = typeof o.id === 'number' ? o.id : Number(/\d+/.exec(name)?.[0]);
  const same = (a: string, b: string) => a.trim() === b.trim();
  if (base.trim() === '') {
    if (same(o.subject, t.subject)) return undefined; // one task on both sides: merged field by field
    clashes.add({ path, id, oursSubject: o.subject, theirsSubject: t.subject, theirs, base: '', kind: 'created' });
    return `both sides created #${id}, as two different tasks (${JSON.stringify(o.subject)} here, ${JSON.stringify(t.subject)} there): this one keeps #${id}, the other moves to a free id when the merge is done (by the hooks of tasks init --git, else run 'tasks doctor --fix')`;
  }
  const b = parseObject(base);
  if (!b || typeof b.subject !== 'string' || same(o.subject, b.subject) === same(t.subject, b.subject)) return undefined;
  clashes.add({ path, id, oursSubject: o.subject, theirsSubject: t.subject, theirs, base, kind: 'moved' });
  return `#${id} is ${JSON.stringify(o.subject)} here and ${JSON.stringify(t.subject)} there (a rename, or a task an earlier merge moved to another id): this file keeps this side's until the merge is done, then the board of both sides settles it (by the hooks of tasks init --git, else run 'tasks doctor --fix')`;
}
