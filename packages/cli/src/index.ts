/**
 * `dotasks` as a library: the core board API and the agent surface, so a
 * script can do `import { TaskStore, createTodoTool } from 'dotasks'`.
 */
export * from '@dotasks/core';
export * from '@dotasks/agent';
export type { CommandOutput, GlobalOptions } from './context.js';
