import { lstatSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { TASK_KEYS, TASK_STATUSES, cloneJson, createRecord, setOwn, type TaskStatus } from '../format/format.js';
import { planningFields, type ForeignList, type ForeignTask } from './import-shapes.js';
import { checkSourceNesting, extras, idList, isFolderIn, isObject, parseSourceJson, readSourceText, subjectOf, text } from './foreign-fields.js';

/**
 * Readers for the task lists of tools people move from: beads'
 * `.beads/issues.jsonl` and our own `tasks export --format json` here,
 * Backlog.md's `backlog/tasks/*.md` in backlog-lists.ts, with the steps they
 * share. Each gives a ForeignList that planImport renumbers onto the board
 * (board-import.ts); fields the format has no place for are kept in
 * `metadata.<tool>`.
 */

/** Adds a task's priority and labels where planningFields says they go. */
export function withPlanning(task: ForeignTask, priority: number | undefined, labels: readonly string[]): ForeignTask {
  const planning = planningFields(priority, labels);
  if (Object.keys(planning.fields).length) task.fields = { ...task.fields, ...planning.fields };
  if (Object.keys(planning.metadata).length) {
    const metadata = task.metadata ?? createRecord();
    for (const [k, v] of Object.entries(planning.metadata)) setOwn(metadata, k, v);
    task.metadata = metadata;
  }
  return task;
}

/** `metadata.<tool>`: the source's own fields, when there are any. */
export function keepSourceFields(task: ForeignTask, tool: string, fields: Record<string, unknown>): void {
  if (Object.keys(fields).length === 0) return;
  const metadata = task.metadata ?? createRecord();
  setOwn(metadata, tool, fields);
  task.metadata = metadata;
}

/** `1 task`, `2 tasks`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Whether `path` is a folder; false when nothing is there. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return false;
    throw error;
  }
}
// --------------------------------------------------------------------- beads

const BEADS_STATUS: Record<string, TaskStatus> = { open: 'pending', blocked: 'pending', in_progress: 'in_progress', closed: 'completed' };
const BEADS_KEYS = new Set([
  'id',
  'title',
  'description',
  'design',
  'acceptance_criteria',
  'notes',
  'status',
  'priority',
  'labels',
  'assignee',
  'dependencies',
]);
/** beads' long text fields besides the description, appended to it as sections so the task reads whole. */
const BEADS_SECTIONS: [string, string][] = [
  ['design', 'Design'],
  ['acceptance_criteria', 'Acceptance Criteria'],
  ['notes', 'Notes'],
];

/** The issues file of a beads project given the file, the project root or its `.beads/` folder; `found` when the import looked for it. */
function beadsFile(path: string): { file: string; found: boolean } {
  if (!isDirectory(path)) return { file: path, found: false };
  // lstat: a link where issues.jsonl belongs is found, then refused when read.
  const exists = (file: string) => lstatSync(file, { throwIfNoEntry: false }) !== undefined;
  if (isFolderIn(path, '.beads') && exists(join(path, '.beads', 'issues.jsonl'))) return { file: join(path, '.beads', 'issues.jsonl'), found: true };
  if (exists(join(path, 'issues.jsonl'))) return { file: join(path, 'issues.jsonl'), found: true };
  throw new TasksError('E_NOT_FOUND', `${path} holds no .beads/issues.jsonl; point 'tasks import beads' at the issues.jsonl file`, { path });
}

/**
 * Reads beads' `issues.jsonl`, one issue a line (`id` like `bd-a1b2`, title,
 * description, status open/in_progress/blocked/closed, priority 0–4, labels,
 * assignee, dependencies `{issue_id, depends_on_id, type}`). A `blocks`
 * dependency is an edge (the issue waits for `depends_on_id`), a
 * `parent-child` one its parent (the epic it belongs to); `related` and
 * `discovered-from` become the soft links of the same names (import-links.ts);
 * the other types are kept in `metadata.links`. Tombstones (deleted issues)
 * are left out.
 */
export function readBeadsIssues(path: string): ForeignList {
  const { file, found } = beadsFile(path);
  const lines = readSourceText(file, { inFolder: found }).split('\n');
  const warnings: string[] = [];
  const tasks: ForeignTask[] = [];
  const deps: { task: ForeignTask; dependent: string; on: string; type: string }[] = [];
  let tombstones = 0;
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    const raw = parseSourceJson(line, file, index + 1);
    const where = `${file}:${index + 1}`;
    if (!isObject(raw)) throw new TasksError('E_INVALID', `${where}: an issue must be a JSON object; nothing was imported`, { file });
    checkSourceNesting(raw, where);
    if (raw.status === 'tombstone') {
      tombstones++;
      return;
    }
    const sourceId = text(raw.id).trim() || `line ${index + 1}`;
    const sections = BEADS_SECTIONS.filter(([key]) => text(raw[key]).trim()).map(([key, title]) => `## ${title}\n\n${text(raw[key]).trim()}`);
    const description = [text(raw.description).trim(), ...sections].filter(Boolean).join('\n\n');
    let status = BEADS_STATUS[text(raw.status)];
    if (status === undefined) {
      warnings.push(`${sourceId}: status ${JSON.stringify(raw.status)} is not open, in_progress, blocked or closed; imported as pending`);
      status = 'pending';
    }
    let priority: number | undefined;
    if (Number.isInteger(raw.priority) && (raw.priority as number) >= 0 && (raw.priority as number) <= 4) priority = raw.priority as number;
    // A missing priority is left out, not guessed: bd writes every priority, but some of its merges dropped P0 (docs/decisions.md, "Imports from other tools").
    else if (raw.priority !== undefined && raw.priority !== null) warnings.push(`${sourceId}: priority ${JSON.stringify(raw.priority)} is not 0-4; left out`);
    const task: ForeignTask = {
      sourceId,
      subject: subjectOf(raw.title, description, sourceId, warnings),
      description,
      status,
      owner: text(raw.assignee).trim(),
      blockedBy: [],
      blocks: [],
      extra: {},
    };
    withPlanning(task, priority, idList(raw.labels).filter(Boolean));
    keepSourceFields(task, 'beads', extras(raw, BEADS_KEYS));
    if (raw.dependencies !== undefined && raw.dependencies !== null && !Array.isArray(raw.dependencies))
      throw new TasksError('E_INVALID', `${where}: ${sourceId}'s dependencies must be a list; nothing was imported`, { file });
    for (const d of (raw.dependencies as unknown[] | undefined) ?? []) {
      if (!isObject(d) || !text(d.depends_on_id).trim()) {
        warnings.push(`${sourceId}: skipped a dependency without depends_on_id`);
        continue;
      }
      // bd's own default type is blocks.
      deps.push({ task, dependent: text(d.issue_id).trim() || sourceId, on: text(d.depends_on_id).trim(), type: text(d.type).trim() || 'blocks' });
    }
    tasks.push(task);
  });
  const byId = new Map(tasks.map((t) => [t.sourceId, t]));
  for (const d of deps) {
    const dependent = byId.get(d.dependent) ?? d.task;
    if (d.type === 'blocks') dependent.blockedBy.push(d.on);
    // The epic an issue belongs to is its parent; a second one (bd allows it) stays a link.
    else if (d.type === 'parent-child' && dependent.parent === undefined) dependent.parent = d.on;
    else (dependent.links ??= []).push({ type: d.type, id: d.on });
  }
  if (tasks.length === 0) throw new TasksError('E_NOT_FOUND', `${file} holds no issues${tombstones ? ' but tombstones' : ''}; nothing to import`, { file });
  return { source: file, tool: 'beads', tasks, warnings, notes: tombstones ? [`left out ${plural(tombstones, 'tombstone')} (deleted issues)`] : [] };
}

