export * from './schema.js';
export * from './todo-tool.js';
export * from './guard.js';
export * from './jobs.js';
export { groupMembers, isRunning, killGroup } from './processes.js';
