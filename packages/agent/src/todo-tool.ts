import {
  TaskStore,
  TasksError,
  filterTasks,
  formatCycle,
  isReady,
  openBlockers,
  parseTaskId,
  readLeases,
  renderAgentBoard,
  resolveOwner,
  toTaskView,
  type BatchItem,
  type BoardSnapshot,
  type Task,
  type TaskLookup,
  type TaskStatus,
  type TaskView,
  type UpdateTaskInput,
} from '@dotasks/core/internal';
import { TODO_ACTIONS, TODO_STATUSES, TODO_TOOL_NAME, todoInputSchema, type JsonSchema, type TodoAction } from './schema.js';

/** What the tool teaches the model: the protocol in a few lines. */
export const TODO_DESCRIPTION = [
  'Plan and track multi-step work on the shared task board. Protocol:',
  '1. create one task per step (action "create", subject); the result gives its id.',
  '2. link the order: action "update", task_id, add_blocked_by [ids it waits for]; cycles are refused.',
  '3. start one task at a time: "update" with status "in_progress" (several agents: "claim" takes the next ready task).',
  '4. when it is done: "update" with status "completed"; the result lists the ids it unblocked.',
  'Every change returns the board in <TASK_BOARD> ([x] done, [>] in progress, [ ] pending): read it there instead of calling "list".',
  '"get" shows one task in full; "write" creates/updates many (todos); "release" gives a task back; "clear" empties the board.',
  'A refused call returns ok=false with error.code, message and hint: fix the input as the hint says and call again.',
].join('\n');

/** Options of createTodoTool. */
export interface TodoToolOptions {
  /** The board to work on; default: found from `dir`/`cwd` like the CLI does (docs/protocol.md, "Where the board is"). */
  store?: TaskStore;
  dir?: string;
  cwd?: string;
  /** Who acts (claims, starts, completes); default: TASKS_OWNER, the linked worktree, the user. */
  owner?: string;
}

/** A task in a mutating result or in `list`: no description. */
export interface TaskSummary {
  id: number;
  subject: string;
  status: TaskStatus;
  owner: string;
  activeForm: string | null;
  /** Open blockers only: what it still waits for. */
  blockedBy: number[];
  blocks: number[];
  ready: boolean;
}

export interface TodoError {
  code: string;
  message: string;
  /** What to do about it. */
  hint: string;
  [detail: string]: unknown;
}

/** The result of a call: always returned, never thrown. */
export type TodoResult =
  | {
      ok: true;
      action: TodoAction;
      message: string;
      task?: TaskSummary | TaskView;
      tasks?: TaskSummary[];
      unblocked?: number[];
      removed?: number[];
      expiresAt?: string | null;
      /** `<TASK_BOARD>…</TASK_BOARD>` after the change (every mutating action, and list). */
      board?: string;
    }
  | { ok: false; action?: string; error: TodoError; board?: string };

export interface TodoTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** Runs one call. Never throws: mistakes come back as `{ok: false, error}`. */
  execute(input: unknown): Promise<TodoResult>;
  /** The owner the tool acts as. */
  readonly owner: string;
}

/** A mistake in the input, with the hint the model needs. */
class InputError extends TasksError {
  constructor(
    message: string,
    readonly hint: string,
    details: Record<string, unknown> = {},
  ) {
    super('E_INVALID', message, details);
  }
}

const MUTATING = new Set<TodoAction>(['create', 'update', 'clear', 'write', 'claim', 'release']);

/** Fields each action reads; anything else given is a mistake worth reporting. */
const FIELDS: Record<TodoAction, string[]> = {
  create: ['subject', 'description', 'active_form', 'owner', 'add_blocked_by'],
  update: ['task_id', 'subject', 'status', 'description', 'active_form', 'owner', 'add_blocked_by', 'remove_blocked_by'],
  list: ['include_deleted'],
  get: ['task_id'],
  clear: [],
  write: ['todos'],
  claim: ['task_id', 'active_form'],
  release: ['task_id'],
};
const ALL_FIELDS = new Set(['action', ...Object.keys(todoInputSchema.properties as object)]);
const ITEM_FIELDS = new Set(['task_id', 'subject', 'description', 'status', 'active_form', 'owner', 'blocked_by']);

/** Present = given and not null; models often send null (or []) for fields they do not use. */
function present(value: unknown): boolean {
  return value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
}