// ------------------------------------------------------------------- dotasks

/** What `tasks export --format json` writes per task: the task's own keys, and `ready` and `openBlockers`, computed on read and dropped. */
const VIEW_KEYS = new Set<string>([...TASK_KEYS, 'ready', 'openBlockers']);

/** `notes` and `paths` of a view, as fields when they have the format's shape; otherwise kept in metadata, with a warning (nothing is dropped). */
function carryListFields(view: Record<string, unknown>, task: ForeignTask, where: string, warnings: string[]): void {
  const isNote = (n: unknown) => isObject(n) && typeof n.at === 'string' && typeof n.owner === 'string' && typeof n.text === 'string';
  const checks: [string, (v: unknown) => boolean][] = [
    ['notes', (v) => Array.isArray(v) && v.every(isNote)],
    ['paths', (v) => Array.isArray(v) && v.every((p) => typeof p === 'string' && p.trim() !== '')],
  ];
  for (const [key, ok] of checks) {
    const value = view[key];
    if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    if (ok(value)) {
      task.fields = { ...task.fields, [key]: cloneJson(value) };
      continue;
    }
    warnings.push(`${where}: "${key}" is not in the format's shape; kept as metadata.${key}`);
    const metadata = task.metadata ?? createRecord();
    setOwn(metadata, key, cloneJson(value));
    task.metadata = metadata;
  }
}

