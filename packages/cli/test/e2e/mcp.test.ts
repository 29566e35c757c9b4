import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STRICT_SCHEMA_KEYWORDS } from '@dotasks/agent';
import { TASKS_BIN, cleanEnv, createTasks, readTaskFile, tasks, tempBoard, traceLoads } from '../helpers.js';

interface ToolResult {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
}

describe('tasks mcp', () => {
  let cleanup = () => {};
  let client: Client | undefined;
  afterEach(async () => {
    await client?.close();
    client = undefined;
    cleanup();
  });

  async function connect(root: string, env: Record<string, string> = {}, args: string[] = []): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [TASKS_BIN, 'mcp', ...args],
      cwd: root,
      env: cleanEnv(env) as Record<string, string>,
      stderr: 'pipe',
    });
    client = new Client({ name: 'dotasks-test', version: '0.0.0' });
    await client.connect(transport);
    return client;
  }

  const call = async (c: Client, args: Record<string, unknown>) => (await c.callTool({ name: 'todo', arguments: args })) as ToolResult;

  it('serves the todo tool: create, link, complete and see unblocked, a cycle as an error result', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const c = await connect(t.root, { TASKS_OWNER: 'agent-1' });

    const { tools } = await c.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['todo']);
    expect(tools[0].annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    expect((tools[0].inputSchema.properties as Record<string, unknown>).action).toBeDefined();
    // Only keywords OpenAI's strict mode keeps, at any depth: a client converting it for its model sends nothing strict mode refuses.
    const keywords = new Set<string>();
    const walk = (node: unknown, inProperties = false): void => {
      if (Array.isArray(node)) return node.forEach((n) => walk(n));
      if (node === null || typeof node !== 'object') return;
      for (const [key, value] of Object.entries(node)) {
        if (!inProperties) keywords.add(key);
        walk(value, key === 'properties' && !inProperties);
      }
    };
    walk(tools[0].inputSchema);
    expect([...keywords].filter((k) => !STRICT_SCHEMA_KEYWORDS.includes(k))).toEqual([]);

    const created = await call(c, { action: 'create', subject: 'Parse AST' });
    expect(created.isError).toBe(false);
    expect(created.structuredContent).toMatchObject({ ok: true, task: { id: 1 } });
    expect(created.content[0].text).toContain('<TASK_BOARD>\n[ ] #1: Parse AST');
    await call(c, { action: 'create', subject: 'Transform AST' });
    const linked = await call(c, { action: 'update', task_id: 2, add_blocked_by: [1] });
    expect(linked.content[0].text).toContain('[ ] #2: Transform AST (blocked by: #1)');

    const started = await call(c, { action: 'update', task_id: 1, status: 'in_progress' });
    expect(started.structuredContent).toMatchObject({ task: { status: 'in_progress', owner: 'agent-1' } });
    const done = await call(c, { action: 'update', task_id: '#1', status: 'completed' });
    expect(done.isError).toBe(false);
    expect(done.structuredContent?.unblocked).toEqual([2]);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', owner: 'agent-1' });

    await call(c, { action: 'create', subject: 'Emit code', add_blocked_by: [2] });
    const cycle = await call(c, { action: 'update', task_id: 2, add_blocked_by: [3] });
    expect(cycle.isError).toBe(true);
    expect(cycle.structuredContent).toMatchObject({ ok: false, error: { code: 'E_CYCLE' } });
    const spelled = (cycle.structuredContent?.error as { cycle: number[] }).cycle.map((n) => `#${n}`).join(' -> ');
    expect(spelled).toMatch(/^#(2|3) -> #(2|3) -> #(2|3)$/);
    expect(cycle.content[0].text).toContain(`would close a cycle ${spelled}`);
    expect(readTaskFile(t.board, 2).blockedBy).toEqual([]);

    // The planning fields and notes go through MCP like every other field, into the file.
    const planned = await call(c, { action: 'update', task_id: 3, priority: 0, add_labels: ['codegen'] });
    expect(planned.content[0].text).toContain('#3: Emit code P0 #codegen');
    const noted = await call(c, { action: 'note', task_id: 3, text: 'watch the source maps' });
    expect(noted.isError).toBe(false);
    expect(readTaskFile(t.board, 3)).toMatchObject({ priority: 0, labels: ['codegen'], notes: [{ owner: 'agent-1', text: 'watch the source maps' }] });

    const unknown = (await c.callTool({ name: 'nope', arguments: {} })) as ToolResult;
    expect(unknown.isError).toBe(true);
  });

  it('serves the board as a resource', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Parse AST']);
    const c = await connect(t.root, {}, ['--owner', 'agent-2']);
    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['tasks://board', 'tasks://board.json']);
    const text = await c.readResource({ uri: 'tasks://board' });
    expect((text.contents[0] as { text: string }).text).toBe('[ ] #1: Parse AST\n0/1 done · ready: #1');
    const json = await c.readResource({ uri: 'tasks://board.json' });
    expect(JSON.parse((json.contents[0] as { text: string }).text)).toMatchObject({ tasks: [{ id: 1, ready: true }], counts: { total: 1 } });
    const claimed = await call(c, { action: 'claim' });
    expect(claimed.structuredContent).toMatchObject({ task: { id: 1, owner: 'agent-2' } });
  });

  it('exits cleanly (status 0) when the client closes stdin', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'todo', arguments: { action: 'create', subject: 'Over stdio' } } },
    ];
    const r = spawnSync(process.execPath, [TASKS_BIN, 'mcp'], {
      cwd: t.root,
      env: cleanEnv({ TASKS_OWNER: 'raw' }),
      input: messages.map((m) => JSON.stringify(m)).join('\n') + '\n',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    const replies = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; result?: Record<string, unknown> });
    expect(replies.map((m) => m.id)).toEqual([1, 2]);
    expect(replies[0].result?.serverInfo).toMatchObject({ name: 'dotasks' });
    expect(replies[1].result?.isError).toBe(false);
    expect(readTaskFile(t.board, 1).subject).toBe('Over stdio');
  });

  it('tasks list never loads the MCP SDK', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    for (const args of [['list'], ['list', '--all', '--json'], ['create', 'x'], ['events']]) {
      const r = traceLoads(t.root, args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.files.some((f) => f.endsWith('/cli/dist/main.js') || f.endsWith('/cli/dist/bundle/tasks.cjs'))).toBe(true);
      expect(r.files.filter((f) => f.includes('@modelcontextprotocol'))).toEqual([]);
    }
    // The check can fail: the mcp command does load it.
    expect(traceLoads(t.root, ['mcp']).files.some((f) => f.includes('@modelcontextprotocol/sdk') && f.endsWith('/server/stdio.js'))).toBe(true);
  });

  it('answers tool calls in the order they were sent, also when the client does not wait in between', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const c = await connect(t.root, { TASKS_OWNER: 'agent-1' });
    const [created, updated, started, listed] = await Promise.all([
      call(c, { action: 'create', subject: 'Parse AST' }),
      call(c, { action: 'update', task_id: 1, description: 'with acorn' }),
      call(c, { action: 'update', task_id: 1, status: 'in_progress' }),
      call(c, { action: 'list' }),
    ]);
    for (const r of [created, updated, started, listed]) expect(r.isError, r.content[0].text).toBe(false);
    expect(listed.structuredContent).toMatchObject({ tasks: [{ id: 1, status: 'in_progress' }] });
    expect(readTaskFile(t.board, 1)).toMatchObject({ description: 'with acorn', status: 'in_progress', owner: 'agent-1' });
  });

  it('a create cancelled after the board had it, retried with the same key, leaves one task', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const c = await connect(t.root, { TASKS_OWNER: 'agent-1' });
    const cancel = new AbortController();
    const first = c.callTool({ name: 'todo', arguments: { action: 'create', subject: 'Parse AST', key: 'k-7f3a' } }, undefined, { signal: cancel.signal });
    cancel.abort();
    await expect(first).rejects.toThrow();
    // The server applies what it received (the cancel only drops the answer): the client never heard of task 1.
    await vi.waitFor(() => expect(existsSync(join(t.board, 'task_1.json'))).toBe(true), { timeout: 10_000, interval: 20 });
    const retried = await call(c, { action: 'create', subject: 'Parse AST', key: 'k-7f3a' });
    expect(retried.structuredContent).toMatchObject({ ok: true, alreadyApplied: true, task: { id: 1, subject: 'Parse AST' } });
    expect(retried.structuredContent?.message).toContain('Already created #1');
    const other = await call(c, { action: 'create', subject: 'Transform AST', key: 'k-9b21' });
    expect(other.structuredContent).toMatchObject({ ok: true, task: { id: 2 } });
    await c.close();
    client = undefined;
    expect(readdirSync(t.board).filter((name) => /^task_\d+\.json$/.test(name))).toEqual(['task_1.json', 'task_2.json']);
    expect(readTaskFile(t.board, 1).metadata).toEqual({ createKey: 'k-7f3a' });
  });

  it('the board resources are subscribable: an update when any process changes the board, a hand edit included', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const c = await connect(t.root, { TASKS_OWNER: 'agent-1' });
    const updates: string[] = [];
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    expect(c.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    await c.subscribeResource({ uri: 'tasks://board' });
    await c.subscribeResource({ uri: 'tasks://board.json' });
    await expect(c.subscribeResource({ uri: 'tasks://nope' })).rejects.toThrow(/unknown resource/);

    // Another process.
    expect(tasks(t.root, ['create', 'Parse AST']).code).toBe(0);
    await vi.waitFor(() => expect(updates).toEqual(expect.arrayContaining(['tasks://board', 'tasks://board.json'])), { timeout: 10_000 });
    const text = await c.readResource({ uri: 'tasks://board' });
    expect((text.contents[0] as { text: string }).text).toContain('[ ] #1: Parse AST');

    // A hand edit, which logs nothing.
    updates.length = 0;
    const file = join(t.board, 'task_1.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"Parse AST"', '"Parse the AST"'));
    await vi.waitFor(() => expect(updates).toContain('tasks://board'), { timeout: 10_000 });
    expect(((await c.readResource({ uri: 'tasks://board' })).contents[0] as { text: string }).text).toContain('#1: Parse the AST');

    // Unsubscribed: that resource is no longer announced.
    await c.unsubscribeResource({ uri: 'tasks://board' });
    updates.length = 0;
    expect(tasks(t.root, ['create', 'Emit code']).code).toBe(0);
    await vi.waitFor(() => expect(updates).toContain('tasks://board.json'), { timeout: 10_000 });
    expect(updates).not.toContain('tasks://board');
  });

  it('works with the MCP Inspector CLI', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const inspectorBin = fileURLToPath(new URL('../../../../node_modules/.bin/mcp-inspector', import.meta.url));
    const inspect = (args: string[]) => {
      const r = spawnSync(inspectorBin, ['--cli', '-e', 'TASKS_OWNER=inspector', process.execPath, TASKS_BIN, 'mcp', ...args], {
        cwd: t.root,
        env: cleanEnv({ MCP_CATALOG_PATH: join(t.root, 'catalog.json') }),
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Record<string, unknown>;
    };
    const listed = inspect(['--method', 'tools/list']) as { tools: { name: string }[] };
    expect(listed.tools.map((tool) => tool.name)).toEqual(['todo']);
    const created = inspect(['--method', 'tools/call', '--tool-name', 'todo', '--tool-arg', 'action=create', 'subject=From the inspector']);
    expect(created).toMatchObject({ isError: false, structuredContent: { ok: true, task: { id: 1, subject: 'From the inspector' } } });
    const read = inspect(['--method', 'resources/read', '--uri', 'tasks://board']) as { contents: { text: string }[] };
    expect(read.contents[0].text).toBe('[ ] #1: From the inspector\n0/1 done · ready: #1');
  });
});
