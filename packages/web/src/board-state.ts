import {
  boardLookup,
  buildGraph,
  describeBranchStatus,
  shortBranchStatus,
  explainRank,
  hierarchyOf,
  inReview,
  isReady,
  openBlockers,
  priorityOf,
  rankTasks,
  readLeases,
  type BoardSnapshot,
  type BranchStatus,
  type BranchStatusReader,
  type Task,
  type TaskLookup,
  type TaskStore,
} from '@dotasks/core/internal';
import type { Column, WebState, WebTask } from './wire.js';

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

/**
 * Reads the board for the page: every task that is not deleted with its
 * column, readiness, graph state, claim record and worktree; the graph's
 * edges and critical path as `tasks graph` computes them (the core's
 * buildGraph); the Ready column's place in the claim order (rankTasks, as
 * `tasks ready` and `claim --next` order it); bad files as problems. `completedSeq` maps a task to the
 * event that completed it, for the Done column's order.
 */
export function readBoardState(store: TaskStore, actor: string, completedSeq: ReadonlyMap<number, number>, branchStatuses?: BranchStatusReader): WebState {
  const snapshot = store.loadBoard();
  const branches = readBranches(branchStatuses, snapshot.tasks);
  // Knows each task's open children: a parent waits for them (docs/protocol.md, "Parents").
  const lookup = boardLookup(snapshot);
  const graph = buildGraph(snapshot.tasks);
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const leases = new Map(readLeases(store).map((l) => [l.task, l]));
  const hierarchy = hierarchyOf(snapshot);
  const tasks: WebTask[] = [];
  for (const task of snapshot.tasks) {
    const node = nodes.get(task.id);
    if (!node) continue; // deleted: hidden, as in `tasks list`
    const open = task.status === 'pending' || task.status === 'in_progress' ? openBlockers(task, lookup) : [];
    const children = task.status === 'pending' ? [...(lookup.openChildren?.(task.id) ?? [])] : [];
    const view: WebTask = {
      id: task.id,
      subject: task.subject,
      description: task.description,
      status: task.status,
      owner: task.owner,
      activeForm: task.activeForm ?? null,
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
    tasks.push(view);
  }
  tasks.sort((a, b) => a.id - b.id);
  rankReady(tasks, snapshot, lookup);
  return {
    now: new Date().toISOString(), // first: the feed swaps it for a fresh one (board-feed.ts)
    board: store.dir,
    actor,
    tasks,
    edges: graph.edges,
    links: graph.links,
    criticalPath: graph.criticalPath,
    problems: snapshot.problems.map((p) => ({ file: p.file, line: p.line, column: p.column, message: p.message })),
    reviewLane: store.config.review,
  };
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
function readBranches(reader: BranchStatusReader | undefined, tasks: Task[]): Map<number, BranchStatus> {
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