function summarize(task: Task, lookup: TaskLookup): TaskSummary {
  return {
    id: task.id,
    subject: task.subject,
    status: task.status,
    owner: task.owner,
    activeForm: task.activeForm ?? null,
    blockedBy: task.status === 'completed' || task.status === 'deleted' ? [] : openBlockers(task, lookup),
    blocks: [...task.blocks],
    ready: isReady(task, lookup),
  };
}

function idFrom(value: unknown, field: string): number {
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

function idsFrom(value: unknown, field: string): number[] {
  if (!present(value)) return [];
  if (!Array.isArray(value)) throw new InputError(`${field} must be a list of task ids`, `write ${field}: [2, 3] (or ["#2", "#3"]).`, { field });
  return value.map((v, i) => idFrom(v, `${field}[${i}]`));
}

function stringFrom(value: unknown, field: string): string | undefined {
  if (!present(value)) return undefined;
  if (typeof value !== 'string') throw new InputError(`${field} must be a string`, `give ${field} as text.`, { field });
  return value;
}

function statusFrom(value: unknown, field = 'status'): TaskStatus | undefined {
  if (!present(value)) return undefined;
  if (typeof value !== 'string' || !(TODO_STATUSES as readonly string[]).includes(value))
    throw new InputError(`${field} ${JSON.stringify(value)} is not a status`, `use one of ${TODO_STATUSES.join(', ')}.`, { field });
  return value as TaskStatus;
}

/** Hints for the refusals the core reports, by code. */
function hintFor(error: TasksError, owner: string): string {
  const d = error.details;
  const ids = (list: unknown) => (Array.isArray(list) ? list.map((n) => `#${n}`).join(', ') : '');
  switch (error.code) {
    case 'E_NOT_FOUND':
      return 'task_id must name a task on the board (see the board below, or action "list"); create it first if it does not exist.';
    case 'E_CYCLE':
      return `Adding that dependency would close the loop ${formatCycle(d.cycle as number[])}, and a loop can never finish. Leave this edge out, or remove an edge of the loop first (update with remove_blocked_by).`;
    case 'E_BLOCKED':
      return `Finish ${ids(d.blockedBy) || 'its blockers'} first: completing them unblocks this task. If a dependency no longer applies, remove it with remove_blocked_by.`;
    case 'E_CLAIMED':
      return `Another owner holds it${d.owner ? ` (${String(d.owner)})` : ''}. Leave it to them and take another task: action "claim" without task_id takes the next ready one.`;
    case 'E_OWNER_BUSY':
      return `You (${owner}) already have #${String(d.task)} in progress. Complete it (update, status "completed") or release it (action "release") before starting another.`;
    case 'E_NOT_OWNER':
      return `That task belongs to ${String(d.owner ?? 'another owner')}; only they change its status. Pick a task that is yours or ready.`;
    case 'E_NOT_PENDING':
      return 'Only pending tasks can be claimed; pick a ready task from the board.';
    case 'E_NOTHING_READY':
      return 'Every open task is blocked or claimed. Complete what you hold to unblock more, or wait for others.';
    case 'E_TRANSITION':
      return 'Completed and deleted tasks are final; create a new task for more work.';
    case 'E_NO_BOARD':
      return "There is no task board here: run 'tasks init' in the repository first.";
    case 'E_CORRUPT':
      return "A task file is damaged; a person must fix it by hand or run 'tasks doctor'. Other tasks still work.";
    case 'E_LOCKED':
    case 'E_COMPROMISED':
      return 'Another process was writing the same tasks; call again.';
    case 'E_CONFIRM':
      return 'clear removes every task.';
    default:
      return 'Check the input against the tool schema and call again.';
  }
}

/**
 * The `todo` tool over the board: one tool for the whole plan, `action`
 * dispatching create/update/list/get/clear/write/claim/release. Every mutating result
 * carries the board as `<TASK_BOARD>…</TASK_BOARD>`.
 */
export function createTodoTool(options: TodoToolOptions = {}): TodoTool {
  const owner = options.owner ?? resolveOwner({ cwd: options.cwd }).owner;
  let store = options.store;
  const open = (): TaskStore => (store ??= TaskStore.open({ dir: options.dir, cwd: options.cwd }));

  const board = (snapshot?: BoardSnapshot): string => renderAgentBoard(snapshot ?? open().loadBoard());
  const lookupIn = (s: TaskStore): TaskLookup => (id) => s.peekTask(id);

  /** Any call by an owner shows it is alive: renew its expiring leases (claims made with "claim"). */
  async function renewLeases(s: TaskStore): Promise<void> {
    for (const lease of readLeases(s)) {
      if (lease.owner !== owner || lease.expiresAt === null) continue;
      try {
        await s.heartbeat({ owner, id: lease.task });
      } catch {
        // a stale lease (task released meanwhile) is the reaper's business
      }
    }
  }

  function checkFields(action: TodoAction, input: Record<string, unknown>): void {
    for (const key of Object.keys(input)) {
      if (!ALL_FIELDS.has(key))
        throw new InputError(`unknown field "${key}"`, `the fields are: ${[...ALL_FIELDS].join(', ')}.`, { field: key });
      if (key === 'action' || !present(input[key]) || (key === 'include_deleted' && input[key] === false)) continue;
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

  async function create(input: Record<string, unknown>): Promise<TodoResult> {
    const subject = stringFrom(input.subject, 'subject');
    if (!subject?.trim())
      throw new InputError('create needs a subject', 'give subject: a short one-line title, e.g. "Write the schema".');
    const s = open();
    const result = await s.createTask(
      {
        subject,
        description: stringFrom(input.description, 'description'),
        activeForm: stringFrom(input.active_form, 'active_form') || undefined,
        owner: stringFrom(input.owner, 'owner'),
        blockedBy: idsFrom(input.add_blocked_by, 'add_blocked_by'),
      },
      { actor: owner },
    );
    const snapshot = s.loadBoard();
    return {
      ok: true,
      action: 'create',
      message: `Created #${result.task.id}: ${result.task.subject}`,
      task: summarize(result.task, (id) => snapshot.byId.get(id)),
      board: board(snapshot),
    };
  }

  async function update(input: Record<string, unknown>): Promise<TodoResult> {
    if (!present(input.task_id)) throw new InputError('update needs task_id', 'give task_id: the id of the task to change (see the board).');
    const id = idFrom(input.task_id, 'task_id');
    const status = statusFrom(input.status);
    const activeForm = stringFrom(input.active_form, 'active_form');
    const patch: UpdateTaskInput = {
      subject: stringFrom(input.subject, 'subject'),
      description: stringFrom(input.description, 'description'),
      activeForm: activeForm === '' ? null : activeForm,
      owner: stringFrom(input.owner, 'owner'),
      addBlockedBy: idsFrom(input.add_blocked_by, 'add_blocked_by'),
      removeBlockedBy: idsFrom(input.remove_blocked_by, 'remove_blocked_by'),
    };
    const hasFields = Object.values(patch).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined));
    if (!hasFields && status === undefined)
      throw new InputError('update changes nothing', 'give status, subject, description, active_form, owner, add_blocked_by or remove_blocked_by.');
    const s = open();
    const current = s.getTask(id);
    const heldByOther = current.owner !== '' && current.owner !== owner;
    if (status !== undefined && status !== current.status && heldByOther && (current.status === 'in_progress' || patch.owner === undefined))
      throw new TasksError('E_CLAIMED', `task #${id} is ${current.status === 'in_progress' ? 'in progress' : 'assigned'} for ${current.owner}`, {
        task: id,
        owner: current.owner,
      });

    let unblocked: number[] = [];
    let task: Task;
    if (status === 'completed' && current.status !== 'completed') {
      // Check before writing anything, so a refused completion leaves the fields alone too.
      const lookup = lookupIn(s);
      const after = { ...current, blockedBy: current.blockedBy.filter((b) => !patch.removeBlockedBy!.includes(b)).concat(patch.addBlockedBy!) };
      const open = openBlockers(after, lookup);
      if (open.length)
        throw new TasksError('E_BLOCKED', `task #${id} cannot be completed: it still waits for ${open.map((b) => `#${b}`).join(', ')}`, {
          task: id,
          blockedBy: open,
        });
      if (hasFields) await s.updateTask(id, patch, { actor: owner });
      const done = await s.completeTask(id, { actor: owner });
      task = done.task;
      unblocked = done.unblocked;
    } else if (status === 'pending' && current.status === 'in_progress') {
      if (hasFields) await s.updateTask(id, patch, { actor: owner });
      task = (await s.releaseTask(id, { actor: owner })).task;
    } else {
      const result = await s.updateTask(id, { ...patch, status: status === 'pending' ? undefined : status }, { actor: owner });
      task = result.task;
      unblocked = result.unblocked;
    }
    const snapshot = s.loadBoard();
    const verb = status === 'completed' ? 'Completed' : status === 'in_progress' ? 'Started' : status === 'deleted' ? 'Deleted' : 'Updated';
    const tail = unblocked.length ? `; unblocked ${unblocked.map((u) => `#${u}`).join(', ')}` : '';
    return {
      ok: true,
      action: 'update',
      message: `${verb} #${task.id}: ${task.subject}${tail}`,
      task: summarize(task, (n) => snapshot.byId.get(n)),
      unblocked,
      board: board(snapshot),
    };
  }

  function list(input: Record<string, unknown>): TodoResult {
    if (present(input.include_deleted) && typeof input.include_deleted !== 'boolean')
      throw new InputError('include_deleted must be true or false', 'give include_deleted: true to also see deleted tasks.');
    const snapshot = open().loadBoard();
    const lookup: TaskLookup = (id) => snapshot.byId.get(id);
    const tasks = filterTasks(snapshot, { all: input.include_deleted === true }).map((t) => summarize(t, lookup));
    const inProgress = tasks.filter((t) => t.status === 'in_progress').length;
    const ready = tasks.filter((t) => t.ready).map((t) => `#${t.id}`);
    return {
      ok: true,
      action: 'list',
      message: `${tasks.length} task${tasks.length === 1 ? '' : 's'}; ${inProgress} in progress; ready: ${ready.join(', ') || 'none'}`,
      tasks,
      board: board(snapshot),
    };
  }

  function get(input: Record<string, unknown>): TodoResult {
    if (!present(input.task_id)) throw new InputError('get needs task_id', 'give task_id: the id of the task to read (see the board).');
    const s = open();
    const task = s.getTask(idFrom(input.task_id, 'task_id'));
    return { ok: true, action: 'get', message: `#${task.id}: ${task.subject}`, task: toTaskView(task, lookupIn(s)) };
  }

  async function clear(): Promise<TodoResult> {
    const s = open();
    const others = s.loadBoard().tasks.filter((t) => t.status === 'in_progress' && t.owner !== '' && t.owner !== owner);
    if (others.length)
      throw new TasksError(
        'E_CLAIMED',
        `clear refused: ${others.map((t) => `#${t.id} (${t.owner})`).join(', ')} ${others.length === 1 ? 'is' : 'are'} in progress for another owner`,
        { tasks: others.map((t) => t.id), owner: others[0].owner },
      );
    const { removed } = await s.clearBoard({ confirm: true, actor: owner });
    return { ok: true, action: 'clear', message: `Cleared the board (${removed.length} task${removed.length === 1 ? '' : 's'} removed)`, removed, board: board() };
  }

  async function write(input: Record<string, unknown>): Promise<TodoResult> {
    if (!Array.isArray(input.todos) || input.todos.length === 0)
      throw new InputError('write needs todos: a non-empty list', 'give todos: [{"subject": "First step"}, {"task_id": 2, "status": "completed"}].');
    const items: BatchItem[] = input.todos.map((raw, i) => {
      const at = `todos[${i}]`;
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
        throw new InputError(`${at} must be an object`, 'each entry looks like {"subject": "…"} or {"task_id": 3, "status": "completed"}.');
      const entry = raw as Record<string, unknown>;
      for (const key of Object.keys(entry))
        if (!ITEM_FIELDS.has(key))
          throw new InputError(
            `unknown field "${key}" in ${at}`,
            key === 'content' || key === 'title'
              ? `call it "subject".`
              : key === 'id'
                ? `call it "task_id".`
                : `an entry takes ${[...ITEM_FIELDS].join(', ')}.`,
            { field: key },
          );
      const item: BatchItem = {
        subject: stringFrom(entry.subject, `${at}.subject`),
        description: stringFrom(entry.description, `${at}.description`),
        status: statusFrom(entry.status, `${at}.status`),
        owner: stringFrom(entry.owner, `${at}.owner`),
        blockedBy: present(entry.blocked_by) || Array.isArray(entry.blocked_by) ? idsFrom(entry.blocked_by, `${at}.blocked_by`) : undefined,
      };
      const activeForm = stringFrom(entry.active_form, `${at}.active_form`);
      if (activeForm !== undefined) item.activeForm = activeForm === '' ? null : activeForm;
      if (present(entry.task_id)) item.id = idFrom(entry.task_id, `${at}.task_id`);
      else if (!item.subject?.trim())
        throw new InputError(`${at} needs a subject (to create) or a task_id (to change a task)`, 'give "subject" for a new task or "task_id" for an existing one.');
      return item;
    });
    const s = open();
    const result = await s.batchWrite(items, { actor: owner });
    const snapshot = s.loadBoard();
    const lookup: TaskLookup = (id) => snapshot.byId.get(id);
    const created = items.filter((i) => i.id === undefined).length;
    return {
      ok: true,
      action: 'write',
      message: `Wrote ${items.length} entr${items.length === 1 ? 'y' : 'ies'} (${created} created, ${items.length - created} updated)${result.unblocked.length ? `; unblocked ${result.unblocked.map((u) => `#${u}`).join(', ')}` : ''}`,
      tasks: result.tasks.map((t) => summarize(snapshot.byId.get(t.id) ?? t, lookup)),
      unblocked: result.unblocked,
      board: board(snapshot),
    };
  }

  async function claim(input: Record<string, unknown>): Promise<TodoResult> {
    const s = open();
    const result = present(input.task_id)
      ? await s.claimTask(idFrom(input.task_id, 'task_id'), { owner })
      : await s.claimNext({ owner });
    let task = result.task;
    const activeForm = stringFrom(input.active_form, 'active_form');
    if (activeForm) task = (await s.updateTask(task.id, { activeForm }, { actor: owner })).task;
    const snapshot = s.loadBoard();
    return {
      ok: true,
      action: 'claim',
      message: `${result.alreadyHeld ? 'Already held' : 'Claimed'} #${task.id}: ${task.subject} (owner ${owner})`,
      task: summarize(task, (n) => snapshot.byId.get(n)),
      unblocked: [],
      expiresAt: result.lease.expiresAt,
      board: board(snapshot),
    };
  }

  async function release(input: Record<string, unknown>): Promise<TodoResult> {
    if (!present(input.task_id)) throw new InputError('release needs task_id', 'give task_id: the id of the task to give back.');
    const s = open();
    const result = await s.releaseTask(idFrom(input.task_id, 'task_id'), { actor: owner });
    const snapshot = s.loadBoard();
    return {
      ok: true,
      action: 'release',
      message: `Released #${result.task.id}: ${result.task.subject} (pending, no owner)`,
      task: summarize(result.task, (n) => snapshot.byId.get(n)),
      board: board(snapshot),
    };
  }

  async function execute(raw: unknown): Promise<TodoResult> {
    let action: string | undefined;
    try {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
        throw new InputError('the input must be an object', 'call the tool with {"action": "list"} or another action.');
      const input = raw as Record<string, unknown>;
      action = typeof input.action === 'string' ? input.action : undefined;
      if (!action || !(TODO_ACTIONS as readonly string[]).includes(action))
        throw new InputError(
          present(input.action) ? `unknown action ${JSON.stringify(input.action)}` : 'action is missing',
          `action is one of ${TODO_ACTIONS.join(', ')}.`,
        );
      const act = action as TodoAction;
      checkFields(act, input);
      let result: TodoResult;
      switch (act) {
        case 'create':
          result = await create(input);
          break;
        case 'update':
          result = await update(input);
          break;
        case 'list':
          result = list(input);
          break;
        case 'get':
          result = get(input);
          break;
        case 'clear':
          result = await clear();
          break;
        case 'write':
          result = await write(input);
          break;
        case 'claim':
          result = await claim(input);
          break;
        case 'release':
          result = await release(input);
          break;
      }
      await renewLeases(open());
      return result;
    } catch (error) {
      return failure(action, error);
    }
  }

  function failure(action: string | undefined, error: unknown): TodoResult {
    let result: TodoResult;
    if (error instanceof TasksError) {
      const code = error.code === 'E_USAGE' ? 'E_INVALID' : error.code;
      const hint = error instanceof InputError ? error.hint : hintFor(error, owner);
      const { reason: _reason, ...details } = error.details;
      result = { ok: false, action, error: { code, message: error.message, hint, ...details } };
    } else {
      const message = error instanceof Error ? error.message : String(error);
      result = { ok: false, action, error: { code: 'E_INTERNAL', message: `unexpected error: ${message}`, hint: 'This is a bug in the tool; report it. The board was not changed by this call unless it says so.' } };
    }
    // The board helps the model fix a wrong id or see who holds what; skip it when there is none.
    if (action === undefined || MUTATING.has(action as TodoAction) || action === 'get') {
      try {
        result.board = board();
      } catch {
        // no board to show
      }
    }
    return result;
  }

  return { name: TODO_TOOL_NAME, description: TODO_DESCRIPTION, inputSchema: todoInputSchema, execute, owner };
}

/**
 * One text for a model: the result as JSON without the board, then the board
 * itself (so its lines are not escaped inside a JSON string).
 */
export function renderToolResult(result: TodoResult): string {
  const { board, ...rest } = result;
  return board ? `${JSON.stringify(rest, null, 2)}\n${board}` : JSON.stringify(rest, null, 2);
}
