import {
  TasksError,
  filterTasks,
  inReview,
  openBlockers,
  toTaskView,
  type BatchItem,
  type BoardSnapshot,
  type Task,
  type TaskLookup,
  type TaskStore,
  type UpdateTaskInput,
} from '@dotasks/core';
import { blockersAmong, upstreamOf, type UpstreamResult } from '@dotasks/core/internal';
import type { TodoAction } from './schema.js';
import {
  InputError,
  batchItemsFrom,
  booleanFrom,
  idFrom,
  idsFrom,
  labelsFrom,
  parentFrom,
  pathsFrom,
  present,
  priorityFrom,
  statusFrom,
  stringFrom,
  type TodoInput,
} from './todo-input.js';
import { idList, lookupIn, renderResultBoard, summarize, type TodoResult } from './todo-result.js';

/** What an action's handler works with. */
export interface TodoContext {
  /** Who acts (claims, starts, completes). */
  owner: string;
  /** The board, opened on first use. */
  store(): TaskStore;
}

/** Runs one action on input whose fields were checked (checkFields). */
export type TodoHandler = (context: TodoContext, input: TodoInput) => Promise<TodoResult> | TodoResult;

/** The board after a change, and the board text the result carries. */
function after(s: TaskStore, whole = false): { snapshot: BoardSnapshot; board: string } {
  // The board a result carries is the open work; only `list` returns every task (a large history is not read otherwise).
  const snapshot = whole ? s.loadBoard() : s.loadOpenWork();
  return { snapshot, board: renderResultBoard(snapshot, s.config.echoBudget) };
}

export async function createAction({ owner, store }: TodoContext, input: TodoInput): Promise<TodoResult> {
  const subject = stringFrom(input.subject, 'subject');
  if (!subject?.trim()) throw new InputError('create needs a subject', 'give subject: a short one-line title, e.g. "Write the schema".');
  const s = store();
  const result = await s.createTask(
    {
      subject,
      description: stringFrom(input.description, 'description'),
      activeForm: stringFrom(input.active_form, 'active_form') || undefined,
      owner: stringFrom(input.owner, 'owner'),
      blockedBy: idsFrom(input.add_blocked_by, 'add_blocked_by'),
      parent: parentFrom(input.parent, 'parent', false) ?? undefined,
      paths: pathsFrom(input.paths),
      priority: priorityFrom(input.priority),
      labels: labelsFrom(input.add_labels, 'add_labels'),
      related: idsFrom(input.related, 'related', { single: true }),
      discoveredFrom: idsFrom(input.discovered_from, 'discovered_from', { single: true }),
      key: stringFrom(input.key, 'key') || undefined,
      review: booleanFrom(input.review, 'review'),
    },
    { actor: owner },
  );
  const { snapshot, board } = after(s);
  return {
    ok: true,
    action: 'create',
    message: result.alreadyApplied
      ? `Already created #${result.task.id}: ${result.task.subject} (by an earlier call with this key; nothing changed)`
      : `Created #${result.task.id}: ${result.task.subject}`,
    ...(result.alreadyApplied ? { alreadyApplied: true } : {}),
    task: summarize(result.task, lookupIn(snapshot)),
    board,
  };
}

/** The fields of an update besides its status. */
function patchFrom(input: TodoInput): UpdateTaskInput {
  const activeForm = stringFrom(input.active_form, 'active_form');
  return {
    subject: stringFrom(input.subject, 'subject'),
    description: stringFrom(input.description, 'description'),
    activeForm: activeForm === '' ? null : activeForm,
    owner: stringFrom(input.owner, 'owner'),
    addBlockedBy: idsFrom(input.add_blocked_by, 'add_blocked_by'),
    removeBlockedBy: idsFrom(input.remove_blocked_by, 'remove_blocked_by'),
    parent: parentFrom(input.parent, 'parent', true),
    paths: pathsFrom(input.paths),
    priority: priorityFrom(input.priority),
    addLabels: labelsFrom(input.add_labels, 'add_labels'),
    removeLabels: labelsFrom(input.remove_labels, 'remove_labels'),
    addRelated: idsFrom(input.related, 'related', { single: true }),
    removeRelated: idsFrom(input.remove_related, 'remove_related', { single: true }),
    addDiscoveredFrom: idsFrom(input.discovered_from, 'discovered_from', { single: true }),
    review: booleanFrom(input.review, 'review'),
  };
}

