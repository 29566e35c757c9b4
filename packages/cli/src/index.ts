/**
 * `dotasks` as a library: the core board API, so a script can do
 * `import { TaskStore, findBoard } from 'dotasks'`.
 */
export * from '@dotasks/core';
export type { CommandOutput, GlobalOptions } from './context.js';
