import { readFileSync } from 'node:fs';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { GlobalOptions } from './context.js';
import { run, type Args } from './run.js';
import { ID_COMMANDS, completeTaskIds } from './completion.js';

/**
 * The full `tasks` command line (yargs): maps argv to command functions,
 * each loaded lazily. The entry (main.ts) answers plain reads without it.
 */

/** Our own version, from the CLI package's package.json (never the user's). */
function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

const ids = { type: 'string' as const, array: true as const };

export function buildCli(args: string[]): Argv {
  const cli = yargs(args)
    .scriptName('tasks')
    .usage('$0 <command> [options]\n\nA task board for coding agents and people, kept as files in .tasks/.')
    .completion('completion', false, (current: string, argv: Record<string, unknown> & { _: (string | number)[] }, defaultCompletion: () => void, done: (completions: string[]) => void) => {
      const command = String(argv._[0] ?? '');
      const positionals = argv._.length;
      if (ID_COMMANDS.has(command) && !current.startsWith('-') && positionals <= (command === 'dep' ? 3 : 2)) {
        const zsh = /zsh/.test(process.env.SHELL ?? '') || /zsh/.test(process.env.ZSH_NAME ?? '');
        done(completeTaskIds(command, { dir: argv.dir as string | undefined, zsh }));
      } else defaultCompletion();
    })
    .option('dir', { type: 'string', describe: 'the board directory (default: TASKS_DIR, else .tasks/ of the main git worktree or the nearest one)', global: true })
    .option('json', { type: 'boolean', describe: 'print JSON (documented shapes)', global: true })
    .option('owner', { type: 'string', describe: 'act as this owner (default: TASKS_OWNER, the linked worktree, the user)', global: true })
    .command(
      'completion',
      'print a shell completion script (bash; zsh when SHELL is zsh), task ids included',
      (y) => y.example('$0 completion >> ~/.bashrc', 'complete commands, flags and task ids in bash').example('SHELL=zsh $0 completion >> ~/.zshrc', 'the same for zsh'),
      // yargs answers `completion` itself before commands run; this entry gives it help and examples.
      () => undefined,
    )
    .command(
      'init',
      'create an empty board (.tasks/ with its .gitignore)',
      (y) =>
        y
          .option('git', { type: 'boolean', describe: 'also write .tasks/.gitattributes and register the merge driver in this clone (fine on an existing board)' })
          .option('driver-program', { type: 'string', describe: 'the program git runs as the merge driver (default: this node and tasks bin, by absolute path)' })
          .example('$0 init', 'make .tasks/ at the root of this repository')
          .example('$0 init --git', 'and merge task files field by field in git'),
      (a) => run(a as Args, async () => (await import('./commands/init.js')).init(a as Args)),
    )
    .command(
      'create <subject>',
      'create a task',
      (y) =>
        y
          .positional('subject', { type: 'string', describe: 'one-line title' })
          .option('description', { alias: 'd', type: 'string', describe: 'details (- reads them from stdin)' })
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
          .option('description', { alias: 'd', type: 'string', describe: 'details (- reads them from stdin)' })
          .option('active-form', { type: 'string', describe: 'progress text ("" removes it)' })
          .option('assign', { type: 'string', describe: 'set the owner ("" unassigns)' })
          .option('status', { type: 'string', choices: ['pending', 'in_progress', 'completed', 'deleted'] })
          .option('add-blocked-by', ids)
          .option('remove-blocked-by', ids)
          .option('add-blocks', ids)
          .option('remove-blocks', ids)
          .option('meta', { type: 'string', array: true, describe: 'metadata key=value; key= removes the key' })
          .option('force', { type: 'boolean', describe: 'take over, release or finish a task another owner has in progress' })
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
          .option('worktree', { type: 'boolean', describe: 'also create a git worktree on a branch for the task' })
          .option('path', { type: 'string', describe: 'with --worktree: where (default: worktreeDir/task-N)' })
          .option('base', { type: 'string', describe: 'with --worktree: what a new branch starts from (default HEAD)' })
          .example('$0 claim --next --owner agent-1', 'take the next ready task')
          .example('$0 claim 3 --worktree', 'claim #3 and check out branch task/3 in its own worktree'),
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
    // --- issue 5: agent integration ---
    .command(
      'tool-schema',
      'print the todo tool for a model provider (OpenAI function, Anthropic tool or JSON Schema)',
      (y) =>
        y
          .option('format', { type: 'string', choices: ['openai', 'anthropic', 'json-schema'], default: 'json-schema' })
          .example('$0 tool-schema --format openai', 'the tools[] entry for OpenAI Chat Completions')
          .example('$0 tool-schema --format anthropic', 'the tools[] entry for the Anthropic Messages API'),
      (a) => run(a as Args, async () => (await import('./commands/tool-schema.js')).toolSchema(a as never)),
    )
    .command(
      'mcp',
      'serve the board over MCP on stdio: the todo tool and the board as a resource',
      (y) => y.example('TASKS_OWNER=claude $0 mcp', 'what an MCP client (.mcp.json) starts'),
      (a) => run(a as Args, async () => (await import('./commands/mcp.js')).mcp(a as never)),
    )
    .command(
      'guard',
      'remind an agent that is stopping with a task still in progress (exit 1 when it has one)',
      (y) =>
        y
          .option('hook', { type: 'string', choices: ['claude'], describe: 'answer a Claude Code Stop hook (payload on stdin, JSON decision on stdout)' })
          .example('$0 guard --owner agent-1', 'silent, exit 0, when agent-1 has nothing in progress')
          .example('$0 guard --hook claude', 'the command of a Claude Code Stop hook'),
      (a) => run(a as Args, async () => (await import('./commands/guard.js')).guard(a as never)),
    )
    .command(
      'run <id> [command..]',
      'run CMD in the background for a task: exit 0 completes it, failure releases it',
      (y) =>
        y
          .positional('id', { type: 'string' })
          .positional('command', { type: 'string', array: true, describe: "the command, after '--'" })
          .example('$0 run 3 -- npm test', 'claim #3 and run the tests in the background')
          .example("$0 run 4 --owner ci -- sh -c 'make && make check'", 'a shell pipeline as one job'),
      (a) => {
        const dashdash = args.indexOf('--');
        const command = dashdash >= 0 ? args.slice(dashdash + 1) : ((a.command as string[] | undefined) ?? []).map(String);
        return run(a as Args, async () => (await import('./commands/run.js')).runJob({ ...(a as Args), id: String(a.id), command }));
      },
    )
    .command(
      'jobs',
      'list background jobs',
      (y) => y.example('$0 jobs --json', 'every job with its state, exit code and pids'),
      (a) => run(a as Args, async () => (await import('./commands/jobs.js')).jobs(a as never)),
    )
    .command(
      'logs <job>',
      'print the output of a background job',
      (y) =>
        y
          .positional('job', { type: 'string' })
          .option('follow', { alias: 'f', type: 'boolean', describe: 'keep printing until the job finishes' })
          .example('$0 logs bg_000001 --follow', 'watch a job until it ends'),
      (a) => run(a as Args, async () => (await import('./commands/logs.js')).logs(a as never)),
    )
    .command(
      'kill <job>',
      'end a background job and its whole process tree; the task is released',
      (y) => y.positional('job', { type: 'string' }).example('$0 kill bg_000001', 'stop the job and its children'),
      (a) => run(a as Args, async () => (await import('./commands/kill.js')).kill(a as never)),
    )
    // --- issue 6: people and git (doctor, graph, merge driver, import, export) ---
    .command(
      'doctor',
      'check the board for problems (bad files, one-sided edges, cycles, stale locks …); --fix repairs the safe ones',
      (y) =>
        y
          .option('fix', { type: 'boolean', describe: 'repair what is safe to repair, printing each change' })
          .example('$0 doctor', 'list every problem with file:line:column and a fix')
          .example('$0 doctor --fix', 'repair; exits 1 while anything is left for a person'),
      (a) => run(a as Args, async () => (await import('./commands/doctor.js')).doctor(a as never)),
    )
    .command(
      'graph',
      'draw the dependency graph (ready tasks and the critical path stand out)',
      (y) =>
        y
          .option('format', { alias: 'f', type: 'string', choices: ['text', 'mermaid', 'dot'], default: 'text', describe: 'output format' })
          .option('all', { alias: 'a', type: 'boolean', describe: 'include deleted tasks' })
          .example('$0 graph', 'the graph as a tree in the terminal')
          .example('$0 graph --format mermaid', 'paste into a ```mermaid block; renders on GitHub')
          .example('$0 graph -f dot | dot -Tsvg > tasks.svg', 'an image with Graphviz'),
      (a) => run(a as Args, async () => (await import('./commands/graph.js')).graph(a as never)),
    )
    .command(
      'merge-driver <base> <ours> <theirs> [path]',
      'git merge driver for task files: tasks merge-driver %O %A %B %P (see tasks init --git)',
      (y) =>
        y
          .positional('base', { type: 'string', describe: '%O: the common ancestor' })
          .positional('ours', { type: 'string', describe: '%A: our version; the result is written here' })
          .positional('theirs', { type: 'string', describe: '%B: their version' })
          .positional('path', { type: 'string', describe: '%P: the path in the repository' })
          .example('git config merge.dotasks.driver "tasks merge-driver %O %A %B %P"', 'what tasks init --git registers'),
      (a) => run(a as Args, async () => (await import('./commands/merge-driver.js')).mergeDriver(a as never)),
    )
    .command(
      'import <kind> <source>',
      'import a Claude Code task list (claude DIR) or a single-file tasks.json store (store FILE) onto the next free ids',
      (y) =>
        y
          .positional('kind', { type: 'string', choices: ['claude', 'store'] })
          .positional('source', { type: 'string', describe: 'the folder (claude) or file (store)' })
          .option('dry-run', { type: 'boolean', describe: 'show the id mapping, write nothing' })
          .example('$0 import claude ~/.claude/tasks/my-list --dry-run', 'see which ids the tasks would get')
          .example('$0 import store .my_agent_core/tasks.json', 'bring the tasks of a single-file tasks.json store over'),
      (a) => run(a as Args, async () => (await import('./commands/import.js')).importCommand(a as never)),
    )
    .command(
      'export',
      'print the board as json, jsonl or markdown',
      (y) =>
        y
          .option('format', { alias: 'f', type: 'string', choices: ['json', 'jsonl', 'markdown'], default: 'json' })
          .option('all', { alias: 'a', type: 'boolean', describe: 'include deleted tasks' })
          .example('$0 export --format markdown > TASKS.md', 'a checklist for a pull request')
          .example('$0 export -f jsonl | jq .subject', 'one task a line for other tools'),
      (a) => run(a as Args, async () => (await import('./commands/export.js')).exportCommand(a as never)),
    )
    // --- end issue 6 ---
    // --- issue 3: worktrees and workers ---
    .command(
      'worktree <action> [id]',
      'list task worktrees, or remove one (refuses uncommitted changes without --force)',
      (y) =>
        y
          .positional('action', { type: 'string', choices: ['list', 'remove'] })
          .positional('id', { type: 'string' })
          .option('force', { type: 'boolean', describe: 'remove even with uncommitted changes (they are lost)' })
          .example('$0 worktree list', 'task worktrees with their branch, status and changes')
          .example('$0 worktree remove 3', "remove #3's worktree; branch task/3 stays"),
      (a) => run(a as Args, async () => (await import('./commands/worktree.js')).worktree(a as never)),
    )
    .command(
      'worker [command..]',
      'claim ready tasks one by one and run a command on each (after --)',
      (y) =>
        y
          .positional('command', { type: 'string', array: true, describe: 'the command; TASK_ID, TASK_SUBJECT … are in its environment' })
          .option('worktree', { type: 'boolean', describe: 'run each task in its own git worktree' })
          .option('max-tasks', { type: 'number', describe: 'stop after this many tasks' })
          .option('idle-exit', { type: 'number', describe: 'stop after this many seconds with nothing to claim' })
          .option('lease', { type: 'number', describe: 'lease length in seconds (renewed while the command runs)' })
          .option('max-failures', { type: 'number', describe: 'leave a task to others after it failed this often here (default 2)' })
          .example('$0 worker --owner agent-1 -- npm test', 'run npm test for each ready task')
          .example(`$0 worker --worktree -- 'claude -p "$TASK_SUBJECT"'`, 'one string runs through the shell')
          .example('$0 worker --json --max-tasks 1 -- ./do-task.sh', 'one task, events as JSON lines'),
      (a) =>
        run(a as Args, async () =>
          (await import('./commands/worker.js')).worker({
            ...(a as never as object),
            // Words after `--` land in `_` after the command's own name.
            command: [...((a.command as string[] | undefined) ?? []), ...a._.slice(1)].map(String),
          } as never),
        ),
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
    .command(
      'serve',
      'serve the board as a web page on 127.0.0.1: kanban, dependency graph, agents, live events (until Ctrl-C)',
      (y) =>
        y
          .option('port', { type: 'number', describe: 'the port (default: a free one)' })
          .option('host', { type: 'string', describe: 'listen on this address instead of 127.0.0.1 (warns: others could reach it)' })
          .option('open', { type: 'boolean', describe: 'open the page in the browser (xdg-open, open)' })
          .example('$0 serve --open', 'the board in your browser; the URL carries the write token')
          .example('$0 serve --port 8080', 'on a port of your choice'),
      (a) => run(a as Args, async () => (await import('./commands/serve.js')).serve(a as never)),
    )
    .demandCommand(1, 'name a command; try tasks list')
    .strict()
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version(readVersion())
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
