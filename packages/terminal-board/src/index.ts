export { runBoard, type RunBoardOptions } from './run-board.js';
export type { BoardActions } from './board-view.js';
export { createBoardSource, isWatchedPath, type BoardSource, type BoardSourceOptions, type BoardState } from './board-source.js';
export {
  buildColumns,
  cardDetails,
  cardTitle,
  nextPriorityFilter,
  leaseLeft,
  matchesSearch,
  moveSelection,
  notesOf,
  settleSelection,
  COLUMN_KEYS,
  COLUMN_TITLES,
  type Card,
  type ColumnKey,
  type ColumnOptions,
  type Columns,
  type Selection,
} from './board-model.js';
