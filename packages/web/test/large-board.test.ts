import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openBlockers, TaskStore, type BatchItem } from '@dotasks/core';
import type { Browser } from 'playwright-core';
import { TASKS_BIN, cleanEnv, tempBoard, traceLoads } from '../../cli/test/helpers.js';
import { spawnSync } from 'node:child_process';
import { launchBrowser, serve, type Served } from './serve-helpers.js';

// A 1,000-task board: the page is usable within a second, and `tasks list`
// loads none of the page's code.

const TASKS = 1000;
let board: ReturnType<typeof tempBoard>;
let server: Served;
let browser: Browser;

beforeAll(async () => {
  board = tempBoard();
  const store = new TaskStore(board.board);
  // Ids on a fresh board are 1, 2, 3 … in order, so later items can wait for earlier ones.
  const items: BatchItem[] = [];
  for (let id = 1; id <= TASKS; id++) {
    const blockedBy = id > 10 ? [id - 10, ...(id % 7 === 0 ? [id - 3] : [])] : [];
    items.push({ subject: `Task number ${id} of the big board`, description: `details of ${id}`, blockedBy, status: id <= 600 ? 'completed' : 'pending' });
  }
  await store.batchWrite(items, { actor: 'bulk' });
  for (const id of [601, 602, 603]) await store.claimTask(id, { owner: `agent-${id - 600}` });
  server = await serve(board.root, ['--owner', 'ann']);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  board?.cleanup();
});

describe('a board of 1,000 tasks', () => {
  it('the page shows it and answers a search within a second', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
    await page.goto(server.url); // a first load warms the browser's cache, as a person's second visit would be
    await page.waitForSelector('[data-column="in_progress"] [data-task-id="603"]');
    const started = Date.now();
    await page.reload();
    await page.waitForSelector('[data-column="in_progress"] [data-task-id="603"]');
    const shown = Date.now() - started;
    const snapshot = new TaskStore(board.board).loadBoard();
    const pending = snapshot.tasks.filter((t) => t.status === 'pending');
    const blocked = pending.filter((t) => openBlockers(t, (id) => snapshot.byId.get(id)).length > 0).length;
    expect(await page.textContent('[data-column="done"] h2')).toBe('Done 600');
    expect(await page.textContent('[data-column="in_progress"] h2')).toBe('In progress 3');
    expect(await page.textContent('[data-column="ready"] h2')).toBe(`Ready ${pending.length - blocked}`);
    expect(await page.textContent('[data-column="blocked"] h2')).toBe(`Blocked ${blocked}`);
    const typed = Date.now();
    await page.fill('input.search', '#999');
    await page.waitForSelector('[data-column="blocked"] [data-task-id="999"]');
    expect(await page.$$eval('[data-task-id]', (els) => els.length)).toBe(1);
    const searched = Date.now() - typed;
    expect({ shown: shown < 1000, searched: searched < 1000 }, `shown in ${shown} ms, searched in ${searched} ms`).toEqual({ shown: true, searched: true });
    // The graph of the open tasks is laid out off the page's thread.
    await page.fill('input.search', '');
    await page.click('[data-tab="graph"]');
    await page.waitForSelector('[data-node-id="1000"]', { timeout: 60_000 });
    await page.close();
  });

  it('tasks list loads none of the web code', () => {
    for (const args of [['list'], ['list', '--all', '--json'], ['ls', '-a']]) {
      const r = traceLoads(board.root, args);
      expect(r.code, r.stderr).toBe(0);
      expect(
        r.files.some((f) => f.endsWith('/cli/dist/bundle/list.cjs')),
        'the trace sees the modules that load',
      ).toBe(true);
      expect(
        r.files.filter((f) => /\/web\/|preact|dagre/.test(f)),
        args.join(' '),
      ).toEqual([]);
      expect(r.builtins, 'the preload sees the built-in modules that load').toContain('fs');
      expect(r.builtins, args.join(' ')).not.toContain('http');
    }
  });
});
