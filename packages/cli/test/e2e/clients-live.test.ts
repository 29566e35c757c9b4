// The real Claude Code, Codex and Gemini CLIs (pinned in agent-clis.ts) in a
// repository after `tasks setup CLIENT`, against a model API faked on
// 127.0.0.1: the session starts primed, the scripted model creates, claims
// and completes a task through the todo tool without an approval prompt, and
// its first stop with the task in progress is blocked once by the guard.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collectOutput, readTaskFile, tasks } from '../helpers.js';
import { tempRepo } from '../agents-helpers.js';
import { installAgentCli, startFakeAnthropic, startFakeGemini, startFakeResponses, type FakeModel, type ModelRequest, type ModelTurn } from '../agent-clis.js';

let claude: string;
let codex: string;
let gemini: string;
beforeAll(() => {
  claude = installAgentCli('claude');
  codex = installAgentCli('codex');
  gemini = installAgentCli('gemini');
}, 600_000);

let root: string;
let repo: string;
let board: string;
let cleanup: () => void;
let model: FakeModel | undefined;
beforeEach(() => {
  ({ root, repo, board, cleanup } = tempRepo());
});
afterEach(async () => {
  await model?.close();
  model = undefined;
  cleanup();
});

const PRIMED = 'This repository plans its work on a shared task board';
const NUDGE = 'is still marked in_progress';

/** The messages of a request, as the model reads them. */
const messagesOf = (request: ModelRequest) => (request.body.messages ?? []) as { role: string; content: unknown }[];
const PROMPT = 'Plan and do the work.';
/** A request of the session's own conversation (not a title or a summary made on the side). */
const inSession = (request: ModelRequest) => JSON.stringify(messagesOf(request)[0] ?? '').includes(PROMPT) && Array.isArray(request.body.tools);

describe('Claude Code after tasks setup claude', () => {
  it('starts primed, works a task through the todo tool, and is stopped once by the guard while it is in progress', async () => {
    expect(tasks(repo, ['setup', 'claude']).code).toBe(0);
    // The model's script: one step per assistant turn of the main conversation.
    const script = (request: ModelRequest): ModelTurn => {
      if (!inSession(request)) return { text: 'ok' }; // titles, summaries and other side requests
      const turns = messagesOf(request).filter((m) => m.role === 'assistant').length;
      const steps: ModelTurn[] = [
        // Claude Code defers MCP tools: the model loads the tool's schema first.
        { tool: 'ToolSearch', input: { query: 'select:mcp__tasks__todo' } },
        { tool: 'mcp__tasks__todo', input: { action: 'create', subject: 'Write the parser' } },
        // Allowed without a prompt, the tool still cannot empty the board: setup serves it with --no-clear.
        { tool: 'mcp__tasks__todo', input: { action: 'clear' } },
        { tool: 'mcp__tasks__todo', input: { action: 'claim' } },
        { text: 'I am stopping here.' },
        { tool: 'mcp__tasks__todo', input: { action: 'update', task_id: 1, status: 'completed' } },
        { text: 'Done.' },
      ];
      return steps[Math.min(turns, steps.length - 1)]!;
    };
    model = await startFakeAnthropic(script);
    const home = join(root, 'home');
    mkdirSync(home);
    // What a person does once per repository: accept Claude Code's trust dialog (without it, project permissions are ignored).
    writeFileSync(join(home, '.claude.json'), JSON.stringify({ projects: { [repo]: { hasTrustDialogAccepted: true } } }));
    const child = spawn(claude, ['-p', PROMPT, '--output-format', 'json', '--model', 'claude-sonnet-4-5'], {
      cwd: repo,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: 'sk-ant-test-dummy',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = await collectOutput(child);
    const main = model.requests.filter(inSession);
    const trace = `exit ${result.code}\nstdout: ${result.stdout.slice(-2000)}\nstderr: ${result.stderr.slice(-2000)}\nrequests: ${model.requests.length} (${main.length} with the tool)`;
    expect(main.length, trace).toBeGreaterThanOrEqual(5);
    // Primed: the SessionStart hook's text is in the first request of the session.
    expect(main[0]!.text, trace).toContain(PRIMED);
    expect(main[3]!.text).toContain('clear is switched off for this tool');
    // The tool ran for real: a task made, claimed by claude, then completed.
    expect(readTaskFile(board, 1)).toMatchObject({ subject: 'Write the parser', status: 'completed', owner: 'claude' });
    // The first stop came back with the guard's nudge, once: the request after it carries it, the last stop went through.
    const nudged = main.filter((r) => r.text.includes(NUDGE));
    expect(nudged.length, trace).toBeGreaterThanOrEqual(1);
    expect(main.findIndex((r) => r.text.includes(NUDGE))).toBe(5);
    expect(main.length, trace).toBe(7); // and the second stop went through
    expect(result.code, trace).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ is_error: false, permission_denials: [] }); // no call needed an approval
  }, 180_000);
});

