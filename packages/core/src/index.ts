/**
 * The public API of `@dotasks/core`, chosen name by name: once published,
 * each name here is a promise (docs/library.md; docs/decisions.md, "A
 * deliberate public API"). What only the sibling packages need (locks, the
 * transaction, leases, jobs, journal, the watcher's record …) is in
 * `@dotasks/core/internal`, which makes no promise. The list is pinned by
 * public-api.test.ts: a change to it is a change of the contract.
 */

// The board: finding it, opening it, and every change through the store.
export { findBoard, resolveBoardDir, type FindBoardOptions } from './find-board.js';
export { resolveOwner, type OwnerSource } from './owner.js';
export { readConfig, type BoardConfig } from './board-config.js';
export {
  TaskStore,
  type ActorOptions,
  type BatchItem,
  type BoardSnapshot,
  type ClaimOptions,
  type ClaimResult,
  type CreateTaskInput,
  type MutationResult,
  type ReapedTask,
  type ScopeOverlap,
  type TaskProblem,
  type UpdateOptions,
  type UpdateTaskInput,
} from './store.js';

// The errors, with their stable codes (docs/protocol.md, "Exit statuses").
export { ClaimError, CorruptTaskError, CycleError, TasksError, type ClaimRefusal, type ErrorCode } from './errors.js';

// Checks before done and results (docs/protocol.md, "Checks before done"): TaskStore.finishTask runs a task's check.
export { VerifyError, type CheckRun, type CheckSpec } from './runtime/verify-run.js';
export type { FinishOptions, FinishResult } from './engine/verify.js';
export type { UpstreamResult } from './engine/results.js';

// Tasks and reading them.
export {
  TASK_STATUSES,
  inReview,
  isClosed,
  parseTaskId,
  type ReviewState,
  type Task,
  type TaskNote,
  type TaskReview,
  type TaskStatus,
} from './format/format.js';
// Review before done (docs/protocol.md, "Review"): TaskStore.approveTask, rejectTask and claimReview act on the queue.
export { reviewQueue, type ReviewClaim, type VerdictOptions } from './engine/review.js';
export { findCycle, isReady, openBlockers, type TaskLookup } from './graph/graph.js';
export { explainRank, readyOrder, type ReadyRank } from './graph/ready-order.js';
export {
  PLAIN_STYLE,
  countTasks,
  filterTasks,
  renderBoard,
  renderProblem,
  renderReviewWait,
  renderSummary,
  renderTaskDetail,
  renderTaskLine,
  searchTasks,
  type BoardCounts,
  type BoardView,
  type ListFilter,
  type RenderStyle,
  type SearchHit,
} from './views/render.js';
export { toTaskView, type TaskView } from './views/task-view.js';
export { GRAPH_FORMATS, renderGraph, type GraphFormat, type GraphOptions } from './graph/graph-render.js';
export { EXPORT_FORMATS, exportBoard, type ExportFormat, type ExportOptions } from './io/board-export.js';

// The event log.
export { EVENTS_FILE, parseEvents, type EventType, type TaskEvent } from './events/events.js';
export {
  followEvents,
  waitForTask,
  type EventFollower,
  type FollowEventsOptions,
  type Follower,
  type WaitForTaskOptions,
  type WaitOutcome,
} from './events/follow.js';

// Claims held by a process of its own, and claims with a worktree.
export { watchClaim, type ClaimLoss, type ClaimLossReason, type ClaimWatch, type WatchClaimOptions } from './runtime/claim-watch.js';
export {
  claimWithWorktree,
  listTaskWorktrees,
  removeTaskWorktree,
  type ClaimWorktreeOptions,
  type TaskWorktree,
  type WorktreeClaimResult,
} from './git/worktrees.js';

// Checking and repairing a board (`tasks doctor`).
export {
  diagnoseBoard,
  repairBoard,
  type DoctorChange,
  type DoctorFinding,
  type DoctorOptions,
  type DoctorReport,
  type FindingCode,
  type RepairReport,
} from './doctor/doctor.js';

// Several machines: the board shared through a branch of a git remote (docs/decisions.md, "Several machines").
export { claimWithSync, syncBoard, type SyncChange, type SyncOptions, type SyncReport } from './sync/sync.js';
