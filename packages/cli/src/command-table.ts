/**
 * Every `tasks` command, declared once: its name, aliases, positionals,
 * options (type, choices, what a number must be), help text, examples,
 * whether the fast path may answer it, and a lazy handler. The fast path
 * (fast-path.ts), the yargs command line (cli.ts), `--help` and shell
 * completion (completion.ts) all read this table, so they cannot disagree
 * (docs/decisions.md, "One declaration per command").
 *
 * Keep this module cheap: the entry imports it for every call, so it holds
 * data and type-only imports; handlers import their command when called.
 */
import type { CommandOutput } from './context.js';

export type OptionType = 'string' | 'boolean' | 'number';

export interface OptionSpec {
  readonly type: OptionType;
  /** A one-letter alias (`-a`). */
  readonly alias?: string;
  /** May be given more than once; the values are collected in order. */
  readonly array?: boolean;
  readonly choices?: readonly string[];
  /** What a number must be; checked on both paths before the command runs (yargs gets numbers as strings; toNumber reads them). */
  readonly range?: 'positive' | 'non-negative';
  /** What a number counts, for messages: `--lease takes a positive number of seconds`. */
  readonly unit?: string;
  readonly default?: string;
  readonly describe?: string;
}

/** What completion offers for a positional: task ids (open ones, or every task but deleted ones). */
export type Completes = 'open-ids' | 'ids';

export interface PositionalSpec {
  readonly name: string;
  readonly optional?: boolean;
  /** Takes every remaining word, and everything after `--`. */
  readonly variadic?: boolean;
  readonly choices?: readonly string[];
  readonly completes?: Completes;
  readonly describe?: string;
}

export interface CommandSpec {
  readonly name: string;
  readonly aliases?: readonly string[];
  readonly describe: string;
  readonly positionals?: readonly PositionalSpec[];
  readonly options?: Readonly<Record<string, OptionSpec>>;
  readonly examples: readonly (readonly [string, string])[];
  /** Plain calls are parsed by the fast path (no yargs). */
  readonly fast?: boolean;
}

/** Options every command takes. */
export const GLOBAL_OPTIONS = {
  dir: { type: 'string', describe: 'the board directory (default: TASKS_DIR, else .tasks/ of the main git worktree or the nearest one)' },
  json: { type: 'boolean', describe: 'print JSON (documented shapes)' },
  owner: { type: 'string', describe: 'act as this owner (default: TASKS_OWNER, the linked worktree, the user)' },
} as const satisfies Record<string, OptionSpec>;

const ids = { type: 'string', array: true } as const;
const id = { name: 'id', completes: 'open-ids' } as const;

const PRIORITIES = ['0', '1', '2', '3', '4'] as const;
const reviewFlag =
  'finishing it waits for review: it completes when someone other than its owner approves it (--no-review: not even when the board requires review)';
const priority = { type: 'string', choices: PRIORITIES, describe: 'priority: 0 (highest) to 4; 2 is the default' } as const;
const labels = { type: 'string', array: true, describe: 'add labels (repeat, or a,b)' } as const;

const listOptions = {
  all: { alias: 'a', type: 'boolean', describe: 'include deleted tasks, and a history folded on a large board' },
  status: { type: 'string', array: true, describe: 'only these statuses (repeat, or a,b)' },
  label: { type: 'string', array: true, describe: 'only tasks with one of these labels (repeat, or a,b)' },
  priority: { type: 'string', array: true, describe: 'only tasks of these priorities (repeat, or 0,1)' },
  grep: { type: 'string', describe: 'only tasks whose subject, labels, description or notes contain this (any case)' },
  'filter-owner': { type: 'string', describe: 'only tasks of this owner' },
  // A read acts as nobody, so --owner here names whose tasks to show.
  owner: { type: 'string', describe: 'only tasks of this owner (a read acts as nobody; same as --filter-owner)' },
} as const;

