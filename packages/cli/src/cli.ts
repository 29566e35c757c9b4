import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { GlobalOptions } from './context.js';
import { run, type Args } from './run.js';

/**
 * The full `tasks` command line (yargs): maps argv to command functions,
 * each loaded lazily. The entry (main.ts) answers plain reads without it.
 */

const ids = { type: 'string' as const, array: true as const };

export function buildCli(args: string[]): Argv {
  const cli = yargs(args)
    .scriptName('tasks')
    .usage('$0 <command> [options]\n\nA task board for coding agents and people, kept as files in .tasks/.')
    .option('dir', { type: 'string', describe: 'the board directory (default: TASKS_DIR, else .tasks/ of the main git worktree or the nearest one)', global: true })
    .option('json', { type: 'boolean', describe: 'print JSON (documented shapes)', global: true })
    .option('owner', { type: 'string', describe: 'act as this owner (default: TASKS_OWNER, the linked worktree, the user)', global: true })
    .command(
      'init',
      'create an empty board (.tasks/ with its .gitignore)',
      (y) => y.example('$0 init', 'make .tasks/ at the root of this repository'),
      (a) => run(a as Args, async () => (await import('./commands/init.js')).init(a as Args)),
    )
    .command(
      'create <subject>',
      'create a task',
      (y) =>
        y
          .positional('subject', { type: 'string', describe: 'one-line title' })
          .option('description', { alias: 'd', type: 'string', describe: 'details' })
          .option('active-form', { type: 'string', describe: 'present-tense progress text' })
          .option('assign', { type: 'string', describe: 'owner of the new task' })
          .option('status', { type: 'string', choices: ['pending', 'in_progress', 'completed'] })
          .option('blocked-by', { ...ids, describe: 'ids this task waits for (1,2 or repeated)' })
          .option('blocks', { ...ids, describe: 'ids that wait for this task' })
          .option('meta', { type: 'string', array: true, describe: 'metadata key=value (value read as JSON when it parses)' })
          .example('$0 create "Run tests" --blocked-by 2,3', 'a task that waits for #2 and #3'),
      (a) => run(a as Args, async () => (await import('./commands/create.js')).create(a as never)),
    )
    .command(
      ['list', 'ls'],
      'print the board, one task a line',
      (y) =>
        y
          .option('all', { alias: 'a', type: 'boolean', describe: 'include deleted tasks' })
          .option('status', { type: 'string', array: true, describe: 'only these statuses' })
          .option('filter-owner', { type: 'string', describe: 'only tasks of this owner' })
          .option('ready', { type: 'boolean', describe: 'only ready tasks' })
          .example('$0 list --status in_progress', 'what is being worked on'),
      (a) => run(a as Args, async () => (await import('./commands/list.js')).list(a as never)),
    )
    .command(
      'ready',
      'list the tasks that can be started now',
      (y) => y.example('$0 ready --json', 'ready tasks as JSON'),
      (a) => run(a as Args, async () => (await import('./commands/list.js')).list({ ...(a as Args), ready: true })),
    )
    .command(
      'show <id>',
      'show one task in full',
      (y) => y.positional('id', { type: 'string' }).example('$0 show 3', 'task #3 with its description and edges'),
      (a) => run(a as Args, async () => (await import('./commands/show.js')).show(a as never)),
    )
    .command(
      'update <id>',
      'change fields, edges or status of a task',
      (y) =>
        y
          .positional('id', { type: 'string' })
          .option('subject', { type: 'string' })
          .option('description', { alias: 'd', type: 'string' })
          .option('active-form', { type: 'string', describe: 'progress text ("" removes it)' })
          .option('assign', { type: 'string', describe: 'set the owner ("" unassigns)' })
          .option('status', { type: 'string', choices: ['pending', 'in_progress', 'completed', 'deleted'] })
          .option('add-blocked-by', ids)
          .option('remove-blocked-by', ids)
          .option('add-blocks', ids)
          .option('remove-blocks', ids)
          .option('meta', { type: 'string', array: true, describe: 'metadata key=value; key= removes the key' })
          .example('$0 update 4 --add-blocked-by 2 --meta priority=1', 'link and annotate'),
      (a) => run(a as Args, async () => (await import('./commands/update.js')).update(a as never)),
    )
    .command(
      'start <id>',
      'start a task as the acting owner',
      (y) => y.positional('id', { type: 'string' }).option('active-form', { type: 'string' }).example('$0 start 2 --active-form "transforming"', 'begin #2'),
      (a) => run(a as Args, async () => (await import('./commands/start.js')).start(a as never)),
    )
    .command(
      'done <id>',
      'complete a task; prints the tasks it unblocked',
      (y) => y.positional('id', { type: 'string' }).option('force', { type: 'boolean', describe: "complete someone else's or a blocked task" }).example('$0 done 1', 'complete #1'),
      (a) => run(a as Args, async () => (await import('./commands/done.js')).done(a as never)),
    )
    .command(
      'dep <action> <id> <dep>',
      'add or remove a dependency: ID waits for DEP',
      (y) =>
        y
          .positional('action', { type: 'string', choices: ['add', 'rm'] })
          .positional('id', { type: 'string' })
          .positional('dep', { type: 'string' })
          .example('$0 dep add 4 2', '#4 waits for #2'),
      (a) => run(a as Args, async () => (await import('./commands/dep.js')).dep(a as never)),
    )
    .command(
      'delete <id>',
      'tombstone a task (the file stays; it no longer blocks anyone)',
      (y) => y.positional('id', { type: 'string' }).example('$0 delete 5', 'drop #5'),
      (a) => run(a as Args, async () => (await import('./commands/delete.js')).deleteCommand(a as never)),
    )
    .command(
      'clear',
      'remove every task file and reset ids (needs --yes)',
      (y) => y.option('yes', { type: 'boolean' }).example('$0 clear --yes', 'start over'),
      (a) => run(a as Args, async () => (await import('./commands/clear.js')).clear(a as never)),
    )
    .command(
      'claim [id]',
      'claim a ready task (exactly one claimant wins; losers exit 3)',
      (y) =>
        y
          .positional('id', { type: 'string' })
          .option('next', { type: 'boolean', describe: 'the lowest-id ready task' })
          .option('lease', { type: 'number', describe: 'lease length in seconds' })
          .option('pid', { type: 'number', describe: 'the working process, so a dead one is reaped' })
          .example('$0 claim --next --owner agent-1', 'take the next ready task'),
      (a) => run(a as Args, async () => (await import('./commands/claim.js')).claim(a as never)),
    )
    .command(
      'release <id>',
      'put a task back to pending with no owner',
      (y) => y.positional('id', { type: 'string' }).option('force', { type: 'boolean' }).example('$0 release 3', 'give #3 back'),
      (a) => run(a as Args, async () => (await import('./commands/release.js')).release(a as never)),
    )
    .command(
      'whoami',
      'print the acting owner and where it came from',
      (y) => y.example('$0 whoami', 'e.g. "agent-1 (from TASKS_OWNER)"'),
      (a) => run(a as Args, async () => (await import('./commands/whoami.js')).whoami(a as Args)),
    )
    .command(
      'heartbeat [id]',
      'renew the lease of a claimed task',
      (y) => y.positional('id', { type: 'string' }).option('lease', { type: 'number' }).example('$0 heartbeat 3', 'keep #3'),
      (a) => run(a as Args, async () => (await import('./commands/heartbeat.js')).heartbeat(a as never)),
    )
    .command(
      'reap',
      'release tasks whose lease expired or whose process is gone',
      (y) => y.option('dry-run', { type: 'boolean' }).example('$0 reap --dry-run', 'see what would be released'),
      (a) => run(a as Args, async () => (await import('./commands/reap.js')).reap(a as never)),
    )
    .command(
      'events',
      'print the event log',
      (y) =>
        y
          .option('since', { type: 'number', describe: 'only events after this seq' })
          .option('follow', { alias: 'f', type: 'boolean', describe: 'keep printing events as they are appended (until Ctrl-C)' })
          .example('$0 events --since 10 --json', 'new events as JSON lines')
          .example('$0 events --follow --json', 'stream the log, one JSON event per line'),
      (a) => run(a as Args, async () => (await import('./commands/events.js')).events(a as never)),
    )
    // --- issue 4: watcher ---
    .command(
      'watch',
      'keep the board consistent while files change by hand or by git (until Ctrl-C)',
      (y) =>
        y
          .option('reconcile-interval', { type: 'number', describe: 'seconds between full reconciles (default 120)' })
          .option('reap-interval', { type: 'number', describe: 'seconds between lease reaps (default 15)' })
          .example('$0 watch', 'propagate hand edits and git checkouts, one line per thing done')
          .example('$0 watch --json', 'the same as one JSON event per line'),
      (a) => run(a as Args, async () => (await import('./commands/watch.js')).watch(a as never)),
    )
    .command(
      'wait <id>',
      'wait until a task is completed (exit 0), deleted (1) or the timeout passes (124)',
      (y) =>
        y
          .positional('id', { type: 'string' })
          .option('timeout', { type: 'number', describe: 'give up after this many seconds' })
          .example('$0 wait 3 --timeout 600 && make test', 'run the tests once #3 is done'),
      (a) => run(a as Args, async () => (await import('./commands/wait.js')).wait(a as never)),
    )
    // --- end issue 4 ---
    .demandCommand(1, 'name a command; try tasks list')
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, error, y) => {
      if (error) throw error;
      y.showHelp((s: string) => process.stderr.write(s + '\n'));
      process.stderr.write(`\ntasks: ${message}\n`);
      process.exit(2);
    });
  return cli;
}

/** Parses argv with yargs and runs the command. */
export async function main(args: string[] = hideBin(process.argv)): Promise<void> {
  await buildCli(args).parseAsync();
}
