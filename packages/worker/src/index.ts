export { runWorker, waitingOn, type WorkerOptions, type WorkerEvent, type WorkerSummary, type StopReason, type LastError } from './worker.js';
export { runReviewWorker, type ReviewStopReason, type ReviewSummary, type ReviewWorkerEvent, type ReviewWorkerOptions } from './review-worker.js';
