#!/usr/bin/env node
// The echo: how many characters of board one `todo` call carries back, on
// boards of 100, 1,000 and 10,000 tasks with 90% of them done, side by side
// with the whole board the tool returned before the echo was folded (every
// task on its own line). Builds nothing: run after `npm run build`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskStore, renderBoard } from '../../packages/core/dist/index.js';
import { createTodoTool, renderToolResult } from '../../packages/agent/dist/index.js';

const BUDGET = 4000; // config.json's default echoBudget

for (const n of [100, 1_000, 10_000]) {
  const dir = mkdtempSync(join(tmpdir(), 'dotasks-bench-echo-'));
  const store = TaskStore.init(join(dir, '.tasks'));
  const done = n * 0.9;
  // The open tenth in chains of three, as a plan is; the history before it.
  const items = Array.from({ length: n }, (_, i) => {
    const id = i + 1;
    if (id <= done) return { subject: `Finished step ${id} of the migration`, status: 'completed' };
    return { subject: `Open step ${id} of the migration`, priority: id % 5, ...((id - done) % 3 !== 1 ? { blockedBy: [id - 1] } : {}) };
  });
  await store.batchWrite(items, { actor: 'bench' });
  const tool = createTodoTool({ dir: join(dir, '.tasks'), owner: 'bench' });
  const t0 = performance.now();
  const result = await tool.execute({ action: 'create', subject: 'One more step' });
  const ms = performance.now() - t0;
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  const whole = `<TASK_BOARD>\n${renderBoard(store.loadBoard())}\n</TASK_BOARD>`.length;
  const echo = result.board.length;
  const shown = [...result.board.matchAll(/^\[[ >]\] #\d+:/gm)].length;
  console.log(
    `${String(n).padStart(6)} tasks, ${done} done: echo ${String(echo).padStart(5)} chars (${shown} of ${n - done + 1} open listed${shown < n - done + 1 ? ', the rest counted' : ''}), ` +
      `whole board ${String(whole).padStart(7)} chars: ${(whole / echo).toFixed(1)}x smaller · result ${renderToolResult(result).length} chars in ${ms.toFixed(0)} ms · ` +
      `target <= ${BUDGET}: ${echo <= BUDGET ? 'PASS' : 'MISS'}`,
  );
  rmSync(dir, { recursive: true, force: true });
}
