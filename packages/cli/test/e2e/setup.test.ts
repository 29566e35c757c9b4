// `tasks setup CLIENT` run as the built bin on real repositories: what it
// writes for each client, that a second run changes no byte, that --check
// sees drift and --remove gives every file its bytes back.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTodoTool } from '@dotasks/agent';
import { TASKS_BIN, tasks } from '../helpers.js';
import { tempRepo } from '../agents-helpers.js';

let repo: string;
let cleanup: () => void;
beforeEach(() => {
  ({ repo, cleanup } = tempRepo());
});
afterEach(() => cleanup());

/** Every file of the repository but .git/ and .tasks/, with its bytes. */
function snapshot(dir = repo, prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (prefix === '' && (entry.name === '.git' || entry.name === '.tasks')) continue;
    const rel = prefix + entry.name;
    if (entry.isDirectory()) Object.assign(out, snapshot(join(dir, entry.name), `${rel}/`), { [`${rel}/`]: '' });
    else out[rel] = readFileSync(join(dir, entry.name), 'utf8');
  }
  return out;
}

function put(rel: string, text: string): void {
  mkdirSync(join(repo, rel, '..'), { recursive: true });
  writeFileSync(join(repo, rel), text);
}
const read = (rel: string) => readFileSync(join(repo, rel), 'utf8');
const json = (rel: string) => JSON.parse(read(rel)) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** What a person wrote before setup ever ran, in their own formatting. */
const USER_SETTINGS =
  '{\n    "model": "opus",\n    "hooks": {\n        "Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}]\n    },\n    "permissions": {"allow": ["Bash(ls)"]}\n}\n';
const USER_CLAUDE_MD = '# My project\n\nRun `make test` before committing.\n';

