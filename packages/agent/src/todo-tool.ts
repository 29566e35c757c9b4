import { TaskStore, TasksError, readLeases, resolveOwner } from '@dotasks/core/internal';
import { TODO_TOOL_NAME, todoInputSchema, type ObjectSchema } from './schema.js';
import { TODO_HANDLERS, type TodoContext } from './todo-actions.js';
import { failureResult } from './todo-failure.js';
import { actionFrom, checkFields } from './todo-input.js';
import { renderResultBoard, type TodoResult } from './todo-result.js';

export { renderToolResult, type TaskSummary, type TodoError, type TodoResult } from './todo-result.js';

/** The protocol in four steps: the tool's description and `tasks prime` (prime.ts) teach the same words. */
export const PROTOCOL_STEPS: readonly string[] = [
  '1. create one task per step (action "create", subject); the result gives its id.',
  '2. link the order: action "update", task_id, add_blocked_by [ids it waits for]; cycles are refused.',
  '3. start one task at a time: "update" with status "in_progress" (several agents: "claim" takes the next ready task).',
  '4. when it is done: "update" with status "completed"; the result lists the ids it unblocked.',
];

/** What the tool teaches the model: the protocol in a few lines. */
export const TODO_DESCRIPTION = [
  'Plan and track multi-step work on the shared task board. Protocol:',
  ...PROTOCOL_STEPS,
  'Every change returns the open work in <TASK_BOARD> ([>] in progress, [ ] pending, [?] waits for review; done tasks counted in one line): read it there instead of calling "list".',
  'A task that requires review goes into review when completed: someone other than its owner "approve"s it (then it completes) or "reject"s it (text: what to fix; it goes back to its owner).',
  '"get" shows one task in full; "write" creates/updates many (todos); "release" gives a task back; "clear" empties the board.',
  'priority 0 (urgent) … 4 orders the ready work; "note" (task_id, text) leaves what you learned on a task for whoever comes next; work found on the way: "create" with discovered_from [the task you are on] (related links tasks; neither blocks anything).',
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
  /** Offer `clear` (removes every task); `tasks mcp --no-clear`, what `tasks setup` writes, turns it off. Default true. */
  allowClear?: boolean;
}

export interface TodoTool {
  name: string;
  description: string;
  inputSchema: ObjectSchema;
  /** Runs one call. Never throws: mistakes come back as `{ok: false, error}`. */
  execute(input: unknown): Promise<TodoResult>;
  /** The owner the tool acts as. */
  readonly owner: string;
}

/** Any call by an owner shows it is alive: renew its expiring leases (claims made with "claim"). */
async function renewLeases(store: TaskStore, owner: string): Promise<void> {
  for (const lease of readLeases(store)) {
    if (lease.owner !== owner || lease.expiresAt === null || lease.review) continue;
    try {
      await store.heartbeat({ owner, id: lease.task });
    } catch {
      // a stale lease (task released meanwhile) is the reaper's business
    }
  }
}

/** The action a call names, as given (even one that is not an action), for the result to echo. */
function actionNamed(raw: unknown): string | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const action = (raw as Record<string, unknown>).action;
  return typeof action === 'string' ? action : undefined;
}

/**
 * The `todo` tool over the board: one tool for the whole plan, `action`
 * dispatching create/update/list/get/clear/write/claim/release/note. Every mutating result
 * carries the board as `<TASK_BOARD>…</TASK_BOARD>`.
 *
 * The parts: todo-input.ts checks the arguments, todo-actions.ts has one
 * handler per action, todo-result.ts shapes results and their board,
 * todo-failure.ts turns a refusal into a result with a hint.
 */
export function createTodoTool(options: TodoToolOptions = {}): TodoTool {
  const owner = options.owner ?? resolveOwner({ cwd: options.cwd }).owner;
  let store = options.store;
  const open = (): TaskStore => (store ??= TaskStore.open({ dir: options.dir, cwd: options.cwd }));
  const context: TodoContext = { owner, store: open };

  async function execute(raw: unknown): Promise<TodoResult> {
    const named = actionNamed(raw);
    try {
      const { action, input } = actionFrom(raw);
      checkFields(action, input);
      if (action === 'clear' && options.allowClear === false)
        throw new TasksError('E_INVALID', 'clear is switched off for this tool (tasks mcp --no-clear); a person empties a board with `tasks clear --yes`');
      const result = await TODO_HANDLERS[action](context, input);
      await renewLeases(open(), owner);
      return result;
    } catch (error) {
      // The board helps the model fix a wrong id or see who holds what.
      return failureResult(named, error, owner, () => renderResultBoard(open().loadOpenWork(), open().config.echoBudget));
    }
  }

  return { name: TODO_TOOL_NAME, description: TODO_DESCRIPTION, inputSchema: todoInputSchema, execute, owner };
}