export async function updateAction({ owner, store }: TodoContext, input: TodoInput): Promise<TodoResult> {
  if (!present(input.task_id)) throw new InputError('update needs task_id', 'give task_id: the id of the task to change (see the board).');
  const id = idFrom(input.task_id, 'task_id');
  const status = statusFrom(input.status);
  if (present(input.result) && status !== 'completed')
    throw new InputError(
      'result goes with status "completed"',
      'give result together with status: "completed": what the work came to, for the tasks that wait for it.',
    );
  const patch = patchFrom(input);
  const hasFields = Object.values(patch).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined));
  if (!hasFields && status === undefined)
    throw new InputError(
      'update changes nothing',
      'give status, subject, description, active_form, owner, priority, add_labels, remove_labels, add_blocked_by, remove_blocked_by, parent, paths, related, remove_related, discovered_from or review.',
    );
  const s = store();
  const current = s.getTask(id);
  const heldByOther = current.owner !== '' && current.owner !== owner;
  if (status !== undefined && status !== current.status && heldByOther && (current.status === 'in_progress' || patch.owner === undefined))
    throw new TasksError('E_CLAIMED', `task #${id} is ${current.status === 'in_progress' ? 'in progress' : 'assigned'} for ${current.owner}`, {
      task: id,
      owner: current.owner,
    });

  let unblocked: number[] = [];
  let parents: number[] = [];
  let task: Task;
  if (status === 'completed' && current.status !== 'completed') {
    // Check before writing anything, so a refused completion leaves the fields alone too.
    const afterPatch = { ...current, blockedBy: current.blockedBy.filter((b) => !patch.removeBlockedBy!.includes(b)).concat(patch.addBlockedBy!) };
    const stillOpen = openBlockers(afterPatch, (n) => s.peekTask(n));
    if (stillOpen.length)
      throw new TasksError('E_BLOCKED', `task #${id} cannot be completed: it still waits for ${idList(stillOpen)}`, { task: id, blockedBy: stillOpen });
    const children = s.openChildrenOf(id);
    if (children.length)
      throw new TasksError('E_BLOCKED', `task #${id} cannot be completed: its children ${idList(children)} are still open`, { task: id, children });
    // The task's check before done runs first, without locks; the other fields are written only once it passed.
    const result = stringFrom(input.result, 'result');
    const done = await s.finishTask(id, {
      actor: owner,
      ...(result !== undefined ? { result } : {}),
      ...(hasFields ? { beforeComplete: () => s.updateTask(id, patch, { actor: owner }) } : {}),
    });
    task = done.task;
    unblocked = done.unblocked;
    parents = done.completedParents ?? [];
  } else if (status === 'pending' && current.status === 'in_progress') {
    if (hasFields) await s.updateTask(id, patch, { actor: owner });
    task = (await s.releaseTask(id, { actor: owner })).task;
  } else {
    const result = await s.updateTask(id, { ...patch, status: status === 'pending' ? undefined : status }, { actor: owner });
    task = result.task;
    unblocked = result.unblocked;
    parents = result.completedParents ?? [];
  }
  const { snapshot, board } = after(s);
  const verb = status === 'completed' ? 'Completed' : status === 'in_progress' ? 'Started' : status === 'deleted' ? 'Deleted' : 'Updated';
  const tail =
    (parents.length ? `; completed ${idList(parents)} (${parents.length === 1 ? 'its' : 'their'} children are done)` : '') +
    (unblocked.length ? `; unblocked ${idList(unblocked)}` : '');
  // Finished into review (docs/protocol.md, "Review"): it is in review, not completed, and its dependents still wait.
  const message = status === 'completed' && inReview(task) ? finishedIntoReview(task, owner) : `${verb} #${task.id}: ${task.subject}${tail}`;
  return {
    ok: true,
    action: 'update',
    message,
    task: summarize(task, lookupIn(snapshot)),
    unblocked,
    board,
  };
}

export function listAction({ store }: TodoContext, input: TodoInput): TodoResult {
  if (present(input.include_deleted) && typeof input.include_deleted !== 'boolean')
    throw new InputError('include_deleted must be true or false', 'give include_deleted: true to also see deleted tasks.');
  const { snapshot, board } = after(store(), true);
  const lookup = lookupIn(snapshot);
  const tasks = filterTasks(snapshot, { all: input.include_deleted === true }).map((t) => summarize(t, lookup));
  const inProgress = tasks.filter((t) => t.status === 'in_progress').length;
  const ready = tasks.filter((t) => t.ready).map((t) => `#${t.id}`);
  return {
    ok: true,
    action: 'list',
    message: `${tasks.length} task${tasks.length === 1 ? '' : 's'}; ${inProgress} in progress; ready: ${ready.join(', ') || 'none'}`,
    tasks,
    board,
  };
}

