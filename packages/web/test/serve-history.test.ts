import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskStore, type BatchItem } from '@dotasks/core';
import { parseTask, serializeTask } from '@dotasks/core/internal';
import type { Browser, Page } from 'playwright-core';
import { tempBoard } from '../../cli/test/helpers.js';
import type { WebHistoryPage, WebState, WebTaskAnswer } from '../src/wire.js';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { httpRequest, launchBrowser, readStream, serve, type Served } from './serve-helpers.js';

// A board with a long history: the state holds the open work and the latest
// completions, and the page asks the server for the rest (docs/decisions.md,
// "The web board's history on demand").

const DONE = 300;
/** RECENT_DONE of board-state.ts: the completed tasks the state holds. */
const RECENT = 50;
let board: ReturnType<typeof tempBoard>;
let server: Served;
let browser: Browser;

beforeAll(async () => {
  board = tempBoard();
  const store = new TaskStore(board.board);
  const items: BatchItem[] = [];
  // #1–#300 completed (#2 the parent of #299, #7 the only zebra); #301 an epic whose only child #302 is done; #303 waits for #5.
  for (let id = 1; id <= DONE; id++)
    items.push({
      subject: id === 7 ? 'Paint the zebra crossing' : `Old work ${id}`,
      description: `details of ${id}`,
      status: 'completed',
    });
  items.push({ subject: 'Release epic' }, { subject: 'Docs', parent: DONE + 1, status: 'completed' }, { subject: 'After old work', blockedBy: [5] });
  await store.batchWrite(items, { actor: 'bulk' });
  await store.deleteTask(10, { actor: 'ann' });
  // Made by hand, as the batch makes neither: a completed parent of a completed task (a history from before the rule that a
  // completed task takes no children), and #303 waiting for #5, as it does once #5, its blocker, was completed after the edge.
  const edit = (id: number, change: Record<string, unknown>) => {
    const file = join(board.board, `task_${id}.json`);
    writeFileSync(file, serializeTask({ ...parseTask(readFileSync(file, 'utf8'), file), ...change }));
  };
  edit(299, { parent: 2 });
  edit(303, { blockedBy: [5] });
  server = await serve(board.root, ['--owner', 'ann']);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  board?.cleanup();
});

const get = <T>(path: string, token = server.token) =>
  httpRequest(server.origin, { method: 'GET', path, headers: token ? { 'x-tasks-token': token } : {} }) as Promise<{
    status: number;
    body: T & { error?: { code: string } };
  }>;

