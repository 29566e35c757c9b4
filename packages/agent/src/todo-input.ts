import { TasksError, parseTaskId, type BatchItem, type TaskStatus } from '@dotasks/core';
import { TODO_ACTIONS, TODO_STATUSES, todoInputSchema, type TodoAction } from './schema.js';

/** A mistake in the input, with the hint the model needs. */
export class InputError extends TasksError {
  constructor(
    message: string,
    readonly hint: string,
    details: Record<string, unknown> = {},
  ) {
    super('E_INVALID', message, details);
  }
}

/** A call's input: the tool's arguments, an object. */
export type TodoInput = Record<string, unknown>;

/** Fields each action reads; anything else given is a mistake worth reporting. */
const FIELDS: Record<TodoAction, string[]> = {
  create: [
    'subject',
    'description',
    'active_form',
    'owner',
    'add_blocked_by',
    'parent',
    'priority',
    'add_labels',
    'paths',
    'related',
    'discovered_from',
    'key',
    'review',
  ],
  update: [
    'task_id',
    'subject',
    'status',
    'description',
    'active_form',
    'owner',
    'add_blocked_by',
    'remove_blocked_by',
    'parent',
    'priority',
    'add_labels',
    'remove_labels',
    'paths',
    'result',
    'related',
    'remove_related',
    'discovered_from',
    'review',
  ],
  list: ['include_deleted'],
  get: ['task_id'],
  clear: [],
  write: ['todos'],
  claim: ['task_id', 'active_form'],
  release: ['task_id'],
  note: ['task_id', 'text'],
  approve: ['task_id'],
  reject: ['task_id', 'text'],
};
const ALL_FIELDS = new Set(['action', ...Object.keys(todoInputSchema.properties as object)]);
const ITEM_FIELDS = new Set(['task_id', 'subject', 'description', 'status', 'active_form', 'owner', 'blocked_by', 'parent', 'priority', 'labels']);

/** Present = given and not null; models often send null (or []) for fields they do not use. */
export function present(value: unknown): boolean {
  return value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
}

export function idFrom(value: unknown, field: string): number {
  try {
    return parseTaskId(value);
  } catch {
    const text = typeof value === 'string' ? value.trim() : JSON.stringify(value);
    const looksLikeSubject = typeof value === 'string' && /[a-z]{2,}|\s/i.test(value.replace(/^\s*task_/, ''));
    if (looksLikeSubject)
      throw new InputError(
        `${field} ${JSON.stringify(text)} is not a task id`,
        `${field} takes the id of an existing task (3, "3", "#3" or "task_3"). That looks like a title: to make a new task, ` +
          `call action "create" with subject ${JSON.stringify(text)}, then use the id it returns.`,
        { field, value },
      );
    throw new InputError(`${field} ${text} is not a task id`, `${field} takes the id of an existing task: 3, "3", "#3" or "task_3"; the board lists them.`, {
      field,
      value,
    });
  }
}

export function idsFrom(value: unknown, field: string, options: { single?: boolean } = {}): number[] {
  if (!present(value)) return [];
  // A link's fields take one id as well as a list: discovered_from: 3.
  if (options.single && !Array.isArray(value)) return [idFrom(value, field)];
  if (!Array.isArray(value)) throw new InputError(`${field} must be a list of task ids`, `write ${field}: [2, 3] (or ["#2", "#3"]).`, { field });
  return value.map((v, i) => idFrom(v, `${field}[${i}]`));
}

/** A parent: a task id, or (where it can be removed) "none" for no parent; undefined when not given. */
export function parentFrom(value: unknown, field: string, allowNone: boolean): number | null | undefined {
  if (!present(value)) return undefined;
  if (allowNone && typeof value === 'string' && value.trim().toLowerCase() === 'none') return null;
  return idFrom(value, field);
}

export function stringFrom(value: unknown, field: string): string | undefined {
  if (!present(value)) return undefined;
  if (typeof value !== 'string') throw new InputError(`${field} must be a string`, `give ${field} as text.`, { field });
  return value;
}

/** A list of path globs (absent: undefined). */
export function pathsFrom(value: unknown, field = 'paths'): string[] | undefined {
  if (!present(value)) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === ''))
    throw new InputError(`${field} must be a list of globs`, `write ${field}: ["src/parser/**", "docs/parser.md"], relative to the top of the repository.`, {
      field,
    });
  return value as string[];
}

export function statusFrom(value: unknown, field = 'status'): TaskStatus | undefined {
  if (!present(value)) return undefined;
  if (typeof value !== 'string' || !(TODO_STATUSES as readonly string[]).includes(value))
    throw new InputError(`${field} ${JSON.stringify(value)} is not a status`, `use one of ${TODO_STATUSES.join(', ')}.`, { field });
  return value as TaskStatus;
}

/** A yes or no (absent: undefined). */
export function booleanFrom(value: unknown, field: string): boolean | undefined {
  if (!present(value)) return undefined;
  if (typeof value !== 'boolean') throw new InputError(`${field} must be true or false`, `give ${field}: true or ${field}: false.`, { field });
  return value;
}

