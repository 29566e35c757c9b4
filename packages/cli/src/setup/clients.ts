/**
 * What `tasks setup CLIENT` writes for each client, as data: the files, and
 * in each the members, array entries, hooks or marked block that are ours.
 * Formats as each client documents them (docs/agents-integration.md,
 * "Setting up a client"), all in the repository, never in the user's home.
 */
import type { JsonPath } from './json-text.js';
import type { CommentSyntax } from './marked-text.js';

export const SETUP_CLIENTS = ['claude', 'codex', 'gemini'] as const;
export type SetupClient = (typeof SETUP_CLIENTS)[number];

/** A member of a JSON object that must hold exactly `value`. */
export interface MemberItem {
  kind: 'member';
  path: JsonPath;
  value: unknown;
  label: string;
}

/** A string that an array must contain. */
export interface EntryItem {
  kind: 'entry';
  path: JsonPath;
  value: string;
  label: string;
}

/**
 * A hook: in `hooks[event]` (a list of groups, each with its own `hooks`
 * list, the form Claude Code, Codex and Gemini CLI share), a group holding
 * `hook`. A hook whose command `ours` matches is this one, even when it was
 * written for another owner or path.
 */
export interface HookItem {
  kind: 'hook';
  event: string;
  /** The tools a tool hook (PreToolUse) answers for, as the client's `matcher` of the hook's group. */
  matcher?: string;
  hook: Record<string, unknown>;
  ours: RegExp;
  label: string;
}

export type JsonItem = MemberItem | EntryItem | HookItem;

export interface JsonFilePlan {
  kind: 'json';
  /** Relative to the top of the repository, with `/`. */
  path: string;
  items: JsonItem[];
}

export interface BlockFilePlan {
  kind: 'block';
  path: string;
  syntax: CommentSyntax;
  /** The lines between the markers, ending with a newline. */
  body: string;
  /** A line outside the markers that would clash with the block (a table defined twice). */
  clash?: RegExp;
  label: string;
}

export type FilePlan = JsonFilePlan | BlockFilePlan;

export interface ClientPlan {
  client: SetupClient;
  /** The name the client knows the program by. */
  title: string;
  owner: string;
  files: FilePlan[];
  /** What a person still does by hand, once. */
  notes: string[];
}

/** What the plans are made from. */
export interface PlanInput {
  /** The words that run `tasks` (`npx --no-install tasks`, `tasks`, or node and the bin's path). */
  tasks: readonly string[];
  owner: string;
  /** Quotes a word for sh. */
  quote: (word: string) => string;
}

/** The MCP server's name in every client's config, and so `mcp__tasks__todo` in Claude Code. */
export const SERVER_NAME = 'tasks';

/** A command of ours: `… tasks prime …`, `… tasks.js guard …`, whatever runs it. */
const ours = (command: string): RegExp => new RegExp(`(^|[\\s/'"])tasks(\\.js)?'?\\s+${command}(\\s|$)`);

/** The short protocol an instructions file carries; the board itself comes from `tasks prime` at the start of a session. */
function instructions(input: PlanInput, client: SetupClient): string {
  const tasks = input.tasks.map(input.quote).join(' ');
  const by = `--owner ${input.quote(input.owner)}`;
  const start =
    client === 'codex'
      ? 'Run `' + `${tasks} prime ${by}` + '` at the start of a session to see the protocol and the open work.'
      : 'The open work is shown to you when the session starts (`' + `${tasks} prime` + '`).';
  const tool =
    client === 'claude'
      ? ' In Claude Code it is `mcp__tasks__todo` (load it with ToolSearch when it is deferred); use it instead of the built-in task list.'
      : '';
  return [
    '## Task board',
    '',
    'This repository keeps its tasks in `.tasks/` (dotasks), shared with people and other agents.',
    'Track your work there, not in a private to-do list. ' + start,
    '',
    '- Use the `todo` tool (MCP server `tasks`): `list` shows the board, `create` adds one task per step, `update` with `add_blocked_by` orders them.' + tool,
    '- `claim` a task before you work on it (one at a time), `note` what the next person needs to know, `update` with `status: "completed"` when it is done, `release` it if you stop.',
    '- Never change or complete a task another owner holds; `claim` without `task_id` takes the next ready one.',
    '- Without the tool: `' + `${tasks} list` + '`, `' + `${tasks} claim --next ${by}` + '`, `' + `${tasks} done ID ${by}` + '`.',
    '',
  ].join('\n');
}

/** The MCP server entry: `tasks mcp` for this owner, without `clear` (a person empties a board, with `tasks clear --yes`). */
function serverEntry(input: PlanInput): { command: string; args: string[]; env: Record<string, string> } {
  const [command, ...rest] = input.tasks;
  return { command: command!, args: [...rest, 'mcp', '--no-clear'], env: { TASKS_OWNER: input.owner } };
}