/** GET /api/state as a browser asks for it: the encoding it came in and the bytes decoded. */
const gzippedState = () =>
  new Promise<{ encoding: string | undefined; sent: number; json: string }>((resolve, reject) => {
    const url = new URL('/api/state', server.origin);
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, headers: { 'x-tasks-token': server.token, 'accept-encoding': 'gzip, br' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const sent = Buffer.concat(chunks);
          const encoding = res.headers['content-encoding'];
          resolve({ encoding, sent: sent.length, json: (encoding === 'gzip' ? gunzipSync(sent) : sent).toString('utf8') });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });

const doneIds = (page: Page) => page.$$eval('[data-column="done"] [data-task-id]', (els) => els.map((e) => Number(e.getAttribute('data-task-id'))));

describe('tasks serve on a board with a long history (the built bin, Chromium)', () => {
  it('sends the open work and the latest completions, with the closed tasks they name and the history counted', async () => {
    const { status, body: state } = await get<WebState>('/api/state');
    expect(status).toBe(200);
    const completed = state.tasks.filter((t) => t.status === 'completed').map((t) => t.id);
    // The latest completions: the highest ids, as the batch completed them in order (#302 last).
    expect(completed).toEqual([302, ...Array.from({ length: RECENT - 1 }, (_, i) => DONE - RECENT + 2 + i).filter((id) => id !== 10)].sort((a, b) => a - b));
    expect(state.tasks.filter((t) => t.status !== 'completed').map((t) => t.id)).toEqual([301, 303]);
    expect(state.history).toEqual({ completed: DONE, shown: RECENT, deleted: 1 });
    // #5 blocks #303; #2 is #299's parent: named, not held.
    expect(state.refs).toEqual([
      { id: 2, subject: 'Old work 2', status: 'completed', column: 'done' },
      { id: 5, subject: 'Old work 5', status: 'completed', column: 'done' },
    ]);
    expect(state.tasks.find((t) => t.id === 301)).toMatchObject({ column: 'ready', progress: { done: 1, total: 1 } });

    // The stream's state is the same folded one, not the whole board.
    const stream = await readStream(server.origin, server.token);
    await expect.poll(() => stream.states.length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(0);
    stream.close();
    const streamed = JSON.parse(stream.states[0]) as WebState;
    expect(streamed.tasks.map((t) => t.id)).toEqual(state.tasks.map((t) => t.id));
    // To a browser it goes compressed, and decodes to the same state.
    const zipped = await gzippedState();
    expect(zipped.encoding).toBe('gzip');
    expect((JSON.parse(zipped.json) as WebState).tasks.map((t) => t.id)).toEqual(state.tasks.map((t) => t.id));
    expect(zipped.sent).toBeLessThan(zipped.json.length / 4);
  });

  it('pages the history after a task, finds in it, answers a closed task by id, and refuses what it cannot answer', async () => {
    const first = await get<WebHistoryPage>('/api/history?limit=3');
    expect(first.body.tasks.map((t) => t.id)).toEqual([302, 300, 299]);
    expect(first.body.more).toBe(true);
    expect(first.body.refs.map((r) => r.id)).toEqual([2]); // #299's parent (#302's, open, is in the state)
    const next = await get<WebHistoryPage>('/api/history?before=299&limit=2');
    expect(next.body.tasks.map((t) => t.id)).toEqual([298, 297]);
    const last = await get<WebHistoryPage>('/api/history?before=3&limit=50');
    expect(last.body).toMatchObject({ more: false });
    expect(last.body.tasks.map((t) => t.id)).toEqual([2, 1]);
    const found = await get<WebHistoryPage>(`/api/history?q=${encodeURIComponent('zebra crossing')}`);
    expect(found.body.tasks.map((t) => t.id)).toEqual([7]);
    const task = await get<WebTaskAnswer>('/api/task/5');
    expect(task.body.task).toMatchObject({ id: 5, status: 'completed', column: 'done', description: 'details of 5', blocks: [303] });
    expect(task.body.refs).toEqual([]); // #303, which it blocks, is open: the state holds it
    expect((await get('/api/task/10')).status).toBe(404); // deleted
    expect((await get('/api/task/9999')).status).toBe(404);
    expect((await get('/api/history?before=10')).body.error?.code).toBe('E_NOT_FOUND');
    expect((await get('/api/history?limit=-1')).body.error?.code).toBe('E_USAGE');
    expect((await get('/api/task/abc')).status).toBe(400);
    expect((await get('/api/history', '')).status).toBe(403);
    expect((await get('/api/task/5', '')).status).toBe(403);
  });

  it('shows the latest completions in Done, counts them all, and brings more when asked', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
    await page.goto(server.url);
    await page.waitForSelector('[data-column="done"] [data-task-id="302"]');
    expect(await page.textContent('[data-column="done"] h2')).toBe(`Done ${DONE}`);
    expect(await doneIds(page)).toHaveLength(RECENT);
    // A child in Done whose parent is an old completed task says whose it is, from the refs.
    expect(await page.textContent('[data-column="done"] [data-task-id="299"] .parent-ref')).toBe('↑ #2 Old work 2');
    // A parent whose only child is done stands in Ready with its progress.
    expect(await page.textContent('[data-column="ready"] [data-task-id="301"] .progress')).toBe('(1/1 done)');

    const asked = page.waitForRequest((r) => r.url().includes('/api/history') && r.url().includes('before=252'));
    await page.click('[data-column="done"] [data-more="history"]');
    await asked;
    await page.waitForSelector('[data-column="done"] [data-task-id="152"]');
    const ids = await doneIds(page);
    expect(ids).toHaveLength(RECENT + 100);
    expect(ids.slice(0, 3)).toEqual([302, 300, 299]);
    expect(ids.at(-1)).toBe(152);
    // The column draws 150 cards until asked for all; then the rest of the history comes a page at a time.
    await page.click('[data-column="done"] [data-more="history"]');
    await page.click('[data-column="done"] button.more:has-text("show all 250")');
    await page.waitForSelector('[data-column="done"] [data-task-id="52"]');
    await page.click('[data-column="done"] [data-more="history"]');
    await page.waitForSelector('[data-column="done"] [data-task-id="1"]');
    expect(await doneIds(page)).toHaveLength(DONE);
    expect(await page.$('[data-column="done"] [data-more="history"]')).toBeNull();
    await page.close();
  });

  it('finds a completed task the page does not hold, and opens a closed task from a panel on demand', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
    await page.goto(server.url);
    await page.waitForSelector('[data-column="done"] [data-task-id="302"]');
    expect(await page.$('[data-task-id="7"]')).toBeNull();
    const searched = page.waitForRequest((r) => r.url().includes('/api/history') && r.url().includes('q=zebra'));
    await page.fill('input.search', 'zebra');
    await searched;
    await page.waitForSelector('[data-column="done"] [data-task-id="7"]');
    expect(await doneIds(page)).toEqual([7]);
    expect(await page.textContent('[data-column="done"] h2')).toBe('Done 1');

    // #303 waits for #5, long done: its panel names it from the refs, and opening it reads it from the server.
    await page.fill('input.search', '');
    await page.click('[data-column="ready"] [data-task-id="303"]');
    await page.waitForSelector('[data-panel="303"]');
    expect(await page.textContent('[data-panel="303"] .edges li')).toContain('#5: Old work 5 completed');
    const read = page.waitForRequest((r) => r.url().endsWith('/api/task/5'));
    await page.click('[data-panel="303"] .edges li button.link');
    await read;
    await page.waitForSelector('[data-panel="5"]');
    expect(await page.inputValue('[data-panel="5"] textarea')).toBe('details of 5');
    await page.close();
  });
});
