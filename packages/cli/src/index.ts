export type { CommandOutput, GlobalOptions } from './context.js';
