import {
  boardLookup,
  inReview,
  isReady,
  presentLinks,
  renderAgentBoard,
  taskHead,
  viewOpenBlockers,
  type BoardSnapshot,
  type Task,
  type TaskHead,
  type TaskLookup,
  type TaskView,
  type UpstreamResult,
} from '@dotasks/core/internal';
import type { TodoAction } from './schema.js';

/** A task in a mutating result or in `list`: the head of every view (TaskHead) without the description, then what it waits for. */
export interface TaskSummary extends Omit<TaskHead, 'description'> {
  /** The task it is part of, only when it has one. */
  parent?: number;
  /** Open blockers only: what it still waits for. */
  blockedBy: number[];
  blocks: number[];
  /** The file scope, only when the task declares one. */
  paths?: string[];
  ready: boolean;
  /** Only when not the default (2): 0 is the most urgent. */
  priority?: number;
  /** Only when the task has some. */
  labels?: string[];
  /** Soft links (docs/protocol.md, "Links"), each only when it has ids; they block nothing. */
  related?: number[];
  discoveredFrom?: number[];
  discovered?: number[];
  /** Only for a task waiting for review (docs/protocol.md, "Review"): in progress, its work finished, until someone other than its owner approves it. */
  inReview?: true;
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
      /** create with a key an earlier create used: the task it made, nothing written. */
      alreadyApplied?: boolean;
      /** get: the tasks it waits for (or waited for) and their results. */
      upstream?: UpstreamResult[];
      /** `<TASK_BOARD>…</TASK_BOARD>` after the change (every mutating action, and list). */
      board?: string;
    }
  | { ok: false; action?: string; error: TodoError; board?: string };

/** A task as results show it, its readiness and open blockers judged against `lookup`. */
export function summarize(task: Task, lookup: TaskLookup): TaskSummary {
  const { description: _description, ...head } = taskHead(task);
  return {
    ...head,
    ...(task.parent !== undefined ? { parent: task.parent } : {}),
    blockedBy: viewOpenBlockers(task, lookup),
    blocks: [...task.blocks],
    ...(task.paths ? { paths: [...task.paths] } : {}),
    ready: isReady(task, lookup),
    ...(task.priority !== undefined && task.priority !== 2 ? { priority: task.priority } : {}),
    ...(task.labels?.length ? { labels: [...task.labels] } : {}),
    ...presentLinks(task),
    ...(inReview(task) ? { inReview: true as const } : {}),
  };
}

/** The board as results carry it: `<TASK_BOARD>…</TASK_BOARD>`, within the board's `echoBudget`. */
export function renderResultBoard(snapshot: BoardSnapshot, budget?: number): string {
  return renderAgentBoard(snapshot, { budget });
}

/** Looks tasks up in one snapshot, so a result's tasks and its board agree (their open children too, for `ready`). */
export function lookupIn(snapshot: BoardSnapshot): TaskLookup {
  return boardLookup(snapshot);
}

/** "#2, #3": ids as results spell them. */
export function idList(ids: number[]): string {
  return ids.map((id) => `#${id}`).join(', ');
}

/**
 * One text for a model: the result as JSON without the board, then the board
 * itself (so its lines are not escaped inside a JSON string).
 */
export function renderToolResult(result: TodoResult): string {
  const { board, ...rest } = result;
  return board ? `${JSON.stringify(rest, null, 2)}\n${board}` : JSON.stringify(rest, null, 2);
}
