import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
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
  const { dir, via } = resolveBoardDir({ dir: options.dir, cwd: options.cwd });
  // In a clone whose remote already holds a board (a second machine), that board is brought in, not a new one made.
  const remoteBoard = via === 'git' ? await boardOnRemote(dir) : undefined;
  let created = true;
  let remoteBoardUsed = remoteBoard !== undefined;
  try {
    TaskStore.init(dir);
  } catch (error) {
    const exists = error instanceof TasksError && error.code === 'E_EXISTS';
    // An existing board is brought in only while it holds no task (the board folder a synced repository commits).
    const empty = exists && remoteBoard !== undefined && new TaskStore(dir).listIds().length === 0;
    if (!(exists && (options.git || empty))) throw error;
    if (!empty) remoteBoardUsed = false;
    created = false;
  }
  if (remoteBoard && remoteBoardUsed) return bringIn(dir, remoteBoard, created, options);
  const lines = [created ? `created an empty board in ${dir}` : `the board ${dir} exists; set it up for git`];
  let git: ReturnType<typeof setupGitMerge> | undefined;
  if (options.git) {
    git = setupGitMerge(dir, options.driverProgram?.trim() || thisProgram());
    lines.push(`${git.attributesChanged ? 'wrote' : 'kept'} ${git.attributesFile} (task files and .highwatermark merge with the dotasks driver)`);
    lines.push(`registered merge.dotasks.driver in ${git.repository}: ${git.driver}`);
    for (const h of git.hooks)
      lines.push(
        h.installed
          ? h.hook === 'pre-commit'
            ? `installed the pre-commit hook (${h.path}): a task worktree commits only files in its task's scope`
            : `installed the ${h.hook} hook (${h.path}): ids two branches handed out twice are settled after merges, cherry-picks and rebases`
          : `left your ${h.hook} hook (${h.path}) as it is; add this line to it: ${h.line}`,
      );
    lines.push("commit .tasks/.gitattributes; every other clone runs 'tasks init --git' once (tasks doctor reminds it)");
  }
  if (created) lines.push('next: tasks create "First task"');
  return {
    text: lines.join('\n'),
    json: {
      dir,
      created,
      ...(git ? { git: { attributesFile: git.attributesFile, driver: git.driver, repository: git.repository, hooks: git.hooks } } : {}),
    },
  };
}

/** The remote and branch that hold a board for the board folder `dir` (its config's, else origin/tasks), if any. */
async function boardOnRemote(dir: string): Promise<{ remote: string; branch: string } | undefined> {
  const { remoteHasBranch, readConfig } = await import('@dotasks/core/internal');
  let config;
  try {
    config = readConfig(dir);
  } catch {
    return undefined; // a config.json that does not parse is reported by the commands that use it
  }
  const top = dirname(dir);
  return remoteHasBranch(top, config.syncRemote, config.syncBranch) ? { remote: config.syncRemote, branch: config.syncBranch } : undefined;
}

/** `tasks init` where the remote holds the board: the board is set up to sync, and synced in. */
async function bringIn(dir: string, where: { remote: string; branch: string }, created: boolean, options: InitOptions): Promise<CommandOutput> {
  const { syncBoard, markSynced } = await import('@dotasks/core/internal');
  markSynced(dir);
  const store = new TaskStore(dir);
  const report = await syncBoard(store, where);
  const at = `${where.remote}/${where.branch}`;
  const count = store.listIds().length;
  const lines = [
    `${at} already holds a board: ${created ? 'set up' : 'synced'} ${dir} from it (${count} task${count === 1 ? '' : 's'}); it syncs through ${at} (tasks sync, tasks watch --sync)`,
  ];
  if (options.git) {
    const git = setupGitMerge(dir, options.driverProgram?.trim() || thisProgram());
    lines.push(`registered merge.dotasks.driver in ${git.repository}: ${git.driver}`);
  }
  return { text: lines.join('\n'), json: { dir, created, synced: { remote: where.remote, branch: where.branch, tasks: count, head: report.head ?? null } } };
}