export function getAction({ store }: TodoContext, input: TodoInput): TodoResult {
  if (!present(input.task_id)) throw new InputError('get needs task_id', 'give task_id: the id of the task to read (see the board).');
  const s = store();
  const task = s.getTask(idFrom(input.task_id, 'task_id'));
  // What the tasks it waits for came to (their results), for whoever works on it next.
  // The open work and the blockers' own files: a large history is not read for a task's few blockers.
  const snapshot = s.loadOpenWork();
  const upstream = upstreamOf(task, blockersAmong(snapshot), (n) => s.peekTask(n));
  const lookup: TaskLookup = (n) => s.peekTask(n);
  lookup.openChildren = (n) => s.openChildrenOf(n);
  return {
    ok: true,
    action: 'get',
    message: `#${task.id}: ${task.subject}${upstream.length ? `; upstream: ${upstreamLine(upstream)}` : ''}`,
    task: toTaskView(task, lookup),
    ...(upstream.length ? { upstream } : {}),
  };
}

export async function clearAction({ owner, store }: TodoContext): Promise<TodoResult> {
  const s = store();
  const others = s.loadBoard().tasks.filter((t) => t.status === 'in_progress' && t.owner !== '' && t.owner !== owner);
  if (others.length)
    throw new TasksError(
      'E_CLAIMED',
      `clear refused: ${others.map((t) => `#${t.id} (${t.owner})`).join(', ')} ${others.length === 1 ? 'is' : 'are'} in progress for another owner`,
      { tasks: others.map((t) => t.id), owner: others[0].owner },
    );
  const { removed } = await s.clearBoard({ confirm: true, actor: owner });
  return {
    ok: true,
    action: 'clear',
    message: `Cleared the board (${removed.length} task${removed.length === 1 ? '' : 's'} removed)`,
    removed,
    board: after(s).board,
  };
}

export async function writeAction({ owner, store }: TodoContext, input: TodoInput): Promise<TodoResult> {
  const items = batchItemsFrom(input.todos);
  const s = store();
  refuseCheckedCompletions(s, items);
  const result = await s.batchWrite(items, { actor: owner });
  const { snapshot, board } = after(s);
  const lookup = lookupIn(snapshot);
  const created = items.filter((i) => i.id === undefined).length;
  return {
    ok: true,
    action: 'write',
    message: `Wrote ${items.length} entr${items.length === 1 ? 'y' : 'ies'} (${created} created, ${items.length - created} updated)${result.unblocked.length ? `; unblocked ${idList(result.unblocked)}` : ''}`,
    tasks: result.tasks.map((t) => summarize(snapshot.byId.get(t.id) ?? t, lookup)),
    unblocked: result.unblocked,
    board,
  };
}

export async function claimAction({ owner, store }: TodoContext, input: TodoInput): Promise<TodoResult> {
  const s = store();
  const result = present(input.task_id) ? await s.claimTask(idFrom(input.task_id, 'task_id'), { owner }) : await s.claimNext({ owner });
  let task = result.task;
  const activeForm = stringFrom(input.active_form, 'active_form');
  if (activeForm) task = (await s.updateTask(task.id, { activeForm }, { actor: owner })).task;
  const { snapshot, board } = after(s);
  return {
    ok: true,
    action: 'claim',
    message:
      `${result.alreadyHeld ? 'Already held' : 'Claimed'} #${task.id}: ${task.subject} (owner ${owner})` +
      (result.overlaps?.length ? `; careful: its paths overlap ${idList(result.overlaps.map((o) => o.task))}, in progress on the same files` : ''),
    task: summarize(task, lookupIn(snapshot)),
    unblocked: [],
    expiresAt: result.lease.expiresAt,
    board,
  };
}

export async function releaseAction({ owner, store }: TodoContext, input: TodoInput): Promise<TodoResult> {
  if (!present(input.task_id)) throw new InputError('release needs task_id', 'give task_id: the id of the task to give back.');
  const s = store();
  const result = await s.releaseTask(idFrom(input.task_id, 'task_id'), { actor: owner });
  const { snapshot, board } = after(s);
  return {
    ok: true,
    action: 'release',
    message: `Released #${result.task.id}: ${result.task.subject} (pending, no owner)`,
    task: summarize(result.task, lookupIn(snapshot)),
    board,
  };
}