/** An exported view's soft links (docs/protocol.md, "Links") as relations to the export's ids, resolved by the import like edges. */
function exportedLinks(view: Record<string, unknown>): { type: string; id: string }[] {
  const kinds: [string, string][] = [
    ['related', 'related'],
    ['discoveredFrom', 'discovered-from'],
    ['discovered', 'discovered'],
  ];
  return kinds.flatMap(([key, type]) => idList(view[key]).map((id) => ({ type, id })));
}

/** The task views in an export: `{"tasks": [...]}` (json), an array, or one view a line (jsonl). */
function exportedViews(file: string, source: string): unknown[] {
  let whole: unknown;
  try {
    whole = JSON.parse(source);
  } catch {
    const lines = source.split('\n');
    // Not one JSON value: one view a line, or a broken json export (then the first line says where).
    if (lines.filter((l) => l.trim()).length < 2) parseSourceJson(source, file);
    return lines.flatMap((line, i) => (line.trim() ? [parseSourceJson(line, file, i + 1)] : []));
  }
  if (Array.isArray(whole)) return whole;
  if (isObject(whole) && Array.isArray(whole.tasks)) return whole.tasks;
  if (isObject(whole) && 'subject' in whole) return [whole];
  throw new TasksError('E_INVALID', `${file}: expected the output of 'tasks export' ({"tasks": [...]}); nothing was imported`, { file });
}

/**
 * Reads our own `tasks export --format json` (or `jsonl`) output, so a board
 * moves or round-trips: export, import elsewhere, export again gives the same
 * tasks under new ids.
 */
export function readDotasksExport(file: string): ForeignList {
  const views = exportedViews(file, readSourceText(file));
  const warnings: string[] = [];
  const tasks: ForeignTask[] = views.map((view, index) => {
    const where = `tasks[${index}]`;
    if (!isObject(view)) throw new TasksError('E_INVALID', `${file}: ${where} is not an object; nothing was imported`, { file });
    checkSourceNesting(view, `${file}: ${where}`);
    const description = text(view.description);
    let status: TaskStatus = 'pending';
    if (typeof view.status === 'string' && (TASK_STATUSES as readonly string[]).includes(view.status)) status = view.status as TaskStatus;
    else warnings.push(`${where}: unknown status ${JSON.stringify(view.status)}, imported as pending`);
    const task: ForeignTask = {
      sourceId: view.id === undefined || view.id === null ? `#${index + 1}` : String(view.id),
      subject: subjectOf(view.subject, description, where, warnings),
      description,
      status,
      owner: text(view.owner),
      blockedBy: idList(view.blockedBy),
      blocks: idList(view.blocks),
      extra: extras(view, VIEW_KEYS),
    };
    if (typeof view.activeForm === 'string' && view.activeForm !== '') task.activeForm = view.activeForm;
    if (typeof view.parent === 'number' || typeof view.parent === 'string') task.parent = String(view.parent);
    if (isObject(view.metadata) && Object.keys(view.metadata).length) task.metadata = cloneJson(view.metadata) as Record<string, unknown>;
    // An export made once the format has priority and labels carries them as fields, as they are: planImport
    // applies the limits of create to them (a priority of 99 is refused, not written for every reader to refuse).
    const planning = createRecord();
    if (view.priority !== undefined && view.priority !== null) planning.priority = view.priority;
    if (view.labels !== undefined && view.labels !== null) planning.labels = Array.isArray(view.labels) ? cloneJson(view.labels) : [view.labels];
    // The check before done and the result, as the export has them: planImport holds them to the limits of create and done.
    for (const key of ['verify', 'result'] as const) if (typeof view[key] === 'string' && view[key].trim() !== '') planning[key] = view[key];
    // And its review, requirement and state (docs/protocol.md, "Review"); planImport reads it as a task file would.
    if (view.review !== undefined && view.review !== null) planning.review = view.review;
    if (Object.keys(planning).length) task.fields = { ...task.fields, ...planning };
    carryListFields(view, task, where, warnings);
    const links = exportedLinks(view);
    if (links.length) task.links = links;
    return task;
  });
  if (tasks.length === 0) throw new TasksError('E_NOT_FOUND', `${file} holds no tasks; nothing to import`, { file });
  return { source: file, tool: 'dotasks', tasks, warnings };
}
