/**
 * The JSON view of a task (`--json`, the agent tool, `tasks export`): the
 * documented shape, which only ever gains fields, with what is computed on
 * read (readiness, open blockers), and the head every view of a task opens
 * with (the web board's and the agent tool's summary share it).
 */
import { isClosed, priorityOf, type Task, type TaskNote, type TaskReview, type TaskStatus } from '../format/format.js';
import { writeLinkFields } from '../format/task-links.js';
import { isReady, openBlockers, type TaskLookup } from '../graph/graph.js';

/**
 * What every view of a task opens with, in this order: who it is, where it
 * stands, who holds it (`--json` and the web board; the agent tool's summary
 * leaves the description out).
 */
export interface TaskHead {
  id: number;
  subject: string;
  description: string;
  status: TaskStatus;
  owner: string;
  activeForm: string | null;
}

/**
 * The documented JSON shape of one task (`--json`, the agent tool). Stable:
 * fields are only ever added. `ready` and `openBlockers` are computed on read.
 */
export interface TaskView extends TaskHead {
  /** The task it is part of, only when it has one (docs/protocol.md, "Parents"). */
  parent?: number;
  blockedBy: number[];
  blocks: number[];
  /** The task's file scope (globs), only when it declares one. */
  paths?: string[];
  /** Soft links (docs/protocol.md, "Links"), each only when it has ids: never part of `ready`. */
  related?: number[];
  discoveredFrom?: number[];
  discovered?: number[];
  metadata: Record<string, unknown>;
  ready: boolean;
  /** Ids in blockedBy that are not completed or deleted (missing ones included). */
  openBlockers: number[];
  /** 0 (highest) to 4; 2 when the file has none. */
  priority: number;
  labels: string[];
  /** Oldest first. */
  notes: TaskNote[];
  /** The task's own check before done, only when it has one (the board's is in config.json). */
  verify?: string;
  /** What the work came to, only when it was given one. */
  result?: string;
  /** Whether it requires review and where that stands, only when the file has it (waiting: `status` in_progress and `review.state` waiting). */
  review?: TaskReview;
}

/** The head of every view of a task (TaskHead), its keys in their order. */
export function taskHead(task: Task): TaskHead {
  return { id: task.id, subject: task.subject, description: task.description, status: task.status, owner: task.owner, activeForm: task.activeForm ?? null };
}

/** The ids a task still waits for, as every view gives them: its open blockers (missing ones included), none once it is closed. */
export function viewOpenBlockers(task: Task, lookup: TaskLookup): number[] {
  return isClosed(task.status) ? [] : openBlockers(task, lookup);
}

/**
 * The JSON view of a task. Built key by key in the documented order, not
 * spread together from pieces: an export of 300,000 tasks spent 2.3 s in the
 * spreads alone (and more in collecting their pieces).
 */
export function toTaskView(task: Task, lookup: TaskLookup): TaskView {
  const view = taskHead(task) as TaskView;
  if (task.parent !== undefined) view.parent = task.parent;
  view.blockedBy = task.blockedBy.slice();
  view.blocks = task.blocks.slice();
  if (task.paths !== undefined) view.paths = task.paths.slice();
  writeLinkFields(task, (key, ids) => (view[key] = ids));
  view.metadata = task.metadata ? { ...task.metadata } : {};
  view.ready = isReady(task, lookup);
  view.openBlockers = viewOpenBlockers(task, lookup);
  view.priority = priorityOf(task);
  view.labels = task.labels ? task.labels.slice() : [];
  view.notes = task.notes ? task.notes.map((n) => ({ ...n })) : [];
  if (task.verify !== undefined) view.verify = task.verify;
  if (task.result !== undefined) view.result = task.result;
  if (task.review !== undefined) view.review = { ...task.review };
  return view;
}