export async function noteAction({ owner, store }: TodoContext, input: TodoInput): Promise<TodoResult> {
  if (!present(input.task_id)) throw new InputError('note needs task_id', 'give task_id: the task the note is about (see the board).');
  const text = stringFrom(input.text, 'text');
  if (!text?.trim()) throw new InputError('note needs text', 'give text: what you found or decided, e.g. "the lexer fails on CRLF input".');
  const s = store();
  const result = await s.addNote(idFrom(input.task_id, 'task_id'), text, { actor: owner });
  const { snapshot, board } = after(s);
  const notes = result.task.notes?.length ?? 0;
  return {
    ok: true,
    action: 'note',
    message: `Noted on #${result.task.id}: ${result.task.subject} (${notes} note${notes === 1 ? '' : 's'}; "get" shows them)`,
    task: summarize(result.task, lookupIn(snapshot)),
    board,
  };
}

/**
 * A batch is one transaction, and a check before done runs outside every
 * lock and may take minutes: an entry that would complete a task with a
 * check (its own verify, or the board's) is refused, with update named as
 * the way that runs it. Nothing of the batch is written.
 */
function refuseCheckedCompletions(s: TaskStore, items: BatchItem[]): void {
  for (const [index, item] of items.entries()) {
    if (item.status !== 'completed') continue;
    const task = item.id === undefined ? undefined : s.getTask(item.id);
    if (task?.status === 'completed') continue;
    const command = task ? (task.verify ?? s.config.verify) : s.config.verify;
    if (command === undefined) continue;
    throw new InputError(
      `todos[${index}]: ${task ? `#${task.id}` : 'a new task'} has a check before done (${command}), which write does not run`,
      `complete it with action "update", status "completed"${task ? `, task_id ${task.id}` : ' once it is created'}: that runs the check first. Nothing of this write was applied.`,
      { index, command },
    );
  }
}

/** The message of a completion that put the task in review instead. */
function finishedIntoReview(task: Task, owner: string): string {
  const who = task.owner && task.owner !== owner ? `someone other than ${task.owner}` : task.owner ? 'someone other than you' : 'someone';
  return `Finished #${task.id}: ${task.subject}; it is in review now, not completed: it completes (and unblocks what waits for it) when ${who} approves it. Take your next task meanwhile.`;
}

export async function approveAction({ owner, store }: TodoContext, input: TodoInput): Promise<TodoResult> {
  if (!present(input.task_id)) throw new InputError('approve needs task_id', 'give task_id: a task waiting for review ([?] on the board), not your own.');
  const s = store();
  const result = await s.approveTask(idFrom(input.task_id, 'task_id'), { actor: owner });
  const { snapshot, board } = after(s);
  const tail = result.unblocked.length ? `; unblocked ${idList(result.unblocked)}` : '';
  return {
    ok: true,
    action: 'approve',
    message: `Approved #${result.task.id}: ${result.task.subject} (${result.task.owner || 'nobody'}'s work); it is completed${tail}`,
    task: summarize(result.task, lookupIn(snapshot)),
    unblocked: result.unblocked,
    board,
  };
}

export async function rejectAction({ owner, store }: TodoContext, input: TodoInput): Promise<TodoResult> {
  if (!present(input.task_id)) throw new InputError('reject needs task_id', 'give task_id: a task waiting for review ([?] on the board), not your own.');
  const text = stringFrom(input.text, 'text');
  if (!text?.trim()) throw new InputError('reject needs text', 'give text: what its owner must fix, e.g. "the parser drops comments; add a test".');
  const s = store();
  const result = await s.rejectTask(idFrom(input.task_id, 'task_id'), { actor: owner, note: text });
  const { snapshot, board } = after(s);
  return {
    ok: true,
    action: 'reject',
    message: `Sent #${result.task.id}: ${result.task.subject} back to ${result.task.owner || 'the board'} (pending, with your note)`,
    task: summarize(result.task, lookupIn(snapshot)),
    board,
  };
}

/** `#1 (a result), #2 (no result)`: the upstream tasks in a get's message. */
function upstreamLine(upstream: UpstreamResult[]): string {
  return upstream.map((u) => `#${u.id} (${u.result === null ? 'no result' : 'result below'})`).join(', ');
}

/** Each action's handler. */
export const TODO_HANDLERS: Record<TodoAction, TodoHandler> = {
  create: createAction,
  update: updateAction,
  list: listAction,
  get: getAction,
  clear: clearAction,
  write: writeAction,
  claim: claimAction,
  release: releaseAction,
  note: noteAction,
  approve: approveAction,
  reject: rejectAction,
};