/** A priority, 0 (most urgent) to 4; undefined when not given. */
export function priorityFrom(value: unknown, field = 'priority'): number | undefined {
  if (!present(value)) return undefined;
  const n = typeof value === 'string' && /^\s*[pP]?[0-4]\s*$/.test(value) ? Number(value.trim().replace(/^[pP]/, '')) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 4)
    throw new InputError(`${field} ${JSON.stringify(value)} is not a priority`, 'give priority as 0 (most urgent) to 4 (least); 2 is the default.', { field });
  return n;
}

/** Labels: a list of non-empty strings; a single string is taken as one label. */
export function labelsFrom(value: unknown, field: string): string[] {
  if (!present(value)) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.some((l) => typeof l !== 'string' || l.trim() === ''))
    throw new InputError(`${field} must be a list of labels`, `write ${field}: ["parser", "bug"].`, { field });
  return list as string[];
}

/** The action named by `raw`, once `raw` is an object naming a known action. */
export function actionFrom(raw: unknown): { action: TodoAction; input: TodoInput } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new InputError('the input must be an object', 'call the tool with {"action": "list"} or another action.');
  const input = raw as TodoInput;
  const action = typeof input.action === 'string' ? input.action : undefined;
  if (!action || !(TODO_ACTIONS as readonly string[]).includes(action))
    throw new InputError(
      present(input.action) ? `unknown action ${JSON.stringify(input.action)}` : 'action is missing',
      `action is one of ${TODO_ACTIONS.join(', ')}.`,
    );
  return { action: action as TodoAction, input };
}

/** Refuses fields the tool does not know, and fields `action` does not read. */
export function checkFields(action: TodoAction, input: TodoInput): void {
  for (const key of Object.keys(input)) {
    if (!ALL_FIELDS.has(key))
      throw new InputError(
        `unknown field "${key}"`,
        key === 'discoveredFrom' ? 'call it "discovered_from".' : `the fields are: ${[...ALL_FIELDS].join(', ')}.`,
        { field: key },
      );
    // false for a yes-or-no the action does not read (a strict-mode caller's default) is "not given" too.
    if (key === 'action' || !present(input[key]) || (input[key] === false && (key === 'include_deleted' || !FIELDS[action].includes(key)))) continue;
    // Strict-mode callers send every field: "" for one that does not apply means "not given", like null.
    if (!FIELDS[action].includes(key) && input[key] === '') continue;
    if (!FIELDS[action].includes(key)) {
      const hint =
        key === 'task_id' && action === 'create'
          ? 'create allocates the id itself; to change an existing task use action "update" with task_id.'
          : key === 'subject' && (action === 'get' || action === 'claim' || action === 'release')
            ? `${action} names a task by task_id (its id), not by subject; find the id on the board.`
            : `action "${action}" reads ${FIELDS[action].length ? FIELDS[action].join(', ') : 'no other fields'}.`;
      throw new InputError(`field "${key}" does not apply to action "${action}"`, hint, { field: key });
    }
  }
}

/** The entries of `write`'s todos, each a create (subject) or a change (task_id). */
export function batchItemsFrom(todos: unknown): BatchItem[] {
  if (!Array.isArray(todos) || todos.length === 0)
    throw new InputError('write needs todos: a non-empty list', 'give todos: [{"subject": "First step"}, {"task_id": 2, "status": "completed"}].');
  return todos.map((raw, i) => batchItemFrom(raw, `todos[${i}]`));
}

function batchItemFrom(raw: unknown, at: string): BatchItem {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new InputError(`${at} must be an object`, 'each entry looks like {"subject": "…"} or {"task_id": 3, "status": "completed"}.');
  const entry = raw as Record<string, unknown>;
  for (const key of Object.keys(entry))
    if (!ITEM_FIELDS.has(key))
      throw new InputError(
        `unknown field "${key}" in ${at}`,
        key === 'content' || key === 'title' ? `call it "subject".` : key === 'id' ? `call it "task_id".` : `an entry takes ${[...ITEM_FIELDS].join(', ')}.`,
        { field: key },
      );
  const item: BatchItem = {
    subject: stringFrom(entry.subject, `${at}.subject`),
    description: stringFrom(entry.description, `${at}.description`),
    status: statusFrom(entry.status, `${at}.status`),
    owner: stringFrom(entry.owner, `${at}.owner`),
    blockedBy: present(entry.blocked_by) || Array.isArray(entry.blocked_by) ? idsFrom(entry.blocked_by, `${at}.blocked_by`) : undefined,
    parent: parentFrom(entry.parent, `${at}.parent`, present(entry.task_id)),
    priority: priorityFrom(entry.priority, `${at}.priority`),
    labels: present(entry.labels) || Array.isArray(entry.labels) ? labelsFrom(entry.labels, `${at}.labels`) : undefined,
  };
  const activeForm = stringFrom(entry.active_form, `${at}.active_form`);
  if (activeForm !== undefined) item.activeForm = activeForm === '' ? null : activeForm;
  if (present(entry.task_id)) item.id = idFrom(entry.task_id, `${at}.task_id`);
  else if (!item.subject?.trim())
    throw new InputError(
      `${at} needs a subject (to create) or a task_id (to change a task)`,
      'give "subject" for a new task or "task_id" for an existing one.',
    );
  return item;
}
