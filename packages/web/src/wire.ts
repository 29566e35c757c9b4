/**
 * What the server and the page say to each other: the board as the page
 * shows it (`GET /api/state`, the `state` server-sent event), the event log
 * (`events`), and the answers of writes. Types only, shared with the page
 * (page/), so both sides are checked against one definition.
 */

/** The columns of the kanban (review: the tasks waiting for review, docs/protocol.md, "Review"); deleted tasks are not shown. */
export type Column = 'ready' | 'blocked' | 'in_progress' | 'review' | 'done';

/** How a graph node looks (the core's NodeState: docs/people-and-git.md, the graph). */
export type WebNodeState = 'done' | 'active' | 'ready' | 'blocked' | 'waiting' | 'deleted';

/** A claim record as the page shows it (docs/protocol.md, "Leases"). */
export interface WebLease {
  owner: string;
  host: string;
  pid?: number;
  worktree?: string;
  claimedAt: string;
  /** null: a person's claim, which never expires. */
  expiresAt: string | null;
}

/** One of a task's notes (docs/protocol.md, "One task, one file"): when (ISO), who, what. */
export interface WebNote {
  at: string;
  owner: string;
  text: string;
}

/** One task, with what is computed on read (docs/protocol.md, "Ready"). */
export interface WebTask {
  id: number;
  subject: string;
  description: string;
  status: 'pending' | 'in_progress' | 'completed' | 'deleted';
  owner: string;
  activeForm: string | null;
  blockedBy: number[];
  blocks: number[];
  openBlockers: number[];
  /** A pending parent's children that are not closed: it waits for them as for its blockers. */
  openChildren: number[];
  ready: boolean;
  column: Column;
  state: WebNodeState;
  /** On the critical path of `tasks graph` (the longest chain of open tasks). */
  critical: boolean;
  /** 0 (most urgent) … 4; 2 when the file has none (docs/protocol.md, "Order"). */
  priority: number;
  /** Sorted, without repeats. */
  labels: string[];
  /** Oldest first. */
  notes: WebNote[];
  /** The file scope: globs of the files the task expects to change. */
  paths: string[];
  /** Soft links (docs/protocol.md, "Links"), sorted; they block nothing. `discoveredFrom`: found while working on those; `discovered`: found while working on this one. */
  related: number[];
  discoveredFrom: number[];
  discovered: number[];
  /** The task it is part of, when it has one (docs/protocol.md, "Parents"). */
  parent?: number;
  /** A parent's progress: its completed children of all but the deleted ones (`3/5 done`); absent for a task without children. */
  progress?: { done: number; total: number };
  /**
   * Ready column only: the place in the order `claim --next` takes ready
   * work (0 first: priority, the chain of open work behind, id; the core's
   * rankTasks), and why, as `tasks ready --explain` prints it.
   */
  claimOrder?: number;
  claimWhy?: string;
  /** metadata.worktree / metadata.branch (docs/protocol.md, "Claims"), else the lease's worktree. */
  worktree?: string;
  branch?: string;
  /** The branch against the merge target (docs/protocol.md, "The way back to main"); `summary` is `ahead 3 · behind 1 · clean`, `… · conflicts`, `merged`; `short`, the card's, is `↑3 ↓1`, `↑3 ↓1 conflicts`, `merged` or `gone`. */
  branchStatus?: { target: string; exists: boolean; ahead: number; behind: number; clean: boolean; merged: boolean; summary: string; short: string };
  lastError?: string;
  lease?: WebLease;
  /** The seq of the event that completed it, for the Done column's order (latest first). */
  completedSeq?: number;
  /** Its review, as the file has it (docs/protocol.md, "Review"): `state` waiting (with `since`) in the Review column. */
  review?: { required?: boolean; state?: 'waiting' | 'approved' | 'rejected'; since?: string; by?: string; at?: string };
  /** Review column only: the reviewer whose claim is on it now. */
  reviewer?: string;
}

/** A file that is not a valid task, reported as `tasks list` does. */
export interface WebProblem {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

/**
 * A closed task named by a task the page holds (a blocker, a dependent, a
 * parent up the chain, a child, a link), as much as the page shows of it:
 * its name and status in a panel, its subject on a card's `↑ #4 Epic` line.
 */
export type WebTaskRef = Pick<WebTask, 'id' | 'subject' | 'status' | 'column' | 'parent'>;

/** What the board holds beyond the state it sends: the history, counted (docs/protocol.md, "The web board"). */
export interface WebHistory {
  /** Completed tasks on the board, of which the state's `tasks` hold the latest `shown`. */
  completed: number;
  shown: number;
  /** Deleted tasks (never shown). */
  deleted: number;
}

/** The open work and the latest completions at one moment; the rest of the history comes on demand (`GET /api/history`, `GET /api/task/ID`). */
export interface WebState {
  /** The board folder. */
  board: string;
  /** Who the server acts as on writes (`tasks serve --owner`, else TASKS_OWNER, else the user). */
  actor: string;
  /** The server's clock when this was read (ISO), so lease countdowns do not depend on the browser's clock. */
  now: string;
  /** Every open task (pending, in progress, in review) and the latest completed ones (`history.shown`), ascending id. */
  tasks: WebTask[];
  /** The closed tasks those name that are not among them (deleted ones are not on the page), ascending id. */
  refs: WebTaskRef[];
  history: WebHistory;
  /** `from` blocks `to`, between the state's tasks; `critical` on the critical path. */
  edges: { from: number; to: number; critical: boolean }[];
  /** Soft links between the state's tasks, as `tasks graph --json` has them: `related`, or `discovered-from` (`from` was found while on `to`). */
  links: { from: number; to: number; type: 'related' | 'discovered-from' }[];
  criticalPath: number[];
  problems: WebProblem[];
  /** The board requires review (config.json's "review"): the Review column shows even while it is empty. */
  reviewLane: boolean;
}

/** One line of the event log (docs/protocol.md, "Events"). */
export interface WebEvent {
  seq: number;
  at: string;
  type: string;
  task?: number;
  owner?: string;
  [key: string]: unknown;
}

/** A refused or failed request: the core's stable code and its message. */
export interface WebError {
  error: { code: string; message: string };
}

/** The answer of a write. */
export interface WebWriteResult {
  task: number;
  /** Tasks whose last open blocker this write closed. */
  unblocked: number[];
}

/**
 * `GET /api/history?before=ID&limit=N&q=WORDS`: completed tasks in the Done
 * column's order (latest first) after `before` (from the start without it),
 * those the search words find when `q` is given; with the closed tasks they
 * name (refs). `more`: there are further ones.
 */
export interface WebHistoryPage {
  tasks: WebTask[];
  refs: WebTaskRef[];
  more: boolean;
}

/** `GET /api/task/ID`: one task that is not deleted, open or closed, with the closed tasks it names. */
export interface WebTaskAnswer {
  task: WebTask;
  refs: WebTaskRef[];
}
