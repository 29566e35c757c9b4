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

const CLAUDE_KEYS = new Set(['id', 'subject', 'description', 'status', 'owner', 'activeForm', 'blockedBy', 'blocks', 'metadata']);

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
    const description = text(raw.description);
    const task: ForeignTask = {
      sourceId,
      subject: subject(raw.subject, description, name, warnings),
      description,
      status: status(raw.status, name, warnings),
      owner: text(raw.owner),
      blockedBy: idList(raw.blockedBy),
      blocks: idList(raw.blocks),
      extra: extras(raw, CLAUDE_KEYS),
    };
    if (typeof raw.activeForm === 'string' && raw.activeForm !== '') task.activeForm = raw.activeForm;
    if (isObject(raw.metadata)) task.metadata = cloneJson(raw.metadata) as Record<string, unknown>;
    tasks.push(task);
  }
  return { source: dir, tool: 'claude', tasks, warnings };
}

const STORE_KEYS = new Set(['id', 'subject', 'description', 'status', 'owner', 'active_form', 'blocked_by', 'blocks', 'metadata']);

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
    const description = text(item.description);
    const task: ForeignTask = {
      sourceId: item.id === undefined ? `#${index + 1}` : String(item.id),
      subject: subject(item.subject, description, where, warnings),
      description,
      status: status(item.status ?? 'pending', where, warnings),
      owner: text(item.owner),
      blockedBy: idList(item.blocked_by),
      blocks: idList(item.blocks),
      extra: extras(item, STORE_KEYS),
    };
    if (typeof item.active_form === 'string' && item.active_form !== '') task.activeForm = item.active_form;
    if (isObject(item.metadata)) task.metadata = cloneJson(item.metadata) as Record<string, unknown>;
    return task;
  });
  if (tasks.length === 0) throw new TasksError('E_NOT_FOUND', `${file} holds no tasks; nothing to import`, { file });
  return { source: file, tool: 'store', tasks, warnings };
}
