/**
 * Everything the sibling packages (agent, watch, worker, the CLI) use of the
 * core, as `@dotasks/core/internal`: no promise to anyone else, it changes
 * with them. The public API is index.ts.
 */
export * from './errors.js';
export * from './format.js';
export * from './fsio.js';
export * from './locks.js';
export * from './board.js';
export * from './config.js';
export * from './events.js';
export * from './leases.js';
export * from './graph.js';
export * from './store.js';
export { loadBoardSnapshot, BOARD_INDEX_FILE, FINAL_TRUST_MS } from './board-index.js';
export * from './render.js';
export * from './jobs.js';
export * from './guard-state.js';
export * from './doctor.js';
export * from './graph-render.js';
export * from './git-setup.js';
export * from './merge.js';
export * from './board-import.js';
export * from './board-export.js';
export * from './worktrees.js';
export * from './reconcile.js';
export * from './follow.js';
export * from './watcher-record.js';
export * from './processes.js';
export * from './rules.js';
export * from './journal.js';
export { NeedLocks, ConcurrentChange, parseHighWaterMark, type Transaction, type TxScope, type TxOptions } from './transaction.js';
export * from './claim-watch.js';
