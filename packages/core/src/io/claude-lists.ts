/**
 * Readers of Claude Code's task lists: a folder of `N.json` files, and a task
 * store file (one JSON list), as ForeignLists for board-import.ts.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { TASK_STATUSES, cloneJson, type TaskStatus } from '../format/format.js';
import { checkSourceNesting, extras, idList, isObject, readJson, subjectOf as subject, text } from './foreign-fields.js';
import type { ForeignList, ForeignTask } from './import-shapes.js';

function status(value: unknown, where: string, warnings: string[]): TaskStatus {
  if (typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value)) return value as TaskStatus;
  warnings.push(`${where}: unknown status ${JSON.stringify(value)}, imported as pending`);
  return 'pending';
}

/** How one kind of list names a task's fields: the two spell two of them differently, and a store's task without a status is pending. */
interface ListFields {
  activeForm: string;
  blockedBy: string;
  /** The keys it knows; the others are kept (extras). */
  known: ReadonlySet<string>;
  /** The status of a task that gives none (or null); without it, such a task is warned about. */
  missingStatus?: TaskStatus;
}

const CLAUDE_FIELDS: ListFields = {
  activeForm: 'activeForm',
  blockedBy: 'blockedBy',
  known: new Set(['id', 'subject', 'description', 'status', 'owner', 'activeForm', 'blockedBy', 'blocks', 'metadata']),
};

const STORE_FIELDS: ListFields = {
  activeForm: 'active_form',
  blockedBy: 'blocked_by',
  known: new Set(['id', 'subject', 'description', 'status', 'owner', 'active_form', 'blocked_by', 'blocks', 'metadata']),
  missingStatus: 'pending',
};

/** A task of either list, its fields read by the names that list gives them; `where` names it in warnings. */
function listTask(raw: Record<string, unknown>, sourceId: string, where: string, fields: ListFields, warnings: string[]): ForeignTask {
  const description = text(raw.description);
  const task: ForeignTask = {
    sourceId,
    subject: subject(raw.subject, description, where, warnings),
    description,
    status: status(fields.missingStatus === undefined ? raw.status : (raw.status ?? fields.missingStatus), where, warnings),
    owner: text(raw.owner),
    blockedBy: idList(raw[fields.blockedBy]),
    blocks: idList(raw.blocks),
    extra: extras(raw, fields.known),
  };
  const activeForm = raw[fields.activeForm];
  if (typeof activeForm === 'string' && activeForm !== '') task.activeForm = activeForm;
  if (isObject(raw.metadata)) task.metadata = cloneJson(raw.metadata) as Record<string, unknown>;
  return task;
}

/**
 * Reads a Claude Code task list: a folder of `N.json` files (`id` a string,
 * `blocks`/`blockedBy` string ids, `activeForm`, `owner`, `metadata`), as in
 * `~/.claude/tasks/<list-id>/`. `.lock` and `.highwatermark` are ignored.
 */
export function readClaudeTaskList(dir: string): ForeignList {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR'))
      throw new TasksError('E_NOT_FOUND', `${dir} is not a folder; point 'tasks import claude' at a Claude Code task list folder (~/.claude/tasks/<list-id>)`, {
        dir,
      });
    throw error;
  }
  const warnings: string[] = [];
  const files = names.filter((n) => /^\d+\.json$/.test(n)).sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
  if (files.length === 0) throw new TasksError('E_NOT_FOUND', `${dir} holds no N.json task files; nothing to import`, { dir });
  const tasks: ForeignTask[] = [];
  for (const name of files) {
    const file = join(dir, name);
    const raw = readJson(file, { inFolder: true, oneTask: true });
    if (!isObject(raw)) throw new TasksError('E_INVALID', `${file}: a task must be a JSON object; nothing was imported`, { file });
    checkSourceNesting(raw, file);
    const sourceId = raw.id === undefined ? name.replace(/\.json$/, '') : String(raw.id);
    tasks.push(listTask(raw, sourceId, name, CLAUDE_FIELDS, warnings));
  }
  return { source: dir, tool: 'claude', tasks, warnings };
}

/**
 * Reads a single-file task store's `tasks.json` (`{"next_id", "tasks": [{"id": "task_1",
 * "active_form", "blocked_by": ["task_2"], …}]}`).
 */
export function readTaskStoreFile(file: string): ForeignList {
  const raw = readJson(file);
  if (!isObject(raw) || !Array.isArray(raw.tasks))
    throw new TasksError('E_INVALID', `${file}: expected {"next_id": N, "tasks": [...]}; nothing was imported`, { file });
  const warnings: string[] = [];
  const tasks: ForeignTask[] = raw.tasks.map((item, index) => {
    const where = `tasks[${index}]`;
    if (!isObject(item)) throw new TasksError('E_INVALID', `${file}: ${where} is not an object; nothing was imported`, { file });
    checkSourceNesting(item, `${file}: ${where}`);
    return listTask(item, item.id === undefined ? `#${index + 1}` : String(item.id), where, STORE_FIELDS, warnings);
  });
  if (tasks.length === 0) throw new TasksError('E_NOT_FOUND', `${file} holds no tasks; nothing to import`, { file });
  return { source: file, tool: 'store', tasks, warnings };
}
