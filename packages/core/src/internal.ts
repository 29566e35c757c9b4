/**
 * Everything the sibling packages (agent, watch, worker, the CLI) use of the
 * core, as `@dotasks/core/internal`: no promise to anyone else, it changes
 * with them. The public API is index.ts.
 */
export * from './errors.js';
export * from './format/format.js';
export * from './fs/fsio.js';
export * from './fs/locks.js';
export * from './find-board.js';
export * from './owner.js';
export * from './git/locate-git.js';
export * from './git/merge-state.js';
export * from './board-config.js';
export * from './events/events.js';
export * from './runtime/leases.js';
export * from './graph/graph.js';
export * from './graph/walk.js';
export * from './graph/ready-order.js';
export * from './store.js';
export { loadBoardSnapshot, BOARD_INDEX_FILE, FINAL_TRUST_MS } from './engine/board-index.js';
export * from './views/render.js';
export * from './views/printable.js';
export { graphemes, cutGraphemes } from './views/graphemes.js';
export * from './runtime/jobs.js';
export * from './runtime/guard-state.js';
export * from './doctor/doctor.js';
export * from './graph/graph-render.js';
export * from './git/git-setup.js';
export * from './git/merge.js';
export { clashBookOf, clearClashes, readClashes, CLASHES_FILE, type ClashRecord, type IdClash } from './git/id-clashes.js';
export { reconcileBranches, reconcileFromRecord, pendingReconcile, type ReconcileReport, type ReconcileMode } from './git/branch-reconcile.js';
export { mergeBranchBoards, type BranchRenumbered } from './git/branch-merge.js';
export * from './io/board-import.js';
export * from './io/board-export.js';
export * from './io/import-tools.js';
export * from './git/worktrees.js';
export { expandScope, inScope, overlappingTasks, scopesOverlap, ScopeMatcher } from './scopes/scopes.js';
export { trackedFiles, gitStateKey, SCOPES_CACHE_FILE, TRACKED_FILES_TTL_MS } from './git/tracked-files.js';
export * from './consistency/reconcile.js';
export * from './events/follow.js';
export * from './runtime/watcher-record.js';
export * from './runtime/processes.js';
export * from './engine/rules.js';
export * from './engine/journal.js';
export { NeedLocks, ConcurrentChange, parseHighWaterMark, type Transaction, type TxScope, type TxOptions } from './engine/transaction.js';
export * from './runtime/claim-watch.js';
export * from './runtime/task-run.js';
export * from './sync/sync.js';
export { adoptBoard, retireBoard, openBoardToSync, type BoardMove } from './sync/board-moves.js';
export { markSynced, remoteHasBranch, trackedBoardFiles } from './sync/board-home.js';
export { assertNotMovedAway } from './runtime/moved-tasks.js';
