#!/usr/bin/env node
// The agent surface: what one `todo` call costs in-process, over MCP (one
// long-lived `tasks mcp`), and as separate `tasks` CLI processes, measured
// side by side on the same kind of board. Builds nothing: run after `npm run build`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TaskStore } from '../../packages/core/dist/index.js';
import { createTodoTool } from '../../packages/agent/dist/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(root, 'packages/cli/bin/tasks.js');
const { Client } = await import(join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js'));
const { StdioClientTransport } = await import(join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js'));

const ROUNDS = 40; // tasks per surface; each round = create + link + start + complete
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function board() {
  const dir = mkdtempSync(join(tmpdir(), 'dotasks-bench-'));
  TaskStore.init(join(dir, '.tasks'));
  return dir;
}

async function timeCalls(call) {
  const times = [];
  for (let i = 1; i <= ROUNDS; i++) {
    for (const input of [{ action: 'create', subject: `Step ${i}` }, ...(i > 1 ? [{ action: 'update', task_id: i, add_blocked_by: [i - 1] }] : [])]) {
      const t0 = performance.now();
      await call(input);
      times.push(performance.now() - t0);
    }
  }
  for (let i = 1; i <= ROUNDS; i++) {
    for (const input of [
      { action: 'update', task_id: i, status: 'in_progress' },
      { action: 'update', task_id: i, status: 'completed' },
    ]) {
      const t0 = performance.now();
      const r = await call(input);
      if (r && r.ok === false) throw new Error(JSON.stringify(r.error));
      times.push(performance.now() - t0);
    }
  }
  return times;
}

// 1. In-process library.
const libDir = board();
const tool = createTodoTool({ dir: join(libDir, '.tasks'), owner: 'bench' });
const lib = await timeCalls((input) => tool.execute(input));

// 2. MCP over stdio, one server for the whole run.
const mcpDir = board();
const client = new Client({ name: 'bench', version: '0' });
let t0 = performance.now();
await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], cwd: mcpDir, env: { ...process.env, TASKS_OWNER: 'bench' } }));
const mcpStart = performance.now() - t0;
const mcp = await timeCalls(async (input) => (await client.callTool({ name: 'todo', arguments: input })).structuredContent);
await client.close();

// 3. One CLI process per call (what an agent without the tool pays).
const cliDir = board();
const cliArgs = (input) =>
  input.action === 'create'
    ? ['create', input.subject]
    : input.add_blocked_by
      ? ['dep', 'add', String(input.task_id), String(input.add_blocked_by[0])]
      : input.status === 'in_progress'
        ? ['start', String(input.task_id)]
        : ['done', String(input.task_id)];
const cli = await timeCalls(async (input) => {
  const r = spawnSync(process.execPath, [BIN, ...cliArgs(input)], { cwd: cliDir, env: { ...process.env, TASKS_OWNER: 'bench' } });
  if (r.status !== 0) throw new Error(String(r.stderr));
});

// 4. `tasks list` must not pay for the MCP SDK: its start-up next to `tasks mcp`'s.
const listTimes = [];
for (let i = 0; i < 10; i++) {
  t0 = performance.now();
  spawnSync(process.execPath, [BIN, 'list'], { cwd: cliDir });
  listTimes.push(performance.now() - t0);
}

for (const dir of [libDir, mcpDir, cliDir]) rmSync(dir, { recursive: true, force: true });

const row = (name, xs, target) => {
  const m = median(xs);
  const verdict = target === undefined ? '(baseline)' : `target < ${target} ms  ${m < target ? 'PASS' : 'MISS'}`;
  console.log(`${name.padEnd(28)} median ${m.toFixed(1).padStart(7)} ms  (${xs.length} calls)  ${verdict}`);
  return m;
};
const mLib = row('todo tool, in-process', lib, 25);
const mMcp = row('todo tool over MCP stdio', mcp, 50);
const mCli = row('tasks CLI, one process/call', cli);
console.log(`MCP server start (connect)   ${mcpStart.toFixed(0)} ms`);
console.log(
  `ratio CLI/in-process ${(mCli / mLib).toFixed(1)}x · MCP/in-process ${(mMcp / mLib).toFixed(1)}x · CLI/MCP ${(mCli / mMcp).toFixed(1)}x (target >= 5x: ${mCli / mMcp >= 5 ? 'PASS' : 'MISS'})`,
);
const mList = median(listTimes);
console.log(
  `tasks list start-up median ${mList.toFixed(0)} ms vs tasks mcp connect ${mcpStart.toFixed(0)} ms: list ${mList < mcpStart ? 'does not pay for the SDK · PASS' : 'is as slow as mcp · MISS'}`,
);
