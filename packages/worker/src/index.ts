export { runWorker, waitingOn, type WorkerOptions, type WorkerEvent, type WorkerSummary, type StopReason, type LastError } from './worker.js';
