/**
 * The read path of the board as its own entry, `@dotasks/core/read`: finding
 * the board, reading it through the board index, rendering it. `tasks list`
 * and `tasks ready` import this instead of `@dotasks/core`, whose index loads
 * every module of the core (locks, transactions, leases, doctor, merge …);
 * that alone cost more than reading a 1,000-task board (docs/decisions.md,
 * "The board index"). Commands that write take TaskStore from
 * `@dotasks/core/store` (store.js and what it imports) for the same reason.
 * The modules below take node:fs and friends through getBuiltinModule: one
 * ESM import of node:fs anywhere on this path costs about 4 ms.
 */
export { findBoard, resolveBoardDir, type FindBoardOptions } from './find-board.js';
export { resolveOwner } from './owner.js';
export { boardMergeState } from './git/merge-state.js';
export { mergedLookDue } from './git/merged-look.js';
export { loadBoardSnapshot } from './engine/board-index.js';
export { blockersAmong, closedAround, withClosedRead, type OpenSnapshot } from './engine/folded-view.js';
export { loadOpenSnapshot } from './engine/open-view.js';
export { BOARD_INDEX_FILE } from './engine/index-file.js';
export { LIST_SUMMARY_FILE, listSummaryCache, type ReadySummaryCache } from './runtime/list-summary.js';
export { readConfig, type BoardConfig } from './board-config.js';
export { ClaimError, TasksError, CorruptTaskError, isErrnoException, type ErrorCode } from './errors.js';
export {
  DEFAULT_PRIORITY,
  MAX_PRIORITY,
  TASK_STATUSES,
  inReview,
  isClosed,
  parseTaskId,
  priorityOf,
  type Task,
  type TaskNote,
  type TaskStatus,
} from './format/format.js';
export { isReady, openBlockers, type TaskLookup } from './graph/graph.js';
export { ancestorsOf, boardLookup, Hierarchy, hierarchyOf, shareHierarchy, type Progress } from './graph/hierarchy.js';
export { hintWord, ownerFlag } from './hints.js';
export { explainRank, readyOrder, type ReadyRank } from './graph/ready-order.js';
export {
  PLAIN_STYLE,
  countTasks,
  filterTasks,
  historyLine,
  thousands,
  renderBoard,
  renderProblem,
  renderReviewWait,
  renderSummary,
  renderTaskLine,
  searchTasks,
  type BoardCounts,
  type BoardView,
  type ListFilter,
  type RenderStyle,
  type SearchHit,
} from './views/render.js';
export { toTaskView, type TaskView } from './views/task-view.js';
export { printable, printableLines, printableTask, printableValue, type PrintableFields } from './views/printable.js';
export type { BoardSnapshot, TaskProblem } from './store.js';
