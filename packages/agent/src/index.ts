export * from './schema.js';
export { STRICT_SCHEMA_KEYWORDS, portableSchema, strictSchema } from './strict-schema.js';
export * from './todo-tool.js';
export { SHARED_BOARD_RULES, renderPrime, type Primer } from './prime.js';
export { decideStopHook, nudgeFor, tasksInProgress, type NudgeCommand, type StopHookDecision, type StopHookPayload } from './guard.js';
export { EDIT_TOOL_FILE_FIELDS, decideEditHook, type EditHookDecision, type EditHookPayload } from './edit-guard.js';
export * from './jobs.js';
export { runMcpServer, type McpServerOptions } from './mcp-server.js';
// Process-group helpers live in the core (the worker uses them too); kept here for the agent API.
export { groupMembers, isRunning, killGroup } from '@dotasks/core/internal';
