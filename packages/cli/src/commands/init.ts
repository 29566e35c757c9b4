import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TaskStore, TasksError, resolveBoardDir, setupGitMerge, shellQuote } from '@dotasks/core/internal';
import type { CommandOutput, GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks init` takes, as declared in the command table. */
export interface InitOptions extends CommandArgs<'init'>, GlobalOptions {}

/** `'/usr/bin/node' '/…/packages/cli/bin/tasks.js'`: exactly the tasks that is running, whatever PATH says. */
function thisProgram(): string {
  const bin = realpathSync(fileURLToPath(new URL('../../bin/tasks.js', import.meta.url)));
  return `${shellQuote(process.execPath)} ${shellQuote(bin)}`;
}

/**
 * Creates `.tasks/` with its `.gitignore`; refuses to clobber an existing
 * board. With `--git` an existing board is fine: only the git setup is (re)done.
 */
export async function init(options: InitOptions): Promise<CommandOutput> {
  const { dir } = resolveBoardDir({ dir: options.dir, cwd: options.cwd });
  let created = true;
  try {
    TaskStore.init(dir);
  } catch (error) {
    if (!(options.git && error instanceof TasksError && error.code === 'E_EXISTS')) throw error;
    created = false;
  }
  const lines = [created ? `created an empty board in ${dir}` : `the board ${dir} exists; set it up for git`];
  let git: ReturnType<typeof setupGitMerge> | undefined;
  if (options.git) {
    git = setupGitMerge(dir, options.driverProgram?.trim() || thisProgram());
    lines.push(`${git.attributesChanged ? 'wrote' : 'kept'} ${git.attributesFile} (task files and .highwatermark merge with the dotasks driver)`);
    lines.push(`registered merge.dotasks.driver in ${git.repository}: ${git.driver}`);
    lines.push("commit .tasks/.gitattributes; every other clone runs 'tasks init --git' once (tasks doctor reminds it)");
  }
  if (created) lines.push('next: tasks create "First task"');
  return {
    text: lines.join('\n'),
    json: { dir, created, ...(git ? { git: { attributesFile: git.attributesFile, driver: git.driver, repository: git.repository } } : {}) },
  };
}
