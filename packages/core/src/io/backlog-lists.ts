/**
 * The reader for Backlog.md's task files (`backlog/tasks/*.md`: YAML front
 * matter, and the sections its editor marks), one of the readers of the
 * tools people move from (import-tools.ts). It gives a ForeignList that
 * planImport renumbers onto the board (board-import.ts); fields the format
 * has no place for are kept in `metadata.backlog`.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TasksError } from '../errors.js';
import { cloneJson, setOwn, type TaskStatus } from '../format/format.js';
import type { ForeignList, ForeignTask } from './import-shapes.js';
import { checkSourceNesting, extras, isFolderIn, isObject, readSourceText, subjectOf, text } from './foreign-fields.js';
import { isDirectory, keepSourceFields, plural, withPlanning } from './import-tools.js';

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