function claudePlan(input: PlanInput): ClientPlan {
  const tasks = input.tasks.map(input.quote).join(' ');
  const by = `--owner ${input.quote(input.owner)}`;
  const prime = { type: 'command', command: `${tasks} prime ${by}` };
  return {
    client: 'claude',
    title: 'Claude Code',
    owner: input.owner,
    files: [
      {
        kind: 'json',
        path: '.mcp.json',
        items: [
          { kind: 'member', path: ['mcpServers', SERVER_NAME], value: { type: 'stdio', ...serverEntry(input) }, label: 'the MCP server (mcpServers.tasks)' },
        ],
      },
      {
        kind: 'json',
        path: '.claude/settings.json',
        items: [
          { kind: 'entry', path: ['enabledMcpjsonServers'], value: SERVER_NAME, label: 'the approval of the project MCP server (enabledMcpjsonServers)' },
          { kind: 'entry', path: ['permissions', 'allow'], value: `mcp__${SERVER_NAME}__todo`, label: 'the todo tool without a prompt (permissions.allow)' },
          { kind: 'hook', event: 'SessionStart', hook: prime, ours: ours('prime'), label: 'the SessionStart hook (tasks prime)' },
          { kind: 'hook', event: 'PreCompact', hook: prime, ours: ours('prime'), label: 'the PreCompact hook (tasks prime)' },
          {
            kind: 'hook',
            event: 'Stop',
            hook: { type: 'command', command: `${tasks} guard --hook claude ${by}`, timeout: 30 },
            ours: ours('guard'),
            label: 'the Stop hook (tasks guard)',
          },
          {
            kind: 'hook',
            event: 'PreToolUse',
            matcher: 'Edit|Write|MultiEdit|NotebookEdit',
            hook: { type: 'command', command: `${tasks} guard --hook claude-edit ${by}`, timeout: 30 },
            ours: ours('guard'),
            label: "the PreToolUse hook (tasks guard --hook claude-edit: edits stay in the claimed task's file scope)",
          },
        ],
      },
      { kind: 'block', path: 'CLAUDE.md', syntax: 'markdown', body: instructions(input, 'claude'), label: 'the task board section' },
    ],
    notes: ['Claude Code applies these permissions only in a trusted workspace: start claude here once and accept its trust dialog.'],
  };
}

function codexPlan(input: PlanInput): ClientPlan {
  const tasks = input.tasks.map(input.quote).join(' ');
  const by = `--owner ${input.quote(input.owner)}`;
  const server = serverEntry(input);
  const toml = (value: string) => JSON.stringify(value); // a TOML basic string is a JSON string for what we write
  const body = [
    `[mcp_servers.${SERVER_NAME}]`,
    `command = ${toml(server.command)}`,
    `args = [${server.args.map(toml).join(', ')}]`,
    `env = { TASKS_OWNER = ${toml(input.owner)} }`,
    '# every call without a prompt, codex exec included; clear is off (--no-clear)',
    'default_tools_approval_mode = "approve"',
    '# a session waits for the tool instead of starting without it',
    'required = true',
    '',
  ].join('\n');
  return {
    client: 'codex',
    title: 'Codex',
    owner: input.owner,
    files: [
      {
        kind: 'block',
        path: '.codex/config.toml',
        syntax: 'toml',
        body,
        clash: new RegExp(`^\\s*\\[mcp_servers\\.${SERVER_NAME}[\\].]`),
        label: 'the MCP server (mcp_servers.tasks)',
      },
      {
        kind: 'json',
        path: '.codex/hooks.json',
        items: [
          {
            kind: 'hook',
            event: 'SessionStart',
            hook: { type: 'command', command: `${tasks} prime --hook codex ${by}`, timeout: 30 },
            ours: ours('prime'),
            label: 'the SessionStart hook (tasks prime)',
          },
          {
            kind: 'hook',
            event: 'Stop',
            hook: { type: 'command', command: `${tasks} guard --hook claude ${by}`, timeout: 30 },
            ours: ours('guard'),
            label: 'the Stop hook (tasks guard)',
          },
        ],
      },
      { kind: 'block', path: 'AGENTS.md', syntax: 'markdown', body: instructions(input, 'codex'), label: 'the task board section' },
    ],
    notes: [
      'Codex reads .codex/ only in a trusted project: trust this folder once (codex asks on its first start here), and review the two hooks once in /hooks.',
    ],
  };
}

function geminiPlan(input: PlanInput): ClientPlan {
  const tasks = input.tasks.map(input.quote).join(' ');
  const by = `--owner ${input.quote(input.owner)}`;
  return {
    client: 'gemini',
    title: 'Gemini CLI',
    owner: input.owner,
    files: [
      {
        kind: 'json',
        path: '.gemini/settings.json',
        items: [
          {
            kind: 'member',
            path: ['mcpServers', SERVER_NAME],
            value: { ...serverEntry(input), trust: true },
            label: 'the MCP server, trusted (mcpServers.tasks)',
          },
          {
            kind: 'hook',
            event: 'SessionStart',
            hook: { name: 'tasks-prime', type: 'command', command: `${tasks} prime --hook gemini ${by}`, timeout: 30000 },
            ours: ours('prime'),
            label: 'the SessionStart hook (tasks prime)',
          },
          {
            kind: 'hook',
            event: 'AfterAgent',
            hook: { name: 'tasks-guard', type: 'command', command: `${tasks} guard --hook claude ${by}`, timeout: 30000 },
            ours: ours('guard'),
            label: 'the AfterAgent hook (tasks guard)',
          },
        ],
      },
      { kind: 'block', path: 'GEMINI.md', syntax: 'markdown', body: instructions(input, 'gemini'), label: 'the task board section' },
    ],
    notes: ['Gemini CLI runs only in a trusted folder: trust this one once (gemini asks on its first start here, or /permissions).'],
  };
}

/** The plan for one client. */
export function planFor(client: SetupClient, input: PlanInput): ClientPlan {
  switch (client) {
    case 'claude':
      return claudePlan(input);
    case 'codex':
      return codexPlan(input);
    case 'gemini':
      return geminiPlan(input);
  }
}
