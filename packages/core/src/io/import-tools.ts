import { lstatSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { TASK_KEYS, TASK_STATUSES, cloneJson, createRecord, setOwn, type TaskStatus } from '../format/format.js';
import { planningFields, type ForeignList, type ForeignTask } from './import-shapes.js';
import { checkSourceNesting, extras, idList, isFolderIn, isObject, parseSourceJson, readSourceText, subjectOf, text } from './foreign-fields.js';

/**
 * Readers for the task lists of tools people move from: Backlog.md's
 * `backlog/tasks/*.md`, beads' `.beads/issues.jsonl`, and our own
 * `tasks export --format json`. Each gives a ForeignList that planImport
 * renumbers onto the board (board-import.ts); fields the format has no place
 * for are kept in `metadata.<tool>`.
 */

/** Adds a task's priority and labels where planningFields says they go. */
function withPlanning(task: ForeignTask, priority: number | undefined, labels: readonly string[]): ForeignTask {
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
function keepSourceFields(task: ForeignTask, tool: string, fields: Record<string, unknown>): void {
  if (Object.keys(fields).length === 0) return;
  const metadata = task.metadata ?? createRecord();
  setOwn(metadata, tool, fields);
  task.metadata = metadata;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return false;
    throw error;
  }
}

// ---------------------------------------------------------------- Backlog.md

const BACKLOG_STATUS: Record<string, TaskStatus> = { 'to do': 'pending', todo: 'pending', 'in progress': 'in_progress', done: 'completed' };
/** The YAML aliases a Backlog.md task's front matter may expand (the yaml library's maxAliasCount, 100 by default). */
const MAX_YAML_ALIASES = 10;
const BACKLOG_PRIORITY: Record<string, number> = { high: 1, medium: 2, low: 3 };
const BACKLOG_KEYS = new Set(['id', 'title', 'status', 'assignee', 'labels', 'priority', 'dependencies', 'parent_task_id']);
/** Folders beside `tasks/` that hold tasks the import leaves out, and why. */
const BACKLOG_SKIPPED: [string, string][] = [
  ['drafts', 'drafts'],
  ['completed', 'completed and cleaned up'],
  [join('archive', 'tasks'), 'archived'],
  [join('archive', 'drafts'), 'archived drafts'],
];

/** The `tasks/` folder of a Backlog.md project given its root, its `backlog/` folder or the folder itself. */
function backlogTasksFolder(dir: string): string {
  if (isFolderIn(dir, 'backlog', 'tasks')) return join(dir, 'backlog', 'tasks');
  if (isFolderIn(dir, 'tasks')) return join(dir, 'tasks');
  if (isDirectory(dir)) return dir;
  throw new TasksError('E_NOT_FOUND', `${dir} is not a folder; point 'tasks import backlog' at a Backlog.md project, its backlog/ folder or backlog/tasks/`, {
    dir,
  });
}

function markdownFiles(dir: string): string[] {
  return isDirectory(dir) ? readdirSync(dir).filter((n) => n.endsWith('.md') && !n.startsWith('.')) : [];
}

/**
 * Backlog.md writes `assignee: [@ann]` and `reporter: @ann`, which YAML does
 * not allow (`@` cannot start a plain value); Backlog.md's own reader quotes
 * those values before parsing, and so do we, on those two keys only.
 */
function quoteHandles(frontMatter: string): string {
  let inList = false;
  return frontMatter
    .split(/\r?\n/)
    .map((line) => {
      const m = /^(\s*(?:assignee|reporter):\s*)(.*)$/.exec(line);
      if (m) {
        inList = m[2].trim() === '';
        const value = m[2].trim();
        const flow = /^\[(.*)\]$/.exec(value);
        if (flow)
          return `${m[1]}[${flow[1]
            .split(',')
            .map((v) => quoteHandle(v.trim()))
            .filter(Boolean)
            .join(', ')}]`;
        return `${m[1]}${quoteHandle(value)}`;
      }
      if (inList) {
        const item = /^(\s*-\s*)(@.*)$/.exec(line);
        if (item) return `${item[1]}${quoteHandle(item[2].trim())}`;
        if (!/^\s*-/.test(line)) inList = false;
      }
      return line;
    })
    .join('\n');
}

function quoteHandle(value: string): string {
  return value.startsWith('@') ? JSON.stringify(value) : value;
}

/** Backlog.md's section markers (`<!-- SECTION:DESCRIPTION:BEGIN -->`, `<!-- AC:END -->`): bookkeeping of its editor. */
const MARKER = /^[ \t]*<!--\s*[A-Z_]+(?::[A-Z_]+)*:(?:BEGIN|END)\s*-->[ \t]*$/;

/** The Description section's text first, then the rest of the body as it was (acceptance criteria, plan, notes). */
function backlogDescription(body: string): string {
  const lines = body
    .replace(/\r\n/g, '\n')
    .split('\n')
    .filter((l) => !MARKER.test(l));
  const start = lines.findIndex((l) => /^##\s+Description\s*$/i.test(l));
  let description = '';
  let rest = lines;
  if (start !== -1) {
    let end = lines.findIndex((l, i) => i > start && /^##\s/.test(l));
    if (end === -1) end = lines.length;
    description = lines
      .slice(start + 1, end)
      .join('\n')
      .trim();
    rest = [...lines.slice(0, start), ...lines.slice(end)];
  }
  return [description, rest.join('\n').trim()]
    .filter(Boolean)
    .join('\n\n')
    .replace(/\n{3,}/g, '\n\n');
}

/** `task-12.3` → [12, 3], for ordering the way Backlog.md lists them. */
function idNumbers(id: string): number[] {
  return /(\d+(?:\.\d+)*)\s*$/.exec(id)?.[1].split('.').map(Number) ?? [];
}

function compareIds(a: string, b: string): number {
  const x = idNumbers(a);
  const y = idNumbers(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    if (x[i] === undefined || y[i] === undefined) return x[i] === undefined ? -1 : 1;
    if (x[i] !== y[i]) return x[i] - y[i];
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Resolves the ways Backlog.md ids are written (`task-3`, `TASK-3`, `3`, and a
 * project whose prefix changed: `back-3` for `task-3`) to the ids of the tasks
 * read; an id that matches none, or several, is left as written.
 */
function backlogIdResolver(ids: string[]): (id: string) => string {
  const exact = new Map<string, string>();
  const bare = new Map<string, string | null>();
  const bareOf = (id: string) =>
    id
      .trim()
      .toLowerCase()
      .replace(/^[a-z][a-z0-9_]*-/, '');
  for (const id of ids) {
    exact.set(id.trim().toLowerCase(), id);
    const key = bareOf(id);
    bare.set(key, bare.has(key) ? null : id);
  }
  return (id) => exact.get(id.trim().toLowerCase()) ?? bare.get(bareOf(id)) ?? id;
}

function stringList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined && String(v).trim() !== '').map((v) => String(v).trim());
  return value === null || value === undefined || String(value).trim() === '' ? [] : [String(value).trim()];
}

/**
 * Reads a Backlog.md project's `backlog/tasks/*.md` (YAML front matter:
 * id, title, status, assignee, labels, priority, dependencies, …; the body's
 * Description section). `drafts/`, `completed/` and `archive/` are left out,
 * with a note. Loads the YAML parser only when called.
 */
export async function readBacklogTasks(dir: string): Promise<ForeignList> {
  const folder = backlogTasksFolder(dir);
  const names = markdownFiles(folder);
  if (names.length === 0)
    throw new TasksError(
      'E_NOT_FOUND',
      `${folder} holds no .md task files; point 'tasks import backlog' at a Backlog.md project or its backlog/tasks/ folder`,
      { dir },
    );
  const { parse, YAMLParseError } = await import('yaml');
  const warnings: string[] = [];
  const notes: string[] = [];
  if (basename(folder) === 'tasks') {
    for (const [sub, why] of BACKLOG_SKIPPED) {
      const count = markdownFiles(join(dirname(folder), sub)).length;
      if (count) notes.push(`left out ${plural(count, 'task')} in ${join(dirname(folder), sub)} (${why}); only ${folder} is imported`);
    }
  }
  const yaml = { parse, YAMLParseError };
  const read: BacklogRead[] = [];
  for (const name of names) {
    const one = readBacklogFile(folder, name, yaml, warnings);
    if (one) read.push(one);
  }
  read.sort((a, b) => compareIds(a.task.sourceId, b.task.sourceId));
  const resolve = backlogIdResolver(read.map((r) => r.task.sourceId));
  for (const r of read) {
    r.task.blockedBy = r.dependencies.map(resolve);
    if (r.parent) r.task.parent = resolve(r.parent);
  }
  if (read.length === 0) throw new TasksError('E_NOT_FOUND', `${folder} holds no Backlog.md tasks; nothing to import`, { dir });
  return { source: folder, tool: 'backlog', tasks: read.map((r) => r.task), warnings, notes };
}

/** A Backlog.md task read, with the ids it names as written (resolved once every task is read). */
interface BacklogRead {
  task: ForeignTask;
  dependencies: string[];
  parent?: string;
}

type YamlModule = Pick<typeof import('yaml'), 'parse' | 'YAMLParseError'>;

/** One `backlog/tasks/*.md` file as a task; undefined (with a warning) when it has no front matter. */
function readBacklogFile(folder: string, name: string, yaml: YamlModule, warnings: string[]): BacklogRead | undefined {
  const file = join(folder, name);
  const source = readSourceText(file, { inFolder: true, oneTask: true });
  const m = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(source);
  if (!m) {
    warnings.push(`${name}: no front matter, not a Backlog.md task; skipped`);
    return undefined;
  }
  const front = backlogFrontMatter(file, m[1], yaml);
  const fromName = /^(.+?) - (.+)\.md$/.exec(name);
  const sourceId = text(front.id).trim() || fromName?.[1] || name.replace(/\.md$/, '');
  const description = backlogDescription(source.slice(m[0].length));
  const statusText = text(front.status).trim();
  let status = BACKLOG_STATUS[statusText.toLowerCase()];
  if (status === undefined) {
    warnings.push(`${sourceId}: status ${JSON.stringify(statusText)} is not To Do, In Progress or Done; imported as pending`);
    status = 'pending';
  }
  const assignees = stringList(front.assignee).map((a) => a.replace(/^@/, ''));
  if (assignees.length > 1)
    warnings.push(`${sourceId}: ${assignees.length} assignees; the first, ${assignees[0]}, is the owner, all are kept in metadata.backlog.assignee`);
  const priorityText = text(front.priority).trim().toLowerCase();
  const priority = BACKLOG_PRIORITY[priorityText];
  if (priorityText && priority === undefined) warnings.push(`${sourceId}: priority ${JSON.stringify(front.priority)} is not high, medium or low; left out`);
  const task: ForeignTask = {
    sourceId,
    subject: subjectOf(front.title ?? fromName?.[2].replace(/-/g, ' '), description, sourceId, warnings),
    description,
    status,
    owner: assignees[0] ?? '',
    blockedBy: [],
    blocks: [],
    extra: {},
  };
  withPlanning(task, priority, stringList(front.labels));
  const kept = extras(front, BACKLOG_KEYS);
  if (assignees.length > 1) setOwn(kept, 'assignee', assignees);
  keepSourceFields(task, 'backlog', cloneJson(kept) as Record<string, unknown>);
  const parent = text(front.parent_task_id).trim();
  return { task, dependencies: stringList(front.dependencies), ...(parent ? { parent } : {}) };
}

/** A task file's YAML front matter as a mapping; a file that holds anything else stops the import, naming the spot. */
function backlogFrontMatter(file: string, yamlText: string, { parse, YAMLParseError }: YamlModule): Record<string, unknown> {
  let front: unknown;
  try {
    // Backlog.md writes no aliases; a few written by hand are fine, an alias bomb is not.
    front = parse(quoteHandles(yamlText), { maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    // Aliases are resolved after parsing: too many, or one without its anchor, throw a ReferenceError.
    if (error instanceof ReferenceError) {
      const problem = /excessive alias count/i.test(error.message)
        ? `its aliases (*name) expand too far (the limit is ${MAX_YAML_ALIASES}); write the values out`
        : error.message.split('\n')[0];
      throw new TasksError('E_INVALID', `${file}: invalid YAML front matter: ${problem}; nothing was imported`, { file }, { cause: error });
    }
    if (!(error instanceof YAMLParseError)) throw error;
    // The front matter starts on line 2, after the opening `---`.
    const at = error.linePos?.[0];
    const where = at ? `${file}:${at.line + 1}:${at.col}` : file;
    throw new TasksError('E_INVALID', `${where}: invalid YAML front matter: ${error.message.split('\n')[0]}; nothing was imported`, { file }, { cause: error });
  }
  if (front === null || front === undefined) front = {};
  if (!isObject(front)) throw new TasksError('E_INVALID', `${file}: the front matter must be a YAML mapping; nothing was imported`, { file });
  checkSourceNesting(front, file);
  return front;
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