describe('tasks setup claude', () => {
  it('writes the MCP server, its approval, the hooks and a marked CLAUDE.md section, merged into what is there', () => {
    put('.claude/settings.json', USER_SETTINGS);
    put('CLAUDE.md', USER_CLAUDE_MD);
    const r = tasks(repo, ['setup', 'claude']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('created .mcp.json');
    expect(r.stdout).toContain('updated .claude/settings.json');

    const server = json('.mcp.json').mcpServers.tasks;
    expect(server).toEqual({ type: 'stdio', command: 'node', args: [TASKS_BIN, 'mcp', '--no-clear'], env: { TASKS_OWNER: 'claude' } });
    const settings = json('.claude/settings.json');
    expect(settings.model).toBe('opus');
    expect(settings.enabledMcpjsonServers).toEqual(['tasks']);
    expect(settings.permissions.allow).toEqual(['Bash(ls)', 'mcp__tasks__todo']);
    const commands = (event: string) => settings.hooks[event].flatMap((g: { hooks: { command: string }[] }) => g.hooks.map((h) => h.command));
    expect(commands('Stop')).toEqual(['echo bye', `node ${TASKS_BIN} guard --hook claude --owner claude`]);
    expect(commands('SessionStart')).toEqual([`node ${TASKS_BIN} prime --owner claude`]);
    expect(commands('PreCompact')).toEqual([`node ${TASKS_BIN} prime --owner claude`]);
    // The edit guard holds Claude Code's editing tools to the claimed task's file scope.
    expect(settings.hooks.PreToolUse).toEqual([
      {
        matcher: 'Edit|Write|MultiEdit|NotebookEdit',
        hooks: [{ type: 'command', command: `node ${TASKS_BIN} guard --hook claude-edit --owner claude`, timeout: 30 }],
      },
    ]);
    // The person's lines keep their bytes: ours go after them.
    expect(read('.claude/settings.json')).toContain('"Stop": [{"hooks": [{"type": "command", "command": "echo bye"}]}, {"hooks": [');
    expect(read('.claude/settings.json').startsWith('{\n    "model": "opus",\n')).toBe(true);
    const md = read('CLAUDE.md');
    expect(md.startsWith(USER_CLAUDE_MD + '\n<!-- BEGIN dotasks (tasks setup) -->\n## Task board\n')).toBe(true);
    expect(md).toContain('`todo` tool');
    expect(md.endsWith('<!-- END dotasks -->\n')).toBe(true);
  });

  it('a second run changes no byte, and --check passes', () => {
    put('.claude/settings.json', USER_SETTINGS);
    expect(tasks(repo, ['setup', 'claude']).code).toBe(0);
    const once = snapshot();
    const again = tasks(repo, ['setup', 'claude']);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('unchanged .mcp.json\nunchanged .claude/settings.json\nunchanged CLAUDE.md\n');
    expect(snapshot()).toEqual(once);
    const check = tasks(repo, ['setup', 'claude', '--check']);
    expect(check.stdout).toBe('Claude Code: the setup is in place (.mcp.json, .claude/settings.json, CLAUDE.md)\n');
    expect(check.code).toBe(0);
  });

  it('--check passes after a hand edit of another key, and fails naming the hook a person removed', () => {
    expect(tasks(repo, ['setup', 'claude']).code).toBe(0);
    const settings = json('.claude/settings.json');
    settings.model = 'sonnet';
    writeFileSync(join(repo, '.claude/settings.json'), JSON.stringify(settings, null, 2) + '\n');
    expect(tasks(repo, ['setup', 'claude', '--check']).code).toBe(0);

    delete settings.hooks.Stop;
    writeFileSync(join(repo, '.claude/settings.json'), JSON.stringify(settings, null, 2) + '\n');
    const before = snapshot();
    const check = tasks(repo, ['setup', 'claude', '--check']);
    expect(check.code).toBe(1);
    expect(check.stdout).toBe(".claude/settings.json: the Stop hook (tasks guard) is missing\nrun 'tasks setup claude' to put it back\n");
    expect(snapshot()).toEqual(before); // --check writes nothing

    const json1 = JSON.parse(tasks(repo, ['setup', 'claude', '--check', '--json']).stdout);
    expect(json1.ok).toBe(false);
    expect(json1.files[1]).toEqual({ path: '.claude/settings.json', action: 'unchanged', drift: [{ label: 'the Stop hook (tasks guard)', state: 'missing' }] });

    // Setup puts back only what is missing; the person's model stays.
    expect(tasks(repo, ['setup', 'claude']).stdout).toContain('updated .claude/settings.json: the Stop hook (tasks guard)');
    expect(json('.claude/settings.json').model).toBe('sonnet');
    expect(tasks(repo, ['setup', 'claude', '--check']).code).toBe(0);
  });

  it('--remove gives files that existed their bytes back and removes the ones it created', () => {
    put('.claude/settings.json', USER_SETTINGS);
    put('CLAUDE.md', USER_CLAUDE_MD);
    const before = snapshot();
    expect(tasks(repo, ['setup', 'claude']).code).toBe(0);
    const r = tasks(repo, ['setup', 'claude', '--remove']);
    expect(r.stdout).toBe('removed .mcp.json\ntook dotasks out of .claude/settings.json\ntook dotasks out of CLAUDE.md\n');
    expect(r.code).toBe(0);
    expect(snapshot()).toEqual(before);
    // Nothing left to take out.
    expect(tasks(repo, ['setup', 'claude', '--remove']).stdout).toBe('unchanged .claude/settings.json\nunchanged CLAUDE.md\n');
  });

  it('--remove on a repository setup wrote from nothing leaves nothing, folders included', () => {
    const before = snapshot();
    expect(tasks(repo, ['setup', 'claude']).code).toBe(0);
    expect(existsSync(join(repo, '.claude'))).toBe(true);
    expect(tasks(repo, ['setup', 'claude', '--remove']).code).toBe(0);
    expect(snapshot()).toEqual(before);
  });

  it('refuses a settings file that is not JSON in one line, and writes nothing at all', () => {
    put('.claude/settings.json', '{\n  "model": "opus",\n}\n');
    const before = snapshot();
    const r = tasks(repo, ['setup', 'claude']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      'tasks: tasks setup claude: nothing written: .claude/settings.json: not valid JSON (line 3, column 1: PropertyNameExpected)',
    ]);
    expect(snapshot()).toEqual(before);
    expect(tasks(repo, ['setup', 'claude', '--check']).code).toBe(1);
  });

  it('--dry-run says what would change and changes nothing', () => {
    const before = snapshot();
    const r = tasks(repo, ['setup', 'claude', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('would create .mcp.json: the MCP server (mcpServers.tasks)');
    expect(snapshot()).toEqual(before);
    expect(tasks(repo, ['setup', 'claude']).code).toBe(0);
    const written = snapshot();
    const remove = tasks(repo, ['setup', 'claude', '--remove', '--dry-run']);
    expect(remove.stdout).toBe('would remove .mcp.json\nwould remove .claude/settings.json\nwould remove CLAUDE.md\n');
    expect(snapshot()).toEqual(written);
  });

  it('--owner names the owner the MCP server and the hooks act as, and a new owner is drift', () => {
    expect(tasks(repo, ['setup', 'claude', '--owner', 'agent-1']).code).toBe(0);
    expect(json('.mcp.json').mcpServers.tasks.env).toEqual({ TASKS_OWNER: 'agent-1' });
    const check = tasks(repo, ['setup', 'claude', '--check']);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('.mcp.json: the MCP server (mcpServers.tasks) differs from what setup writes');
    // Running it again for the default owner replaces our entries instead of adding a second set.
    expect(tasks(repo, ['setup', 'claude']).code).toBe(0);
    expect(json('.claude/settings.json').hooks.Stop).toHaveLength(1);
    expect(tasks(repo, ['setup', 'claude', '--check']).code).toBe(0);
  });
});

describe('tasks setup codex', () => {
  const USER_TOML = 'model = "o3"\n\n[features]\nhooks = true\n';

  it('writes a marked block in .codex/config.toml, .codex/hooks.json and AGENTS.md, idempotent and removable', () => {
    put('.codex/config.toml', USER_TOML);
    put('AGENTS.md', '# Agents\n');
    const before = snapshot();
    const r = tasks(repo, ['setup', 'codex']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('trusted project');
    const toml = read('.codex/config.toml');
    expect(toml).toBe(
      USER_TOML +
        '\n# BEGIN dotasks (tasks setup)\n[mcp_servers.tasks]\ncommand = "node"\n' +
        `args = [${JSON.stringify(TASKS_BIN)}, "mcp", "--no-clear"]\n` +
        'env = { TASKS_OWNER = "codex" }\n' +
        '# every call without a prompt, codex exec included; clear is off (--no-clear)\n' +
        'default_tools_approval_mode = "approve"\n' +
        '# a session waits for the tool instead of starting without it\nrequired = true\n# END dotasks\n',
    );
    const hooks = json('.codex/hooks.json').hooks;
    expect(hooks.SessionStart[0].hooks[0].command).toBe(`node ${TASKS_BIN} prime --hook codex --owner codex`);
    expect(hooks.Stop[0].hooks[0].command).toBe(`node ${TASKS_BIN} guard --hook claude --owner codex`);
    expect(read('AGENTS.md')).toContain('<!-- BEGIN dotasks (tasks setup) -->');

    const once = snapshot();
    expect(tasks(repo, ['setup', 'codex']).code).toBe(0);
    expect(snapshot()).toEqual(once);
    expect(tasks(repo, ['setup', 'codex', '--check']).code).toBe(0);

    // A hand edit inside the block is drift; outside it is the person's.
    put('.codex/config.toml', read('.codex/config.toml').replace('model = "o3"', 'model = "o4"'));
    expect(tasks(repo, ['setup', 'codex', '--check']).code).toBe(0);
    put('.codex/config.toml', read('.codex/config.toml').replace('"approve"', '"prompt"'));
    const check = tasks(repo, ['setup', 'codex', '--check']);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('.codex/config.toml: the MCP server (mcp_servers.tasks) differs from what setup writes');
    put('.codex/config.toml', read('.codex/config.toml').replace('model = "o4"', 'model = "o3"'));

    expect(tasks(repo, ['setup', 'codex', '--remove']).code).toBe(0);
    expect(snapshot()).toEqual(before);
  });

  it('refuses a config.toml that already defines the server outside the markers', () => {
    put('.codex/config.toml', '[mcp_servers.tasks]\ncommand = "tasks"\n');
    const before = snapshot();
    const r = tasks(repo, ['setup', 'codex']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("'[mcp_servers.tasks]' is already there");
    expect(snapshot()).toEqual(before);
  });
});

describe('tasks setup gemini', () => {
  it("writes the trusted server and the hooks into .gemini/settings.json beside the person's keys, and GEMINI.md", () => {
    put('.gemini/settings.json', '{\n  // my theme\n  "ui": {"theme": "Dracula"}\n}\n');
    const before = snapshot();
    expect(tasks(repo, ['setup', 'gemini']).code).toBe(0);
    const text = read('.gemini/settings.json');
    expect(text.startsWith('{\n  // my theme\n  "ui": {"theme": "Dracula"},\n  "mcpServers": {\n')).toBe(true);
    const settings = JSON.parse(text.replace('// my theme', '')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(settings.mcpServers.tasks).toEqual({ command: 'node', args: [TASKS_BIN, 'mcp', '--no-clear'], env: { TASKS_OWNER: 'gemini' }, trust: true });
    expect(settings.hooks.SessionStart[0].hooks[0]).toEqual({
      name: 'tasks-prime',
      type: 'command',
      command: `node ${TASKS_BIN} prime --hook gemini --owner gemini`,
      timeout: 30000,
    });
    expect(settings.hooks.AfterAgent[0].hooks[0].command).toBe(`node ${TASKS_BIN} guard --hook claude --owner gemini`);
    expect(read('GEMINI.md')).toContain('## Task board');
    const once = snapshot();
    expect(tasks(repo, ['setup', 'gemini']).code).toBe(0);
    expect(snapshot()).toEqual(once);
    expect(tasks(repo, ['setup', 'gemini', '--remove']).code).toBe(0);
    expect(snapshot()).toEqual(before);
  });
});

describe('what the hooks and the server that setup writes run', () => {
  it('tasks prime --hook answers a SessionStart hook with the primer as additionalContext', () => {
    const plain = tasks(repo, ['prime', '--owner', 'gemini']);
    const hook = tasks(repo, ['prime', '--hook', 'gemini', '--owner', 'gemini']);
    expect(hook.code).toBe(0);
    const answer = JSON.parse(hook.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(answer.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(answer.hookSpecificOutput.additionalContext.trim()).toBe(plain.stdout.trim());
  });

  it('a todo tool made with allowClear: false (tasks mcp --no-clear) refuses clear and keeps the board', async () => {
    expect(tasks(repo, ['create', 'Keep me']).code).toBe(0);
    const todo = createTodoTool({ cwd: repo, owner: 'claude', allowClear: false });
    const result = await todo.execute({ action: 'clear' });
    expect(result.ok).toBe(false);
    expect(JSON.stringify(result)).toContain('tasks clear --yes');
    expect(tasks(repo, ['list']).stdout).toContain('Keep me');
  });

  it('tasks init names tasks setup', () => {
    const r = tasks(join(repo, '..'), ['init', '--dir', join(repo, '..', 'other', '.tasks')]);
    expect(r.stdout).toContain('tasks setup claude');
  });
});