describe('Codex after tasks setup codex', () => {
  it('starts primed, works a task through the todo tool in codex exec, and is stopped once by the guard while it is in progress', async () => {
    expect(tasks(repo, ['setup', 'codex']).code).toBe(0);
    /** The tool's results so far, and whether the guard's nudge came back. */
    const progress = (request: ModelRequest) => {
      const input = (request.body.input ?? []) as { type?: string }[];
      return { results: input.filter((i) => i.type === 'function_call_output').length, nudged: request.text.includes(NUDGE) };
    };
    const todo = (input: Record<string, unknown>): ModelTurn => ({ namespace: 'mcp__tasks', tool: 'todo', input });
    const script = (request: ModelRequest): ModelTurn => {
      const { results, nudged } = progress(request);
      if (results === 0) return todo({ action: 'create', subject: 'Write the parser' });
      if (results === 1) return todo({ action: 'clear' });
      if (results === 2) return todo({ action: 'claim' });
      if (results === 3 && !nudged) return { text: 'I am stopping here.' };
      if (results === 3) return todo({ action: 'update', task_id: 1, status: 'completed' });
      return { text: 'Done.' };
    };
    model = await startFakeResponses(script);
    // What a person has once in their own Codex config: the model provider, and this project trusted.
    const home = join(root, 'codex-home');
    mkdirSync(home);
    writeFileSync(
      join(home, 'config.toml'),
      [
        'model = "gpt-5"',
        'model_provider = "fake"',
        '[model_providers.fake]',
        'name = "fake"',
        `base_url = "${model.url}/v1"`,
        'wire_api = "responses"',
        'env_key = "FAKE_OPENAI_KEY"',
        `[projects.${JSON.stringify(repo)}]`,
        'trust_level = "trusted"',
        '',
      ].join('\n'),
    );
    // --dangerously-bypass-hook-trust stands for the one review of the two hooks a person does in /hooks.
    const child = spawn(codex, ['exec', '--dangerously-bypass-hook-trust', PROMPT], {
      cwd: repo,
      env: { PATH: process.env.PATH, HOME: root, CODEX_HOME: home, FAKE_OPENAI_KEY: 'dummy' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = await collectOutput(child);
    const trace = `exit ${result.code}\nstdout: ${result.stdout.slice(-2000)}\nstderr: ${result.stderr.slice(-3000)}\nrequests: ${model.requests.length}`;
    const requests = model.requests;
    expect(requests.length, trace).toBe(6);
    expect(requests[0]!.text, trace).toContain(PRIMED); // the SessionStart hook's context
    expect(requests[0]!.text, trace).toContain('## Task board'); // the AGENTS.md section
    expect(requests[2]!.text).toContain('clear is switched off for this tool');
    expect(readTaskFile(board, 1)).toMatchObject({ subject: 'Write the parser', status: 'completed', owner: 'codex' });
    expect(
      requests.findIndex((r) => r.text.includes(NUDGE)),
      trace,
    ).toBe(4);
    expect(result.code, trace).toBe(0);
  }, 180_000);
});

describe('Gemini CLI after tasks setup gemini', () => {
  it('starts primed, works a task through the trusted todo tool in gemini -p, and is stopped once by the guard while it is in progress', async () => {
    expect(tasks(repo, ['setup', 'gemini']).code).toBe(0);
    const progress = (request: ModelRequest) => {
      const contents = (request.body.contents ?? []) as { parts?: { functionResponse?: unknown }[] }[];
      const results = contents.flatMap((c) => c.parts ?? []).filter((p) => p.functionResponse !== undefined).length;
      return { results, nudged: request.text.includes(NUDGE) };
    };
    const todo = (input: Record<string, unknown>): ModelTurn => ({ tool: 'mcp_tasks_todo', input });
    const script = (request: ModelRequest): ModelTurn => {
      const { results, nudged } = progress(request);
      if (results === 0) return todo({ action: 'create', subject: 'Write the parser' });
      if (results === 1) return todo({ action: 'clear' });
      if (results === 2) return todo({ action: 'claim' });
      if (results === 3 && !nudged) return { text: 'I am stopping here.' };
      if (results === 3) return todo({ action: 'update', task_id: 1, status: 'completed' });
      return { text: 'Done.' };
    };
    model = await startFakeGemini(script);
    // What a person has once in their own Gemini CLI home: an API key login, and this folder trusted.
    const home = join(root, 'gemini-home');
    mkdirSync(join(home, '.gemini'), { recursive: true });
    writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
    writeFileSync(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [repo]: 'TRUST_FOLDER' }));
    const child = spawn(gemini, ['-p', PROMPT], {
      cwd: repo,
      env: { PATH: process.env.PATH, HOME: home, GEMINI_API_KEY: 'dummy', GOOGLE_GEMINI_BASE_URL: model.url, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = await collectOutput(child);
    const main = model.requests.filter((r) => Array.isArray(r.body.tools));
    const trace = `exit ${result.code}\nstdout: ${result.stdout.slice(-2000)}\nstderr: ${result.stderr.slice(-3000)}\nrequests: ${model.requests.length} (${main.length} with tools)`;
    expect(main.length, trace).toBe(6);
    expect(main[0]!.text, trace).toContain(PRIMED); // the SessionStart hook's additionalContext
    expect(main[0]!.text, trace).toContain('## Task board'); // the GEMINI.md section
    expect(main[2]!.text).toContain('clear is switched off for this tool');
    expect(readTaskFile(board, 1)).toMatchObject({ subject: 'Write the parser', status: 'completed', owner: 'gemini' });
    expect(
      main.findIndex((r) => r.text.includes(NUDGE)),
      trace,
    ).toBe(4);
    expect(result.code, trace).toBe(0);
  }, 180_000);
});
