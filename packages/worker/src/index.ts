export { runWorker } from './worker.js';
export { waitingOn } from './waiting.js';
export type { CommandLoopOptions, WorkerOptions, WorkerEvent, WorkerSummary, StopReason, LastError } from './worker-events.js';
export { runReviewWorker, type ReviewStopReason, type ReviewSummary, type ReviewWorkerEvent, type ReviewWorkerOptions } from './review-worker.js';
