/**
 * What the sibling packages (agent, worker, watch, terminal board, web, the
 * CLI), their tests and the scripts use of the core, as
 * `@dotasks/core/internal`: no promise to anyone else, it changes with them.
 * The public API is index.ts, whose names are here too, and so are those of
 * the read and store entries (public-api.test.ts holds all three to that).
 * Each name is listed by hand, by the module that defines it: a name a
 * sibling starts to use is added here on purpose, and one nobody uses any
 * more is taken out.
 */
export { type BoardConfig, readConfig } from './board-config.js';
export { BoardGraph } from './consistency/board-graph.js';
export { checkBoard, checkChangedTask, type BoardCheck } from './consistency/reconcile.js';
export { applyFinding } from './consistency/repair.js';
export { type BoardFinding } from './consistency/verdicts.js';
export { diagnoseBoard, repairBoard } from './doctor/doctor.js';
export { type DoctorChange, type DoctorFinding, type DoctorOptions, type DoctorReport, type FindingCode, type RepairReport } from './doctor/findings.js';
export { loadBoardSnapshot } from './engine/board-index.js';
export { blockersAmong, closedAround, withClosedRead, type OpenSnapshot } from './engine/folded-view.js';
export { loadOpenSnapshot } from './engine/open-view.js';
export { BOARD_INDEX_FILE } from './engine/index-file.js';
export { LIST_SUMMARY_FILE, listSummaryCache, type ReadySummaryCache } from './runtime/list-summary.js';
export { hashText } from './engine/journal.js';
export { clipResult, MAX_RESULT_CHARS } from './engine/outcome-fields.js';
export { type UpstreamResult, upstreamEnv, upstreamOf } from './engine/results.js';
export { checkEnv, checkFailureNote, checkOf, type FinishOptions, type FinishResult, recordCheckFailure, runTaskCheck, taskWorktree } from './engine/verify.js';
export {
  type ActorOptions,
  type BatchItem,
  BOARD_GITIGNORE,
  BOARD_LOCK,
  type BoardSnapshot,
  type ClaimOptions,
  type ClaimResult,
  type CreateTaskInput,
  type MutationResult,
  type ReapedTask,
  RUNTIME_DIR,
  type ScopeOverlap,
  type TaskProblem,
  type UpdateOptions,
  type UpdateTaskInput,
} from './engine/store-types.js';
export { HIGHWATERMARK_FILE } from './engine/transaction.js';
export { ClaimError, type ClaimRefusal, CorruptTaskError, CycleError, type ErrorCode, formatCycle, isErrnoException, TasksError } from './errors.js';
export { EVENTS_FILE, type EventType, type NewEvent, parseEvents, readLastSeq, type TaskEvent } from './events/events.js';
export {
  type EventFollower,
  type Follower,
  followEvents,
  type FollowEventsOptions,
  waitForTask,
  type WaitForTaskOptions,
  type WaitOutcome,
  watchFolder,
} from './events/follow.js';
export { findBoard, type FindBoardOptions, resolveBoardDir } from './find-board.js';
export {
  createRecord,
  DEFAULT_PRIORITY,
  idFromFileName,
  inReview,
  isClosed,
  MAX_PRIORITY,
  parseTask,
  parseTaskId,
  priorityOf,
  reviewRequired,
  serializeTask,
  type Task,
  TASK_STATUSES,
  taskFileName,
  type TaskNote,
  type TaskReview,
  type TaskStatus,
} from './format/format.js';
export { type ReviewClaim, reviewQueue, type VerdictOptions } from './engine/review.js';
export { LINK_FIELDS, type LinkField, presentLinks } from './format/task-links.js';
export { atomicWriteFile } from './fs/fsio.js';
export { acquireLock } from './fs/locks.js';
export { hintWord, ownerFlag } from './hints.js';
export { reconcileBranches } from './git/branch-reconcile.js';
export {
  type BranchStatus,
  type BranchStatusReader,
  createBranchStatusReader,
  describeBranchStatus,
  shortBranchStatus,
  taskBranch,
} from './git/branch-status.js';
export { assertBoardInGit, setupGitMerge, shellQuote } from './git/git-setup.js';
export { clashBookOf, readClashes } from './git/id-clashes.js';
export { locateGit } from './git/locate-git.js';
export { mergeTask, type MergeTaskOptions, type MergeTaskResult } from './git/merge-back.js';
export { type MergeSlotWait } from './git/merge-slot.js';
export { boardMergeState } from './git/merge-state.js';
export { currentTarget, mergedLookDue } from './git/merged-look.js';
export { completeMergedTasks, type MergedCompletion } from './git/merged-work.js';
export { repositoryDirs } from './git/refs.js';
export { type ClashBook, type MergeConflict, runMergeDriver } from './git/merge.js';
export { trackedFiles } from './git/tracked-files.js';
export {
  claimWithWorktree,
  type ClaimWorktreeOptions,
  listTaskWorktrees,
  removeTaskWorktree,
  type TaskWorktree,
  type WorktreeClaimResult,
} from './git/worktrees.js';
export { buildGraph, GRAPH_FORMATS, type GraphFormat, type GraphOptions, renderGraph } from './graph/graph-render.js';
export { findCycle, isReady, openBlockers, type TaskLookup } from './graph/graph.js';
export { ancestorsOf, boardLookup, Hierarchy, hierarchyOf, shareHierarchy, type Progress } from './graph/hierarchy.js';
export { explainRank, rankTasks, readyOrder, type ReadyRank } from './graph/ready-order.js';
export { searchPath } from './graph/walk.js';
export { EXPORT_FORMATS, exportBoard, type ExportFormat, type ExportOptions } from './io/board-export.js';
export { importTasks } from './io/board-import.js';
export { readClaudeTaskList, readTaskStoreFile } from './io/claude-lists.js';
export { type ForeignList } from './io/import-shapes.js';
export { readBacklogTasks } from './io/backlog-lists.js';
export { readBeadsIssues, readDotasksExport } from './io/import-tools.js';
export { type OwnerSource, resolveOwner } from './owner.js';
export { type ClaimLoss, type ClaimLossReason, type ClaimWatch, watchClaim, type WatchClaimOptions } from './runtime/claim-watch.js';
export { markNudged } from './runtime/guard-state.js';
export {
  createJob,
  FINAL_JOB_STATUSES,
  getJob,
  jobLogPath,
  type JobRecord,
  type JobStatus,
  listJobs,
  parseJobId,
  readJobLogTail,
  updateJob,
} from './runtime/jobs.js';
export { type Lease, LEASES_DIR, listLeases, readLease, writeLease } from './runtime/leases.js';
export { groupMembers, isRunning, killGroup } from './runtime/processes.js';
export { type HeldClaim, holdClaim, type HoldOptions, type LastError, recordRunEnd } from './runtime/task-run.js';
export { type CheckRun, type CheckSpec, checkTail, describeCheckEnd, VerifyError } from './runtime/verify-run.js';
export { claimWatcherRecord, releaseWatcherRecord, touchWatcherRecord, type WatcherRecord } from './runtime/watcher-record.js';
export { scopeProblem } from './scopes/glob-limits.js';
export { inScope, ScopeMatcher } from './scopes/scopes.js';
export { readLeases, TaskStore } from './store.js';
export { markSynced, remoteHasBranch } from './sync/board-home.js';
export { adoptBoard, openBoardToSync, retireBoard } from './sync/board-moves.js';
export { claimWithSync } from './sync/claim-sync.js';
export { type SyncChange } from './sync/merge-types.js';
export { startSyncLoop } from './sync/sync-loop.js';
export { syncBoard } from './sync/sync-rounds.js';
export { type SyncOptions, type SyncReport } from './sync/sync-types.js';
export { renderAgentBoard } from './views/agent-board.js';
export { printable, type PrintableFields, printableLines, printableTask, printableValue } from './views/printable.js';
export {
  type BoardCounts,
  type BoardView,
  countTasks,
  filterTasks,
  type ListFilter,
  PLAIN_STYLE,
  planningTags,
  historyLine,
  thousands,
  renderBoard,
  renderProblem,
  renderReviewWait,
  type RenderStyle,
  renderSummary,
  renderTaskDetail,
  renderTaskLine,
  type SearchHit,
  searchTasks,
} from './views/render.js';
export { type TaskHead, taskHead, type TaskView, toTaskView, viewOpenBlockers } from './views/task-view.js';
