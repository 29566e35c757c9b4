import {
  boardLookup,
  buildGraph,
  describeBranchStatus,
  shortBranchStatus,
  explainRank,
  hierarchyOf,
  inReview,
  isReady,
  priorityOf,
  isClosed,
  rankTasks,
  readLeases,
  taskHead,
  TasksError,
  viewOpenBlockers,
  type BoardSnapshot,
  type OpenSnapshot,
  type BranchStatus,
  type BranchStatusReader,
  type Task,
  type TaskLookup,
  type TaskStore,
} from '@dotasks/core/internal';
import { matches, type SearchedFields } from './task-match.js';
import type { Column, WebHistoryPage, WebState, WebTask, WebTaskAnswer, WebTaskRef } from './wire.js';

/** Which column a task stands in: in progress and done by status, pending by its open blockers. */
function columnOf(task: Task, open: number[]): Column {
  if (task.status === 'completed') return 'done';
  if (inReview(task)) return 'review';
  if (task.status === 'in_progress') return 'in_progress';
  return open.length ? 'blocked' : 'ready';
}

/** A task's soft links for the page, each a list (empty when the file has none). */
function linkLists(task: Task): Pick<WebTask, 'related' | 'discoveredFrom' | 'discovered'> {
  return { related: [...(task.related ?? [])], discoveredFrom: [...(task.discoveredFrom ?? [])], discovered: [...(task.discovered ?? [])] };
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** How many completed tasks the state holds for the Done column, the latest; the page asks for more (`/api/history`). */
export const RECENT_DONE = 50;

/** What a read of the board keeps besides the state: the whole snapshot, for the history the page asks for later. */
interface ReadContext {
  snapshot: BoardSnapshot;
  /** A task in full: a folded board's closed tasks are stubs in the snapshot, read from their files here. */
  full(id: number): Task | undefined;
  lookup: TaskLookup;
  hierarchy: ReturnType<typeof hierarchyOf>;
  leases: Map<number, Lease>;
  completedSeq: ReadonlyMap<number, number>;
}

type Lease = ReturnType<typeof readLeases>[number];

/** One read of the board: the state the page gets, and its history, which the page asks for in pages. */
export interface BoardRead {
  state: WebState;
  history: BoardHistory;
}

/** The completed tasks of one read, on demand (`GET /api/history`, `GET /api/task/ID`). */
export interface BoardHistory {
  /** Completed tasks latest first after `before` (from the start without it), those `query` finds when given (task-match.ts), at most `limit`. */
  page(options: { before?: number; limit: number; query?: string; branches?: BranchStatusReader }): WebHistoryPage;
  /** Any task that is not deleted, with the closed tasks it names; undefined for one deleted or not on the board. */
  task(id: number, branches?: BranchStatusReader): WebTaskAnswer | undefined;
}

/**
 * Reads the board for the page: the open tasks (and those in review) and the
 * latest `recentDone` completed ones, each with its column, readiness, graph
 * state, claim record and worktree; the closed tasks those name, as refs; the
 * rest of the history counted, and kept for the page to ask for
 * (docs/decisions.md, "The web board's history on demand"). The graph's edges
 * and critical path are `tasks graph`'s (the core's buildGraph, over the open
 * work and the closed tasks it names, which is what the open tasks' states
 * depend on); the Ready column's place in the claim order is rankTasks', as
 * `tasks ready` and `claim --next` order it; bad files are problems.
 * `completedSeq` maps a task to the event that completed it, for the Done
 * column's order.
 */
export function readBoard(
  store: TaskStore,
  actor: string,
  completedSeq: ReadonlyMap<number, number>,
  branchStatuses?: BranchStatusReader,
  recentDone = RECENT_DONE,
): BoardRead {
  // On a large history the open work alone (the core's open view), the closed tasks it shows read one by one.
  const snapshot = store.loadOpenWork();
  const ctx = readContext(store, snapshot, completedSeq);
  const { open, recent, completed, deleted } = splitBoard(store, ctx, recentDone);
  const held = [...open, ...recent].sort((a, b) => a.id - b.id);
  const heldIds = new Set(held.map((t) => t.id));
  const named = namedClosed(ctx, held, heldIds);
  // The graph of what the state holds, and the closed tasks it names (deleted ones too: a deleted blocker blocks nothing, a missing one does).
  const graph = buildGraph([...held, ...named]);
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const branches = readBranches(branchStatuses, held);
  const tasks = held.map((task) => taskView(ctx, task, nodes.get(task.id) ?? CLOSED_NODE, branches));
  rankReady(tasks, snapshot, ctx.lookup);
  const between = (e: { from: number; to: number }) => heldIds.has(e.from) && heldIds.has(e.to);
  const state: WebState = {
    now: new Date().toISOString(), // first: the feed swaps it for a fresh one (board-feed.ts)
    board: store.dir,
    actor,
    tasks,
    refs: named.filter((t) => t.status !== 'deleted').map(refOf),
    history: { completed, shown: recent.length, deleted },
    edges: graph.edges.filter(between),
    links: graph.links.filter(between),
    criticalPath: graph.criticalPath,
    problems: snapshot.problems.map((p) => ({ file: p.file, line: p.line, column: p.column, message: p.message })),
    reviewLane: store.config.review,
  };
  // The history's pages come from the whole board, read when a page is first asked for (a folded read did not read it).
  let whole: { ctx: ReadContext; done: Task[] } | undefined;
  const history = () => {
    if (!whole) {
      const board = snapshot.history ? store.loadBoard() : snapshot;
      const wholeCtx = snapshot.history ? readContext(store, board, completedSeq) : ctx;
      whole = {
        ctx: wholeCtx,
        done: inDoneOrder(
          board.tasks.filter((t) => t.status === 'completed'),
          completedSeq,
        ),
      };
    }
    return whole;
  };
  return { state, history: createHistory(ctx, history, () => state) };
}

function readContext(store: TaskStore, snapshot: OpenSnapshot, completedSeq: ReadonlyMap<number, number>): ReadContext {
  const read = new Map<number, Task | undefined>();
  const full = (id: number) => {
    if (!snapshot.history) return snapshot.byId.get(id);
    const seen = snapshot.byId.get(id);
    if (seen === undefined || !isClosed(seen.status) || seen.subject !== '' || read.has(id)) return read.has(id) ? read.get(id) : seen;
    const task = store.peekTask(id); // a stub: the closed task's own file
    read.set(id, task);
    return task;
  };
  // Knows each task's open children: a parent waits for them (docs/protocol.md, "Parents").
  return {
    snapshot,
    full,
    lookup: boardLookup(snapshot),
    hierarchy: hierarchyOf(snapshot),
    leases: new Map(readLeases(store).map((l) => [l.task, l])),
    completedSeq,
  };
}

/**
 * The open work, the latest completed tasks and the counts: from one pass
 * over the whole board, or on a folded one from the completion events (the
 * latest first) and the highest ids, each read from its file.
 */
function splitBoard(store: TaskStore, ctx: ReadContext, recentDone: number): { open: Task[]; recent: Task[]; completed: number; deleted: number } {
  const { snapshot, completedSeq } = ctx;
  const open: Task[] = [];
  const done: Task[] = [];
  let deleted = snapshot.history?.deleted ?? 0;
  for (const task of snapshot.tasks) {
    if (task.status === 'completed') done.push(task);
    else if (task.status === 'deleted') deleted++;
    else open.push(task);
  }
  if (!snapshot.history) return { open, recent: inDoneOrder(done, completedSeq).slice(0, recentDone), completed: done.length, deleted };
  const recent: Task[] = [];
  const taken = new Set<number>();
  const take = (id: number) => {
    if (recent.length >= recentDone || taken.has(id) || !snapshot.byId.has(id) || !isClosed(snapshot.byId.get(id)!.status)) return;
    taken.add(id);
    const task = ctx.full(id);
    if (task?.status === 'completed') recent.push(task);
  };
  for (const [id] of [...completedSeq].sort((a, b) => b[1] - a[1])) {
    if (recent.length >= recentDone) break;
    take(id);
  }
  const top = Math.max(0, readHighWaterMark(store));
  for (let id = top; id >= 1 && recent.length < recentDone && taken.size < recentDone * 4 + completedSeq.size; id--) take(id);
  return { open, recent: inDoneOrder(recent, completedSeq), completed: snapshot.history.completed, deleted };
}

function readHighWaterMark(store: TaskStore): number {
  try {
    return store.readHighWaterMark() ?? 0;
  } catch {
    return 0;
  }
}

/** readBoard's state alone. */
export function readBoardState(store: TaskStore, actor: string, completedSeq: ReadonlyMap<number, number>, branchStatuses?: BranchStatusReader): WebState {
  return readBoard(store, actor, completedSeq, branchStatuses).state;
}

/** A completed task's graph state: done, never on the critical path (a chain of open tasks). */
const CLOSED_NODE = { state: 'done', critical: false } as const;

/**
 * Completed tasks in the Done column's order: by the event that completed
 * each, latest first, else the highest id (the page's doneOrder). Sorted on
 * one number a task, not two map lookups a comparison: on a 90,000-task
 * history that was a tenth of the read.
 */
function inDoneOrder(done: Task[], completedSeq: ReadonlyMap<number, number>): Task[] {
  const keyed = done.map((task) => ({ task, seq: completedSeq.get(task.id) ?? 0 }));
  keyed.sort((a, b) => b.seq - a.seq || b.task.id - a.task.id);
  return keyed.map((k) => k.task);
}

/**
 * The closed tasks that `held` name and do not hold: blockers and
 * dependents, links, children, and each one's parents up the chain (a card's
 * `↑ #4 Epic`, a panel's `part of #2, under #1`). Ascending id.
 */
function namedClosed({ full, hierarchy }: ReadContext, held: readonly Task[], heldIds: ReadonlySet<number>): Task[] {
  const out = new Map<number, Task>();
  const add = (id: number | undefined) => {
    if (id === undefined || heldIds.has(id) || out.has(id)) return;
    const task = full(id);
    if (!task || !isClosed(task.status)) return; // an open one is in the state
    out.set(id, task);
    add(task.parent); // the chain goes on through closed parents
  };
  for (const task of held) {
    for (const id of task.blockedBy) add(id);
    for (const id of task.blocks) add(id);
    for (const field of ['related', 'discoveredFrom', 'discovered'] as const) for (const id of task[field] ?? []) add(id);
    for (const child of hierarchy.children(task.id)) add(child.id);
    add(task.parent);
  }
  return [...out.values()].sort((a, b) => a.id - b.id);
}

function refOf(task: Task): WebTaskRef {
  const ref: WebTaskRef = { id: task.id, subject: task.subject, status: task.status, column: task.status === 'completed' ? 'done' : 'blocked' };
  if (task.parent !== undefined) ref.parent = task.parent;
  return ref;
}

/** The history of one read: completed tasks in the Done column's order, from the whole board (`whole`, read once when first asked). */
function createHistory(now: ReadContext, whole: () => { ctx: ReadContext; done: readonly Task[] }, state: () => WebState): BoardHistory {
  // Built on the first page asked for after a task, not on every read: most reads are never paged.
  let at: Map<number, number> | undefined;
  /** Closed tasks as the page shows them, and the closed tasks they name. */
  const answer = (ctx: ReadContext, tasks: Task[], branches: BranchStatusReader | undefined) => {
    const ids = new Set(tasks.map((t) => t.id));
    const statuses = readBranches(branches, tasks);
    return {
      tasks: tasks.map((t) => taskView(ctx, t, CLOSED_NODE, statuses)),
      refs: namedClosed(ctx, tasks, ids)
        .filter((t) => t.status !== 'deleted')
        .map(refOf),
    };
  };
  return {
    page({ before, limit, query, branches }) {
      const { ctx, done } = whole();
      let from = 0;
      if (before !== undefined) {
        at ??= new Map(done.map((t, i) => [t.id, i]));
        const i = at.get(before);
        if (i === undefined) throw new TasksError('E_NOT_FOUND', `#${before} is not among the completed tasks; ask for the history from its start`);
        from = i + 1;
      }
      const found: Task[] = [];
      let i = from;
      for (; i < done.length && found.length < limit; i++) {
        const task = done[i];
        if (query === undefined || matches(searchedFields(task), query)) found.push(task);
      }
      return { ...answer(ctx, found, branches), more: i < done.length };
    },
    task(id, branches) {
      // One task: its own file, not the whole history.
      const task = now.full(id);
      if (!task || task.status === 'deleted') return undefined;
      if (!isClosed(task.status)) {
        const view = state().tasks.find((t) => t.id === id);
        return view && { task: view, refs: [] }; // the state holds it, and what it names
      }
      const { tasks, refs } = answer(now, [task], branches);
      return { task: tasks[0], refs };
    },
  };
}

/** What a search reads of a task, as its view has it: a whole view of each completed task would also work out its blockers, readiness and progress. */
function searchedFields(task: Task): SearchedFields {
  return {
    id: task.id,
    subject: task.subject,
    labels: task.labels ?? [],
    description: task.description,
    notes: task.notes ?? [],
    owner: task.owner,
    activeForm: task.activeForm ?? null,
    branch: text(task.metadata?.branch),
  };
}

/** One task as the page shows it. `node`: its graph state; a closed task not in the graph is done and off the critical path. */
function taskView(ctx: ReadContext, task: Task, node: { state: WebTask['state']; critical: boolean }, branches: ReadonlyMap<number, BranchStatus>): WebTask {
  const { lookup, hierarchy, leases, completedSeq } = ctx;
  const open = viewOpenBlockers(task, lookup);
  const children = task.status === 'pending' ? [...(lookup.openChildren?.(task.id) ?? [])] : [];
  const view: WebTask = {
    ...taskHead(task),
    blockedBy: [...task.blockedBy],
    blocks: [...task.blocks],
    openBlockers: open,
    openChildren: children,
    ready: isReady(task, lookup),
    column: columnOf(task, [...open, ...children]),
    state: node.state,
    critical: node.critical,
    priority: priorityOf(task),
    labels: [...(task.labels ?? [])],
    notes: (task.notes ?? []).map((n) => ({ at: n.at, owner: n.owner, text: n.text })),
    paths: [...(task.paths ?? [])],
    ...linkLists(task),
    ...(task.parent !== undefined ? { parent: task.parent } : {}),
  };
  const progress = hierarchy.progress(task.id);
  if (progress) view.progress = progress;
  const lease = leases.get(task.id);
  // A record whose task is no longer in progress is a leftover the reaper removes; it holds nothing. On a task in review it is its reviewer's.
  if (task.review) view.review = reviewView(task.review);
  if (lease?.review && inReview(task)) view.reviewer = lease.owner;
  else if (lease && task.status === 'in_progress') {
    view.lease = { owner: lease.owner, host: lease.host, claimedAt: lease.claimedAt, expiresAt: lease.expiresAt };
    if (lease.pid !== undefined) view.lease.pid = lease.pid;
    if (lease.worktree !== undefined) view.lease.worktree = lease.worktree;
  }
  const worktree = text(task.metadata?.worktree) ?? lease?.worktree;
  if (worktree) view.worktree = worktree;
  const branch = text(task.metadata?.branch);
  if (branch) view.branch = branch;
  const status = branches.get(task.id);
  if (status) view.branchStatus = webBranchStatus(status);
  const lastError = text(task.metadata?.lastError);
  if (lastError) view.lastError = lastError;
  const seq = completedSeq.get(task.id);
  if (seq !== undefined && task.status === 'completed') view.completedSeq = seq;
  return view;
}

/** The Ready column's place in the claim order. Assigned tasks stand in Ready too (ready for their assignee); the ranks compare alike whoever asks. */
function rankReady(tasks: WebTask[], snapshot: BoardSnapshot, lookup: TaskLookup): void {
  const ready = tasks.filter((t) => t.column === 'ready');
  const byId = new Map(ready.map((t) => [t.id, t]));
  rankTasks(
    ready.map((t) => snapshot.byId.get(t.id)!),
    lookup,
  ).forEach((rank, at) => {
    const view = byId.get(rank.id)!;
    view.claimOrder = at;
    view.claimWhy = explainRank(rank);
  });
}

/** The statuses of the task branches; a git that cannot answer costs them, never the board. */
function readBranches(reader: BranchStatusReader | undefined, tasks: readonly Task[]): Map<number, BranchStatus> {
  try {
    return reader?.read(tasks) ?? new Map();
  } catch {
    return new Map();
  }
}

function webBranchStatus(status: BranchStatus): NonNullable<WebTask['branchStatus']> {
  const { target, exists, ahead, behind, clean, merged } = status;
  return { target, exists, ahead, behind, clean, merged, summary: describeBranchStatus(status), short: shortBranchStatus(status) };
}

/** The known keys of a task's review, for the page. */
function reviewView(review: NonNullable<Task['review']>): NonNullable<WebTask['review']> {
  const out: NonNullable<WebTask['review']> = {};
  if (typeof review.required === 'boolean') out.required = review.required;
  if (review.state) out.state = review.state;
  for (const key of ['since', 'by', 'at'] as const) if (typeof review[key] === 'string') out[key] = review[key];
  return out;
}