/** The commands, in the order `tasks --help` lists them. */
export const COMMANDS = {
  completion: {
    name: 'completion',
    describe: 'print a shell completion script (bash, zsh or fish; default from SHELL), task ids included',
    options: { shell: { type: 'string', choices: ['bash', 'zsh', 'fish'], describe: 'the shell (default: the one in SHELL, else bash)' } },
    examples: [
      ['$0 completion >> ~/.bashrc', 'complete commands, flags and task ids in bash'],
      ['$0 completion --shell zsh >> ~/.zshrc', 'the same for zsh, with subjects beside the ids'],
      ['$0 completion --shell fish > ~/.config/fish/completions/tasks.fish', 'and for fish'],
    ],
  },
  init: {
    name: 'init',
    fast: true,
    describe: 'create an empty board (.tasks/ with its .gitignore)',
    options: {
      git: { type: 'boolean', describe: 'also write .tasks/.gitattributes and register the merge driver in this clone (fine on an existing board)' },
      'driver-program': { type: 'string', describe: 'the program git runs as the merge driver (default: this node and tasks bin, by absolute path)' },
    },
    examples: [
      ['$0 init', 'make .tasks/ at the root of this repository'],
      ['$0 init --git', 'and merge task files field by field in git'],
    ],
  },
  create: {
    name: 'create',
    fast: true,
    describe: 'create a task',
    positionals: [{ name: 'subject', describe: 'one-line title' }],
    options: {
      description: { alias: 'd', type: 'string', describe: 'details (- reads them from stdin)' },
      'active-form': { type: 'string', describe: 'present-tense progress text' },
      assign: { type: 'string', describe: 'owner of the new task' },
      status: { type: 'string', choices: ['pending', 'in_progress', 'completed'] },
      'blocked-by': { ...ids, describe: 'ids this task waits for (1,2 or repeated)' },
      blocks: { ...ids, describe: 'ids that wait for this task' },
      related: { ...ids, describe: 'ids of tasks it is related to, a link on both sides that blocks nothing (repeat, or 1,2)' },
      'discovered-from': { ...ids, describe: 'the id of the task you found it while working on (repeat, or 1,2)' },
      parent: { type: 'string', describe: 'the task this one is part of (it completes after its children)' },
      path: { type: 'string', array: true, describe: 'a glob of the files it will change, from the top of the repository (repeat)' },
      priority,
      label: labels,
      meta: { type: 'string', array: true, describe: 'metadata key=value (value read as JSON when it parses)' },
      key: { type: 'string', describe: 'a unique string for this create: run again with it, it prints the task it made instead of making another' },
      verify: { type: 'string', describe: 'a shell command that must exit 0 before the task completes (replaces the board\'s "verify")' },
      review: { type: 'boolean', describe: reviewFlag },
    },
    examples: [
      ['$0 create "Run tests" --blocked-by 2,3', 'a task that waits for #2 and #3'],
      ["$0 create 'Parser' --path 'packages/parser/**' --path docs/parser.md", 'claim --next keeps it apart from tasks in progress on those files'],
      ['$0 create "Fix the crash" --priority 0 --label bug,parser', 'urgent, labelled'],
      ['$0 create "Flaky lexer test" --discovered-from 3 --related 5', 'found while on #3, related to #5; neither waits for the other'],
      ['$0 create "Write the lexer" --parent 4', 'a part of #4, which waits for it'],
    ],
  },
  list: {
    name: 'list',
    aliases: ['ls'],
    describe: 'print the board, one task a line',
    fast: true,
    options: {
      ...listOptions,
      ready: { type: 'boolean', describe: 'only ready tasks' },
      tree: { type: 'boolean', describe: 'children indented under their parents, each parent with its progress' },
    },
    examples: [
      ['$0 list --status in_progress', 'what is being worked on'],
      ['$0 list --tree', 'the hierarchy: epics, their stories, their tasks'],
      ['$0 list --owner agent-1', "agent-1's tasks"],
    ],
  },
  ready: {
    name: 'ready',
    // The order (priority, the work each unblocks, id) is in --explain's help; this line is what completion shows.
    describe: 'list the tasks that can be started now',
    fast: true,
    options: {
      ...listOptions,
      explain: {
        type: 'boolean',
        describe:
          'say why each task stands where it does: listed as claim --next takes them, by priority, then the work each unblocks, then id; and which ones claim --next passes over because their files overlap a task in progress',
      },
      parallel: {
        type: 'number',
        range: 'positive',
        describe: 'only up to N ready tasks whose file scopes are pairwise disjoint and disjoint from the work in progress: the set to start at once',
      },
    },
    examples: [
      ['$0 ready --json', 'ready tasks as JSON'],
      ['$0 ready --parallel 3', 'three tasks that can be worked on at once without touching the same files'],
      ['$0 ready --explain', "the order, with each task's priority and the chain of work it unblocks"],
    ],
  },
  show: {
    name: 'show',
    describe: 'show one task in full',
    fast: true,
    positionals: [{ name: 'id', completes: 'ids' }],
    examples: [['$0 show 3', 'task #3 with its description, edges, priority, labels and notes']],
  },
  search: {
    name: 'search',
    describe: 'find tasks by text in their subject, labels, description or notes (any case), best field first',
    fast: true,
    positionals: [{ name: 'text', describe: 'what to look for' }],
    options: { all: { alias: 'a', type: 'boolean', describe: 'include deleted tasks, and a history folded on a large board' } },
    examples: [
      ['$0 search parser', 'tasks that mention the parser, subjects first'],
      ['$0 search "flaky test" --json', 'the matches as JSON, with the field each matched in'],
    ],
  },
  note: {
    name: 'note',
    fast: true,
    describe: 'add a note to a task (kept in its file, with the time and the acting owner)',
    positionals: [
      { name: 'id', completes: 'ids' },
      { name: 'text', variadic: true, describe: 'the note (several words are joined)' },
    ],
    options: { stdin: { type: 'boolean', describe: 'read the note from stdin instead' } },
    examples: [
      ['$0 note 3 "the parser chokes on CRLF input"', 'a finding, for whoever picks #3 up'],
      ['$0 note 3 --stdin < findings.txt', 'a longer note from a file'],
    ],
  },
  update: {
    name: 'update',
    fast: true,
    describe: 'change fields, edges or status of a task',
    positionals: [id],
    options: {
      subject: { type: 'string' },
      description: { alias: 'd', type: 'string', describe: 'details (- reads them from stdin)' },
      'active-form': { type: 'string', describe: 'progress text ("" removes it)' },
      assign: { type: 'string', describe: 'set the owner ("" unassigns)' },
      status: { type: 'string', choices: ['pending', 'in_progress', 'completed', 'deleted'] },
      'add-blocked-by': ids,
      'remove-blocked-by': ids,
      'add-blocks': ids,
      'remove-blocks': ids,
      related: { ...ids, describe: 'relate it to these tasks, on both sides; blocks nothing (repeat, or 1,2)' },
      'remove-related': { ...ids, describe: 'no longer related to these tasks (repeat, or 1,2)' },
      'discovered-from': { ...ids, describe: 'record that it was found while working on these tasks (repeat, or 1,2)' },
      'remove-discovered-from': { ...ids, describe: 'forget that it was found while working on these tasks' },
      parent: { type: 'string', describe: 'make it part of this task; none removes its parent' },
      path: { type: 'string', array: true, describe: 'add a glob to the files it will change (repeat)' },
      'remove-path': { type: 'string', array: true, describe: 'remove a glob from its paths (repeat)' },
      priority,
      label: labels,
      'remove-label': { type: 'string', array: true, describe: 'remove labels (repeat, or a,b)' },
      meta: { type: 'string', array: true, describe: 'metadata key=value; key= removes the key' },
      force: { type: 'boolean', describe: 'take over, release or finish a task another owner has in progress' },
      verify: { type: 'string', describe: 'the shell command that must exit 0 before it completes ("" removes it: the board\'s applies again)' },
      review: { type: 'boolean', describe: reviewFlag },
    },
    examples: [
      ['$0 update 4 --add-blocked-by 2 --meta size=S', 'link and annotate'],
      ['$0 update 4 --priority 1 --label ui --remove-label backend', 'plan'],
      ['$0 update 4 --related 7 --remove-related 2', 'soft links, written on both sides'],
      ['$0 update 7 --parent 2', 'move #7 under #2'],
    ],
  },
  start: {
    name: 'start',
    describe: 'start a task as the acting owner',
    fast: true,
    positionals: [id],
    options: { 'active-form': { type: 'string', describe: 'present-tense progress text' } },
    examples: [['$0 start 2 --active-form "transforming"', 'begin #2']],
  },
  done: {
    name: 'done',
    describe:
      "complete a task once its check passes (its verify command, or the board's); prints the tasks it unblocked; a task that requires review waits for it instead",
    fast: true,
    positionals: [id],
    options: {
      force: { type: 'boolean', describe: "complete someone else's or a blocked task, or one whose check fails (without running it; its notes say so)" },
      result: { type: 'string', describe: 'what the work came to, kept on the task for the tasks that wait for it (at most 2000 characters)' },
    },
    examples: [
      ['$0 done 1', 'complete #1 (after its verify command passes, when it has one)'],
      ['$0 done 1 --result "the parser is in src/parse.ts; parse() returns an AST"', 'and leave a result for the tasks behind it'],
    ],
  },
  review: {
    name: 'review',
    describe: 'list the tasks waiting for review, in the order they entered it',
    fast: true,
    examples: [
      ['$0 review', 'what waits for an approval, oldest first, with who is reviewing it'],
      ['$0 review --json', 'the same as JSON'],
    ],
  },
  approve: {
    name: 'approve',
    describe: 'approve a task waiting for review (not your own): it completes and its dependents unblock',
    fast: true,
    positionals: [id],
    examples: [['$0 approve 4 --owner reviewer', "approve #4, someone else's work"]],
  },
  reject: {
    name: 'reject',
    describe: 'send a task waiting for review (not your own) back to its owner, pending, with a note of what to fix',
    fast: true,
    positionals: [id],
    options: { note: { type: 'string', describe: 'what to fix, kept in its notes (required)' } },
    examples: [['$0 reject 4 --note "the parser drops comments; add a test"', 'back to its owner with the reason']],
  },
  dep: {
    name: 'dep',
    fast: true,
    describe: 'add or remove a dependency: ID waits for DEP',
    positionals: [{ name: 'action', choices: ['add', 'rm'] }, id, { name: 'dep', completes: 'open-ids' }],
    examples: [['$0 dep add 4 2', '#4 waits for #2']],
  },
  delete: {
    name: 'delete',
    fast: true,
    describe: 'tombstone a task (the file stays; it no longer blocks anyone)',
    positionals: [id],
    examples: [['$0 delete 5', 'drop #5']],
  },
  clear: {
    name: 'clear',
    fast: true,
    describe: 'remove every task file and reset ids (needs --yes)',
    options: { yes: { type: 'boolean', describe: 'yes, remove them all' } },
    examples: [['$0 clear --yes', 'start over']],
  },
  claim: {
    name: 'claim',
    describe: 'claim a ready task (exactly one claimant wins; losers exit 3)',
    fast: true,
    positionals: [{ ...id, optional: true }],
    options: {
      next: { type: 'boolean', describe: 'the first ready task by priority, then the work it unblocks, then id (as tasks ready lists them)' },
      lease: { type: 'number', range: 'positive', unit: 'seconds', describe: 'lease length in seconds' },
      pid: { type: 'number', range: 'positive', describe: 'the working process, so a dead one is reaped' },
      worktree: { type: 'boolean', describe: 'also create a git worktree on a branch for the task' },
      path: { type: 'string', describe: 'with --worktree: where (default: worktreeDir/task-N)' },
      base: { type: 'string', describe: 'with --worktree: what a new branch starts from (default HEAD)' },
      sync: { type: 'boolean', describe: 'the claim counts once it is on the git remote (tasks sync); a lost race exits 3' },
    },
    examples: [
      ['$0 claim --next --owner agent-1', 'take the next ready task'],
      ['$0 claim 3 --worktree', 'claim #3 and check out branch task/3 in its own worktree'],
    ],
  },
  release: {
    name: 'release',
    describe: 'put a task back to pending with no owner',
    fast: true,
    positionals: [id],
    options: { force: { type: 'boolean', describe: "release someone else's task" } },
    examples: [['$0 release 3', 'give #3 back']],
  },
  whoami: {
    name: 'whoami',
    fast: true,
    describe: 'print the acting owner and where it came from',
    examples: [['$0 whoami', 'e.g. "agent-1 (from TASKS_OWNER)"']],
  },
  heartbeat: {
    name: 'heartbeat',
    describe: 'renew the lease of a claimed task',
    fast: true,
    positionals: [{ ...id, optional: true }],
    options: {
      lease: { type: 'number', range: 'positive', unit: 'seconds', describe: 'new lease length in seconds' },
      sync: { type: 'boolean', describe: 'publish the renewed lease to the git remote (tasks sync), so other machines do not reap the task' },
    },
    examples: [['$0 heartbeat 3', 'keep #3']],
  },
  reap: {
    name: 'reap',
    fast: true,
    describe: 'release tasks whose lease expired or whose process is gone',
    options: {
      'dry-run': { type: 'boolean', describe: 'say what would be released, release nothing' },
      sync: { type: 'boolean', describe: "also on the board shared through the git remote: other machines' claims not renewed for a whole lease" },
    },
    examples: [
      ['$0 reap --dry-run', 'see what would be released'],
      ['$0 reap --sync', 'and the claims of machines that stopped renewing them'],
    ],
  },
  events: {
    name: 'events',
    describe: 'print the event log',
    options: {
      since: { type: 'number', range: 'non-negative', describe: 'only events after this seq' },
      follow: { alias: 'f', type: 'boolean', describe: 'keep printing events as they are appended (until Ctrl-C)' },
    },
    examples: [
      ['$0 events --since 10 --json', 'new events as JSON lines'],
      ['$0 events --follow --json', 'stream the log, one JSON event per line'],
    ],
  },
  'tool-schema': {
    name: 'tool-schema',
    fast: true,
    describe: 'print the todo tool for a model provider (OpenAI function, strict or for the Responses API, Anthropic tool or JSON Schema)',
    options: { format: { type: 'string', choices: ['openai', 'openai-strict', 'openai-responses', 'anthropic', 'json-schema'], default: 'json-schema' } },
    examples: [
      ['$0 tool-schema --format openai', 'the tools[] entry for OpenAI Chat Completions'],
      ['$0 tool-schema --format openai-strict', 'the same in strict mode (every field required, unused ones null)'],
      ['$0 tool-schema --format openai-responses', 'the tools[] entry for the OpenAI Responses API (strict)'],
      ['$0 tool-schema --format anthropic', 'the tools[] entry for the Anthropic Messages API'],
    ],
  },
  mcp: {
    name: 'mcp',
    describe: 'serve the board over MCP on stdio: the todo tool and the board as a resource',
    options: { clear: { type: 'boolean', describe: "offer the tool's clear action (on; --no-clear, as tasks setup writes, refuses it)" } },
    examples: [
      ['TASKS_OWNER=claude $0 mcp', 'what an MCP client (.mcp.json) starts'],
      ['$0 mcp --no-clear', 'the same, with clear (removes every task) refused'],
    ],
  },
  prime: {
    name: 'prime',
    fast: true,
    describe:
      'print what an agent needs to work the board: the protocol, who it is, what it holds and the open board (for a session-start hook or a system prompt)',
    options: {
      hook: {
        type: 'string',
        choices: ['claude', 'codex', 'gemini'],
        describe: 'answer a SessionStart hook: the text as hookSpecificOutput.additionalContext, in JSON',
      },
    },
    examples: [
      ['TASKS_OWNER=claude $0 prime', 'what a Claude Code SessionStart hook injects'],
      ['$0 prime --json', '{owner, text, board, holding}'],
      ['$0 prime --hook gemini', 'the same as a SessionStart hook answer (hookSpecificOutput.additionalContext), for Codex and Gemini CLI'],
    ],
  },
  setup: {
    name: 'setup',
    fast: true,
    describe: 'wire an agent client to the board: its MCP server entry, hooks and instructions file, in this repository',
    positionals: [{ name: 'client', choices: ['claude', 'codex', 'gemini'], describe: 'the client: claude (Claude Code), codex (Codex), gemini (Gemini CLI)' }],
    options: {
      check: { type: 'boolean', describe: 'change nothing; report what is missing or differs (exit 1 when anything does)' },
      remove: { type: 'boolean', describe: 'take out what setup wrote (files it created go, the others get their bytes back)' },
      'dry-run': { type: 'boolean', describe: 'print what would change, change nothing' },
    },
    examples: [
      ['$0 setup claude', 'write .mcp.json, the hooks in .claude/settings.json and a section of CLAUDE.md'],
      ['$0 setup codex --check', 'exit 1 when something of the Codex setup is missing or was changed'],
      ['$0 setup gemini --remove', 'take the Gemini CLI setup out again'],
    ],
  },
  guard: {
    name: 'guard',
    fast: true,
    describe: 'remind an agent that is stopping with a task still in progress (exit 1 when it has one)',
    options: {
      hook: {
        type: 'string',
        choices: ['claude', 'claude-edit'],
        describe:
          "answer a Claude Code hook (payload on stdin, JSON decision on stdout): claude for Stop, claude-edit for PreToolUse on Edit/Write/MultiEdit (keeps edits in the claimed task's file scope)",
      },
    },
    examples: [
      ['$0 guard --owner agent-1', 'silent, exit 0, when agent-1 has nothing in progress'],
      ['$0 guard --hook claude', 'the command of a Claude Code Stop hook'],
    ],
  },
  run: {
    name: 'run',
    describe: 'run CMD in the background for a task: exit 0 completes it, failure releases it',
    positionals: [id, { name: 'command', variadic: true, describe: "the command, after '--'" }],
    examples: [
      ['$0 run 3 -- npm test', 'claim #3 and run the tests in the background'],
      ["$0 run 4 --owner ci -- sh -c 'make && make check'", 'a shell pipeline as one job'],
    ],
  },
  jobs: {
    name: 'jobs',
    fast: true,
    describe: 'list background jobs',
    examples: [['$0 jobs --json', 'every job with its state, exit code and pids']],
  },
  logs: {
    name: 'logs',
    describe: 'print the output of a background job',
    positionals: [{ name: 'job' }],
    options: { follow: { alias: 'f', type: 'boolean', describe: 'keep printing until the job finishes' } },
    examples: [['$0 logs bg_000001 --follow', 'watch a job until it ends']],
  },
  kill: {
    name: 'kill',
    fast: true,
    describe: 'end a background job and its whole process tree; the task is released',
    positionals: [{ name: 'job' }],
    examples: [['$0 kill bg_000001', 'stop the job and its children']],
  },
  doctor: {
    name: 'doctor',
    fast: true,
    describe: 'check the board for problems (bad files, one-sided edges, cycles, stale locks …); --fix repairs the safe ones',
    options: { fix: { type: 'boolean', describe: 'repair what is safe to repair, printing each change' } },
    examples: [
      ['$0 doctor', 'list every problem with file:line:column and a fix'],
      ['$0 doctor --fix', 'repair; exits 1 while anything is left for a person'],
    ],
  },
  graph: {
    name: 'graph',
    fast: true,
    describe: 'draw the dependency graph (ready tasks and the critical path stand out)',
    options: {
      format: { alias: 'f', type: 'string', choices: ['text', 'mermaid', 'dot'], default: 'text', describe: 'output format' },
      all: { alias: 'a', type: 'boolean', describe: 'include deleted tasks' },
    },
    examples: [
      ['$0 graph', 'the graph as a tree in the terminal'],
      ['$0 graph --format mermaid', 'paste into a ```mermaid block; renders on GitHub'],
      ['$0 graph -f dot | dot -Tsvg > tasks.svg', 'an image with Graphviz'],
    ],
  },
  'merge-driver': {
    name: 'merge-driver',
    fast: true,
    describe: 'git merge driver for task files: tasks merge-driver %O %A %B %P (see tasks init --git)',
    positionals: [
      { name: 'base', describe: '%O: the common ancestor' },
      { name: 'ours', describe: '%A: our version; the result is written here' },
      { name: 'theirs', describe: '%B: their version' },
      { name: 'path', optional: true, describe: '%P: the path in the repository' },
    ],
    examples: [['git config merge.dotasks.driver "tasks merge-driver %O %A %B %P"', 'what tasks init --git registers']],
  },
  'git-hook': {
    name: 'git-hook',
    fast: true,
    describe:
      "run by the git hooks tasks init --git installs: settles ids two branches handed out twice, after a merge, a cherry-pick or a rebase; before a commit in a task worktree, refuses files outside the task's scope",
    positionals: [
      { name: 'hook', choices: ['post-merge', 'post-commit', 'post-rewrite', 'pre-commit'], describe: 'the hook git runs' },
      { name: 'args', variadic: true, optional: true, describe: "the hook's own arguments" },
    ],
    examples: [['$0 git-hook post-merge', 'what .git/hooks/post-merge runs']],
  },
  import: {
    name: 'import',
    fast: true,
    describe:
      'import tasks onto the next free ids: a Claude Code task list (claude DIR), a single-file tasks.json store (store FILE), Backlog.md (backlog DIR), beads (beads FILE) or a tasks export (dotasks FILE)',
    positionals: [
      { name: 'kind', choices: ['claude', 'store', 'backlog', 'beads', 'dotasks'] },
      {
        name: 'source',
        describe:
          'the folder (claude; backlog: the project, backlog/ or backlog/tasks/) or file (store; beads: issues.jsonl; dotasks: the output of tasks export)',
      },
    ],
    options: { 'dry-run': { type: 'boolean', describe: 'show the id mapping, write nothing' } },
    examples: [
      ['$0 import claude ~/.claude/tasks/my-list --dry-run', 'see which ids the tasks would get'],
      ['$0 import store .my_agent_core/tasks.json', 'bring the tasks of a single-file tasks.json store over'],
      ['$0 import backlog . --dry-run', "see how a Backlog.md project's backlog/tasks/ would land"],
      ['$0 import beads .beads/issues.jsonl', 'bring beads issues over; blocks dependencies become edges'],
      ['$0 import dotasks board.json', 'bring back a board written by tasks export (json or jsonl)'],
    ],
  },
  export: {
    name: 'export',
    fast: true,
    describe: 'print the board as json, jsonl or markdown',
    options: {
      format: { alias: 'f', type: 'string', choices: ['json', 'jsonl', 'markdown'], default: 'json' },
      all: { alias: 'a', type: 'boolean', describe: 'include deleted tasks' },
    },
    examples: [
      ['$0 export --format markdown > TASKS.md', 'a checklist for a pull request'],
      ['$0 export -f jsonl | jq .subject', 'one task a line for other tools'],
    ],
  },
  worktree: {
    name: 'worktree',
    fast: true,
    describe: 'list task worktrees, or remove one (refuses uncommitted changes without --force)',
    positionals: [
      { name: 'action', choices: ['list', 'remove'] },
      { name: 'id', optional: true, completes: 'ids' },
    ],
    options: { force: { type: 'boolean', describe: 'remove even with uncommitted changes (they are lost)' } },
    examples: [
      ['$0 worktree list', 'task worktrees with their branch, status and changes'],
      ['$0 worktree remove 3', "remove #3's worktree; branch task/3 stays"],
    ],
  },
  merge: {
    name: 'merge',
    fast: true,
    describe: "bring a task's branch into its target (one merge at a time), check the result, complete the task, remove its worktree",
    positionals: [{ name: 'id', completes: 'ids' }],
    options: {
      ff: { type: 'boolean', describe: 'fast-forward when the target has nothing the branch lacks (default: a merge commit)' },
      force: { type: 'boolean', describe: "merge someone else's or a blocked task" },
    },
    examples: [
      ['$0 merge 3', 'merge task/3 into main, run its check on the result, complete #3'],
      ['$0 merge 3 --json', 'the same, with the commits before and after as JSON'],
    ],
  },
  worker: {
    name: 'worker',
    describe: 'claim ready tasks one by one and run a command on each (after --)',
    positionals: [{ name: 'command', variadic: true, describe: 'the command; TASK_ID, TASK_SUBJECT … are in its environment' }],
    options: {
      worktree: { type: 'boolean', describe: 'run each task in its own git worktree' },
      'max-tasks': { type: 'number', range: 'non-negative', describe: 'stop after this many tasks' },
      'idle-exit': { type: 'number', range: 'non-negative', unit: 'seconds', describe: 'stop after this many seconds with nothing to claim' },
      lease: { type: 'number', range: 'positive', unit: 'seconds', describe: 'lease length in seconds (renewed while the command runs)' },
      'max-failures': { type: 'number', range: 'non-negative', describe: 'leave a task to others after it failed this often here (default 2)' },
      sync: { type: 'boolean', describe: 'work a board shared through the git remote: claims count once on the remote (tasks sync)' },
      review: {
        type: 'boolean',
        describe:
          "work the review queue instead: CMD's exit 0 approves the task, anything else sends it back with the end of its output; never its own owner's",
      },
      merge: {
        type: 'boolean',
        describe:
          "with --review: CMD's exit 0 lands the task instead (tasks merge: its branch into the target, which approves it); a merge that cannot be made sends it back with the reason",
      },
    },
    examples: [
      ['$0 worker --owner agent-1 -- npm test', 'run npm test for each ready task'],
      [`$0 worker --worktree -- 'claude -p "$TASK_SUBJECT"'`, 'one string runs through the shell'],
      ['$0 worker --json --max-tasks 1 -- ./do-task.sh', 'one task, events as JSON lines'],
      ['$0 worker --review --owner reviewer -- ./review.sh', "review other owners' finished tasks, oldest first"],
      ['$0 worker --review --merge --owner reviewer -- npm test', 'and merge each one that passes into main'],
    ],
  },
  watch: {
    name: 'watch',
    describe: 'keep the board consistent while files change by hand or by git (until Ctrl-C)',
    options: {
      'reconcile-interval': {
        type: 'number',
        range: 'positive',
        unit: 'seconds',
        describe: 'seconds between safety passes, each a full reconcile when something changed (default 120)',
      },
      'reap-interval': { type: 'number', range: 'positive', unit: 'seconds', describe: 'seconds between lease reaps (default 15)' },
      sync: { type: 'boolean', describe: 'also keep the board synced with the git remote (tasks sync): on every local change and every --sync-interval' },
      'sync-interval': {
        type: 'number',
        range: 'positive',
        unit: 'seconds',
        describe: 'with --sync: seconds between syncs when nothing changed here (default 10)',
      },
    },
    examples: [
      ['$0 watch', 'propagate hand edits and git checkouts, one line per thing done'],
      ['$0 watch --sync', 'and share the board with the other machines through origin/tasks'],
      ['$0 watch --json', 'the same as one JSON event per line'],
    ],
  },
  wait: {
    name: 'wait',
    describe: 'wait until a task is completed (exit 0), deleted (1) or the timeout passes (124)',
    positionals: [id],
    options: { timeout: { type: 'number', range: 'non-negative', unit: 'seconds', describe: 'give up after this many seconds' } },
    examples: [['$0 wait 3 --timeout 600 && make test', 'run the tests once #3 is done']],
  },
  sync: {
    name: 'sync',
    fast: true,
    describe: "bring the remote's board in and ours out, on a branch of its own (default: tasks of origin)",
    options: {
      remote: { type: 'string', describe: 'the git remote (default: syncRemote of config.json, else origin)' },
      branch: { type: 'string', describe: 'the branch that holds the board (default: syncBranch, else tasks)' },
      adopt: { type: 'boolean', describe: 'move a board committed with the code onto its board branch, in one commit that untracks its tasks' },
      retire: { type: 'boolean', describe: 'move the board back onto the code branch, in one commit, and retire its board branch' },
      republish: {
        type: 'boolean',
        describe: 'publish this board over a board branch that is gone or was rewritten (every task of both sides kept), replacing entries it cannot read',
      },
      'accept-rewrite': { type: 'boolean', describe: "build on a rewritten board branch: merge this board into the remote's new history" },
    },
    examples: [
      ['$0 sync', 'share the board through origin/tasks'],
      ['$0 sync --json', 'what came in and went out, as JSON'],
      ['$0 sync --adopt', 'a board committed with the code starts syncing (one commit to review and push)'],
      ['$0 sync --republish', 'the board branch was deleted or force-pushed: publish this board again'],
    ],
  },
  serve: {
    name: 'serve',
    describe: 'serve the board as a web page on 127.0.0.1: kanban, dependency graph, agents, live events (until Ctrl-C)',
    options: {
      port: { type: 'number', range: 'non-negative', describe: 'the port (default: a free one)' },
      host: { type: 'string', describe: 'listen on this address instead of 127.0.0.1 (warns: others could reach it)' },
      'allow-host': {
        type: 'string',
        array: true,
        describe: 'also answer to this name in the Host header, on the same port (repeat); others are refused',
      },
      open: { type: 'boolean', describe: 'open the page in the browser (xdg-open, open)' },
    },
    examples: [
      ['$0 serve --open', 'the board in your browser; the URL carries the write token'],
      ['$0 serve --port 8080', 'on a port of your choice'],
      ['$0 serve --host 0.0.0.0 --allow-host board.example.lan', 'reachable from the network, under a name of your own too'],
    ],
  },
  board: {
    name: 'board',
    describe:
      'the live board, full screen: columns Ready, Blocked, In progress, Review (on a board that uses review), Done; keys to start, finish, release, approve and reject (off a terminal: tasks list)',
    examples: [
      ['$0 board', 'watch the board change as agents work; q quits'],
      ['$0 board | cat', 'not a terminal: prints what tasks list prints'],
    ],
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

// ---- the arguments a command's handler receives, derived from its declaration ----

/** `dry-run` → `dryRun`, as yargs names them. */
export type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

type ValueOf<O extends OptionSpec> = O extends { readonly choices: readonly (infer C)[] }
  ? O extends { readonly array: true }
    ? C[]
    : C
  : O['type'] extends 'number'
    ? number
    : O['type'] extends 'boolean'
      ? boolean
      : O extends { readonly array: true }
        ? string[]
        : string;

type OptionArgs<Os> = { -readonly [K in keyof Os as Camel<K & string>]?: Os[K] extends OptionSpec ? ValueOf<Os[K]> : never };

type PositionalValue<P extends PositionalSpec> = P extends { readonly variadic: true }
  ? string[]
  : P extends { readonly choices: readonly (infer C)[] }
    ? C
    : string;
type RequiredPositionals<Ps extends readonly PositionalSpec[]> = {
  -readonly [P in Ps[number] as P extends { readonly optional: true } ? never : Camel<P['name']>]: PositionalValue<P>;
};
type OptionalPositionals<Ps extends readonly PositionalSpec[]> = {
  -readonly [P in Ps[number] as P extends { readonly optional: true } ? Camel<P['name']> : never]?: PositionalValue<P>;
};

/** What every handler receives: the global options, the command's options (camelCase) and its positionals. */
export type ArgsOf<S extends CommandSpec> = OptionArgs<typeof GLOBAL_OPTIONS> &
  (S extends { readonly options: infer Os } ? OptionArgs<Os> : unknown) &
  (S extends { readonly positionals: infer Ps extends readonly PositionalSpec[] } ? RequiredPositionals<Ps> & OptionalPositionals<Ps> : unknown);

/** The arguments of one command by name: `CommandArgs<'claim'>`. */
export type CommandArgs<N extends CommandName> = ArgsOf<(typeof COMMANDS)[N]>;

/** A command's handler: what it is given (CommandArgs) and what it answers. */
export type Handler<N extends CommandName> = (args: CommandArgs<N>) => Promise<CommandOutput>;

/** The table as plain data, for code that walks every command. */
export const COMMAND_LIST: readonly CommandSpec[] = Object.values(COMMANDS);

/** The command a word names (its name or an alias), if any. */
export function findCommand(word: string | undefined): CommandSpec | undefined {
  if (word === undefined) return undefined;
  return COMMAND_LIST.find((c) => c.name === word || (c.aliases ?? []).includes(word));
}

/** The options a command takes: the global ones, then its own (its own win, e.g. list's --owner). */
export function optionsOf(spec: CommandSpec): Record<string, OptionSpec> {
  return { ...GLOBAL_OPTIONS, ...spec.options };
}

/** A number as both paths read one: decimal spellings only; anything else (``, `abc`, `0x10`) is NaN, which checkArgs refuses. */
export function toNumber(raw: string): number {
  return /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(raw.trim()) ? Number(raw) : NaN;
}

export const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * What is wrong with parsed arguments that the parsers do not check
 * themselves (a number's range, a value after `--` for a command without a
 * variadic positional), as one line; undefined when nothing is. Both paths
 * run it before the command.
 */
export function checkArgs(spec: CommandSpec, args: Record<string, unknown>): string | undefined {
  for (const [name, option] of Object.entries(optionsOf(spec))) {
    const value = args[camel(name)];
    if (option.type !== 'number' || value === undefined) continue;
    for (const n of Array.isArray(value) ? value : [value]) {
      const ok = typeof n === 'number' && Number.isFinite(n) && (option.range === 'positive' ? n > 0 : option.range === 'non-negative' ? n >= 0 : true);
      if (!ok) {
        const what = option.range === 'positive' ? 'a positive number' : option.range === 'non-negative' ? 'a number (0 or more)' : 'a number';
        const got = typeof n === 'number' && Number.isFinite(n) ? `, got ${n}` : '';
        return `--${name} takes ${what}${option.unit ? ` of ${option.unit}` : ''}${got}`;
      }
    }
  }
  return undefined;
}
