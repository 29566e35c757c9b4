import { TaskStore, resolveBoardDir } from '@dotasks/core';
import type { CommandOutput, GlobalOptions } from '../context.js';

export type InitOptions = GlobalOptions;

/** Creates `.tasks/` with its `.gitignore`; refuses to clobber an existing board. */
export async function init(options: InitOptions): Promise<CommandOutput> {
  const { dir } = resolveBoardDir({ dir: options.dir, cwd: options.cwd });
  TaskStore.init(dir);
  return {
    text: `created an empty board in ${dir}\nnext: tasks create "First task"`,
    json: { dir },
  };
}
