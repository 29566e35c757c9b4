import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildGraph, TaskStore } from '@dotasks/core/internal';
import type { Browser, Page } from 'playwright-core';
import { readTaskFile, tasks, tasksAsync, tempBoard } from '../../cli/test/helpers.js';
import { buildExampleBoard, httpRequest, launchBrowser, serve, type Served } from './serve-helpers.js';

// `tasks serve` in a real browser (Debian's Chromium driven by
// playwright-core) over the example board, with the CLI changing the same
// board from other processes. The tests run in order: each starts from the
// board the one before left.

const DOCS_IMAGES = fileURLToPath(new URL('../../../docs/images/', import.meta.url));

let board: ReturnType<typeof tempBoard>;
let server: Served;
let browser: Browser;
let page: Page;

const card = (id: number, column?: string) => (column ? `[data-column="${column}"] [data-task-id="${id}"]` : `[data-task-id="${id}"]`);
const status = (id: number) => readTaskFile(board.board, id).status;

async function columnIds(column: string): Promise<number[]> {
  return page.$$eval(`[data-column="${column}"] [data-task-id]`, (els) => els.map((e) => Number(e.getAttribute('data-task-id'))).sort((a, b) => a - b));
}

/** The ids of a column in the order the page shows them. */
async function shownOrder(column: string): Promise<number[]> {
  return page.$$eval(`[data-column="${column}"] [data-task-id]`, (els) => els.map((e) => Number(e.getAttribute('data-task-id'))));
}

/** Polls `check` until it holds, at most `ms` (no fixed sleeps). */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Saves a screenshot in the temp board and, with TASKS_SCREENSHOTS=1, over the README's copy in docs/images/. */
async function screenshot(name: string): Promise<void> {
  const file = join(board.root, name);
  await page.screenshot({ path: file });
  if (process.env.TASKS_SCREENSHOTS === '1') {
    mkdirSync(DOCS_IMAGES, { recursive: true });
    copyFileSync(file, join(DOCS_IMAGES, name));
  }
}

beforeAll(async () => {
  board = tempBoard();
  await buildExampleBoard(board.board);
  server = await serve(board.root, ['--owner', 'ann']);
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
  await page.goto(server.url);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  board?.cleanup();
});

describe('tasks serve in a browser', () => {
  it('listens on 127.0.0.1 and says whom it acts as', () => {
    expect(new URL(server.url).hostname).toBe('127.0.0.1');
    expect(server.token.length).toBeGreaterThanOrEqual(32);
    expect(server.stderr()).toContain('as ann');
    expect(server.stderr()).not.toContain('warning');
  });

  it('renders the example board: columns, owner and progress, the graph with ready tasks and the critical path', async () => {
    await page.waitForSelector(card(1, 'ready'));
    expect(await columnIds('ready')).toEqual([1]);
    expect(await columnIds('blocked')).toEqual([2, 3, 4, 7, 8, 9]);
    expect(await columnIds('in_progress')).toEqual([6]);
    expect(await columnIds('done')).toEqual([5]);
    const six = await page.textContent(card(6));
    expect(six).toContain('alice');
    expect(six).toContain('moving the session check');
    expect(six).toContain('no expiry');
    expect(await page.textContent(card(4))).toContain('waits for #2, #3');

    await page.click('[data-tab="graph"]');
    await page.waitForSelector('[data-node-id="9"]');
    expect(await page.$$eval('[data-node-id]', (els) => els.length)).toBe(9);
    // The same marks as `tasks graph`: the core's model decides which nodes are ready and critical.
    const model = buildGraph(new TaskStore(board.board).loadBoard().tasks);
    expect(model.criticalPath.length).toBeGreaterThan(1);
    const marked = await page.$$eval('[data-node-id]', (els) =>
      els.map((e) => ({ id: Number(e.getAttribute('data-node-id')), cls: e.getAttribute('class') ?? '' })),
    );
    for (const node of model.nodes) {
      const cls = marked.find((m) => m.id === node.id)!.cls.split(' ');
      expect(cls.includes('crit'), `#${node.id} critical`).toBe(node.critical);
      expect(cls.includes('ready'), `#${node.id} ready`).toBe(node.ready);
    }
    expect(await page.$$eval('polyline.edge.crit', (els) => els.length)).toBe(model.criticalPath.length - 1);
    // A click on a node opens the task.
    await page.click('[data-node-id="7"]');
    await page.waitForSelector('[data-panel="7"]');
    expect(await page.inputValue('[data-panel="7"] input[name="subject"]')).toBe('Add the OAuth endpoint');
    await page.click('[data-panel="7"] .close');
    await page.click('[data-tab="board"]');
  });

  it('a task completed with the CLI moves column within a second', async () => {
    const done = await tasksAsync(board.root, ['done', '1', '--owner', 'ann']);
    expect(done.code).toBe(0);
    const after = Date.now();
    await page.waitForSelector(card(1, 'done'), { timeout: 1000 });
    await page.waitForSelector(card(3, 'ready'), { timeout: 1000 });
    expect(Date.now() - after).toBeLessThan(1000);
    expect(await columnIds('ready')).toEqual([2, 3]);
    // The event stream shows it too.
    await page.waitForSelector('.events li.ev.completed button:text("#1")', { timeout: 1000 });
  });

  it('dragging a card to Done completes the task on disk and unblocks its dependents', async () => {
    await page.dragAndDrop(card(2, 'ready'), '[data-column="done"]');
    await until(() => status(2) === 'completed', 5000, '#2 completed on disk');
    await page.waitForSelector(card(2, 'done'));
    expect(readTaskFile(board.board, 4).blockedBy).toEqual([3]);

    await page.dragAndDrop(card(3, 'ready'), '[data-column="done"]');
    // #3 and #4 are renamed one after the other: wait for both.
    await until(
      () => status(3) === 'completed' && (readTaskFile(board.board, 4).blockedBy as number[]).length === 0,
      5000,
      '#3 completed and #4 unblocked on disk',
    );
    await page.waitForSelector(card(4, 'ready'));
    await page.waitForSelector('[data-notice="ok"]:has-text("completed #3: Emit output; unblocked #4")');
    // Latest first. The page's state and the action's answer come by different connections, so wait for the state.
    const doneIds = `[...document.querySelectorAll('[data-column="done"] [data-task-id]')].map((e) => e.getAttribute('data-task-id')).join()`;
    await page.waitForFunction(`${doneIds} === '3,2,1,5'`, undefined, { timeout: 2000 }).catch(() => undefined); // the assertion below says what the page shows instead
    expect(await page.$$eval('[data-column="done"] [data-task-id]', (els) => els.map((e) => Number(e.getAttribute('data-task-id'))))).toEqual([3, 2, 1, 5]);
  });

  it("a refused move shows the server's reason and changes nothing", async () => {
    const claimed = tasks(board.root, ['claim', '4', '--owner', 'agent-1', '--lease', '900']);
    expect(claimed.code).toBe(0);
    expect(tasks(board.root, ['update', '4', '--owner', 'agent-1', '--active-form', 'running the suite', '--meta', 'branch=task/4']).code).toBe(0);
    await page.waitForSelector(card(4, 'in_progress'));
    expect(await page.textContent(card(4))).toMatch(/1[45]m \d\ds left/);

    await page.dragAndDrop(card(4, 'in_progress'), '[data-column="done"]');
    await page.waitForSelector('[data-notice="error"]');
    expect(await page.textContent('[data-notice="error"]')).toContain('task #4 belongs to agent-1');
    expect(status(4)).toBe('in_progress');
    await page.click('[data-notice="error"] .close');

    // A completed task is never reopened: the page says so without asking.
    await page.dragAndDrop(card(1, 'done'), '[data-column="ready"]').catch(() => undefined); // done cards are not draggable
    expect(status(1)).toBe('completed');
  });

  it('creates a task, edits it, adds and removes edges; a cycle is refused with the cycle spelled out', async () => {
    await page.click('button:text("New task")');
    await page.fill('form.create input[name="subject"]', 'Write the changelog');
    await page.fill('form.create input[name="blockedBy"]', '#3');
    await page.click('form.create button[type="submit"]');
    await page.waitForSelector('[data-panel="10"]');
    expect(readTaskFile(board.board, 10)).toMatchObject({ subject: 'Write the changelog', blockedBy: [], status: 'pending' });
    expect(readTaskFile(board.board, 3).blocks).toEqual([4, 10]);
    await page.waitForSelector(card(10, 'ready'));

    await page.fill('[data-panel="10"] input[name="subject"]', 'Write the changelog for 0.2');
    await page.fill('[data-panel="10"] textarea[name="description"]', 'What changed, for people.');
    await page.click('[data-panel="10"] button:text("Save")');
    await page.waitForSelector('[data-notice="ok"]:has-text("updated #10")');
    expect(readTaskFile(board.board, 10).subject).toBe('Write the changelog for 0.2');
    expect(readTaskFile(board.board, 10).description).toBe('What changed, for people.');

    // A subject the CLI refuses is refused here with the same words.
    await page.fill('[data-panel="10"] input[name="subject"]', '   ');
    await page.click('[data-panel="10"] button:text("Save")');
    await page.waitForSelector('[data-notice="error"]:has-text("a task needs a subject")');
    expect(readTaskFile(board.board, 10).subject).toBe('Write the changelog for 0.2');
    await page.click('[data-notice="error"] .close');
    await page.click('[data-panel="10"] .close');

    // #7 waits for #6; #6 waiting for #7 would close a cycle.
    await page.click(card(6));
    await page.fill('[data-panel="6"] input[name="blocker"]', '7');
    await page.click('[data-panel="6"] form.add-edge button');
    await page.waitForSelector('[data-notice="error"]');
    expect(await page.textContent('[data-notice="error"]')).toMatch(/would close a cycle #\d+ -> #\d+ -> #\d+/);
    expect(readTaskFile(board.board, 6).blockedBy).toEqual([]);
    await page.click('[data-notice="error"] .close');
    await page.click('[data-panel="6"] .close');

    // #8 no longer waits for #7, then waits for #9: both sides written.
    await page.click(card(8));
    await page.click('[data-panel="8"] button[title="#8 no longer waits for #7"]');
    // The two files of an edge are renamed one after the other: wait for both, then look at both.
    const sides = (a: number, b: number): string => JSON.stringify([readTaskFile(board.board, a).blockedBy, readTaskFile(board.board, b).blocks]);
    await until(() => sides(8, 7) === '[[6],[9]]', 5000, '#8 no longer waits for #7, and #7 no longer blocks #8');
    await page.fill('[data-panel="8"] input[name="blocker"]', '#9');
    await page.click('[data-panel="8"] form.add-edge button');
    await until(() => sides(8, 9) === '[[6,9],[8]]', 5000, '#8 waits for #9, and #9 blocks #8');
    await page.click('[data-panel="8"] .close');
  });

  it('plans: priority and labels on create and in the panel, Ready in claim order, notes to the file and followed live', async () => {
    await page.click('button:text("New task")');
    await page.fill('form.create input[name="subject"]', 'Tag the release');
    await page.selectOption('form.create select[name="priority"]', '3');
    await page.fill('form.create input[name="labels"]', 'release, ops');
    await page.click('form.create button[type="submit"]');
    await page.waitForSelector('[data-panel="11"]');
    expect(readTaskFile(board.board, 11)).toMatchObject({ subject: 'Tag the release', priority: 3, labels: ['ops', 'release'] });
    await page.waitForSelector(card(11, 'ready'));
    expect(await page.textContent(card(11))).toContain('P3#ops#release');
    expect(await shownOrder('ready')).toEqual([10, 11]);

    // Soft links made by the CLI show in the open panel, and move nothing (docs/protocol.md, "Links").
    expect(tasks(board.root, ['update', '11', '--related', '10', '--discovered-from', '10']).code).toBe(0);
    await expect.poll(() => page.textContent('[data-panel="11"] .links'), { interval: 50 }).toBe('related: #10 found while on #10 ');
    expect(await shownOrder('ready')).toEqual([10, 11]);

    // Priority 0 on a ready task: it moves to the top of Ready, in the order `tasks ready` (and claim --next) takes.
    await page.selectOption('[data-panel="11"] select[name="priority"]', '0');
    await until(() => readTaskFile(board.board, 11).priority === 0, 5000, '#11 at P0 on disk');
    await expect.poll(() => shownOrder('ready'), { interval: 50 }).toEqual([11, 10]);
    const ready = JSON.parse(tasks(board.root, ['ready', '--json']).stdout) as { tasks: { id: number }[] };
    expect(ready.tasks.map((t) => t.id)).toEqual([11, 10]);
    expect(await page.textContent('[data-panel="11"] .claim-why')).toContain('next to be claimed: P0');
    // A priority out of range is refused with the store's words.
    const tooLow = await httpRequest(server.origin, {
      method: 'PATCH',
      path: '/api/tasks/11',
      headers: { 'x-tasks-token': server.token, origin: server.origin },
      body: { priority: 7 },
    });
    expect(tooLow.status).toBe(400);
    expect(tooLow.body.error?.message).toContain('a priority is an integer from 0 (highest) to 4');

    // Labels: one removed, one added (a label may hold a space).
    await page.click('[data-panel="11"] button[aria-label="remove #ops"]');
    await until(() => JSON.stringify(readTaskFile(board.board, 11).labels) === '["release"]', 5000, '#ops removed');
    await page.fill('[data-panel="11"] input[name="labels"]', 'ship it');
    await page.click('[data-panel="11"] form.add-labels button');
    await until(() => JSON.stringify(readTaskFile(board.board, 11).labels) === '["release","ship it"]', 5000, '"ship it" added');

    // A note from the page is in the task file, as the server's actor; a blank one is refused as `tasks note` refuses it.
    await page.fill('[data-panel="11"] textarea[name="note"]', 'waiting for the changelog (#10)');
    await page.click('[data-panel="11"] form.add-note button');
    await until(() => ((readTaskFile(board.board, 11).notes as unknown[] | undefined) ?? []).length === 1, 5000, 'the note on disk');
    expect(readTaskFile(board.board, 11).notes).toEqual([{ at: expect.stringMatching(/Z$/), owner: 'ann', text: 'waiting for the changelog (#10)' }]);
    await page.waitForSelector('[data-panel="11"] .notes li:has-text("waiting for the changelog")');
    // The note shows through the board's feed; the box is emptied when the action's answer comes, by another connection.
    await expect.poll(() => page.inputValue('[data-panel="11"] textarea[name="note"]'), { timeout: 5000, interval: 50 }).toBe('');
    await page.fill('[data-panel="11"] textarea[name="note"]', '   ');
    await page.click('[data-panel="11"] form.add-note button');
    await page.waitForSelector('[data-notice="error"]:has-text("note needs some text")');
    await page.click('[data-notice="error"] .close');
    expect(readTaskFile(board.board, 11).notes).toHaveLength(1);

    // A note added with the CLI shows in the open panel, live.
    expect(tasks(board.root, ['note', '11', 'the tag needs a signed key', '--owner', 'agent-1']).code).toBe(0);
    await page.waitForSelector('[data-panel="11"] .notes li:has-text("agent-1: the tag needs a signed key")', { timeout: 2000 });
    expect(await page.textContent(card(11))).toContain('2 notes');
    await page.click('[data-panel="11"] .close');

    // The search box reads labels and notes too; the priority filter keeps one priority.
    await page.fill('input.search', 'ship it');
    await expect.poll(() => page.$$eval('.kanban [data-task-id]', (els) => els.map((e) => e.getAttribute('data-task-id'))), { interval: 50 }).toEqual(['11']);
    await page.fill('input.search', 'signed key');
    await expect.poll(() => page.$$eval('.kanban [data-task-id]', (els) => els.map((e) => e.getAttribute('data-task-id'))), { interval: 50 }).toEqual(['11']);
    await page.fill('input.search', '');
    await page.selectOption('select.prio-filter', '0');
    await expect.poll(() => page.$$eval('.kanban [data-task-id]', (els) => els.map((e) => e.getAttribute('data-task-id'))), { interval: 50 }).toEqual(['11']);
    await page.selectOption('select.prio-filter', '');
    await page.waitForSelector(card(1));
  });

  it('the agents panel shows every owner, its lease counting down, its branch and last events; the search box filters', async () => {
    await page.click('[data-tab="agents"]');
    await page.waitForSelector('[data-agent="agent-1"]');
    const agent = (await page.textContent('[data-agent="agent-1"]')) ?? '';
    expect(agent).toContain('#4: Run tests');
    expect(agent).toContain('task/4');
    expect(agent).toMatch(/\d+m \d\ds left/);
    expect(agent).toContain('claimed');
    expect(await page.textContent('[data-agent="alice"]')).toContain('no expiry');
    const before = await page.textContent('[data-agent="agent-1"] .lease');
    // The countdown ticks on its own, without a change of the board.
    await expect.poll(() => page.textContent('[data-agent="agent-1"] .lease'), { timeout: 3000, interval: 100 }).not.toBe(before);

    await page.click('[data-tab="board"]');
    await page.fill('input.search', 'auth');
    await expect.poll(() => page.$$eval('[data-task-id]', (els) => els.length), { interval: 50 }).toBe(3);
    expect(await columnIds('in_progress')).toEqual([6]);
    expect(await columnIds('blocked')).toEqual([7, 8]);
    await page.fill('input.search', '');
    await page.waitForSelector(card(1));
  });

  it('screenshots of the board and the graph', async () => {
    await page.setViewportSize({ width: 1360, height: 640 });
    if (await page.$('[data-notice] .close')) await page.click('[data-notice] .close');
    await page.click('[data-tab="board"]');
    await page.waitForSelector(card(10, 'ready'));
    await screenshot('board.png');
    await page.click('[data-tab="graph"]');
    await page.waitForSelector('[data-node-id="10"]');
    await screenshot('graph.png');
    await page.click('[data-tab="board"]');
    await page.setViewportSize({ width: 1440, height: 860 });
  });

  it('refuses writes without the token, from another Origin, or to another Host', async () => {
    const write = (headers: Record<string, string>) =>
      httpRequest(server.origin, { method: 'POST', path: '/api/tasks/7/done', headers, body: { force: true } });
    const noToken = await write({ origin: server.origin });
    expect(noToken.status).toBe(403);
    expect(noToken.body.error?.message).toContain("needs this run's token");
    const wrongToken = await write({ 'x-tasks-token': server.token.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) });
    expect(wrongToken.status).toBe(403);
    const foreign = await write({ 'x-tasks-token': server.token, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error?.message).toContain('another site');
    const crossSite = await write({ 'x-tasks-token': server.token, origin: server.origin, 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const rebound = await write({ 'x-tasks-token': server.token, host: `evil.example:${new URL(server.origin).port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body.error?.message).toContain('answers only to');
    // Reads need the token too (a rebound name cannot read the board either).
    expect((await httpRequest(server.origin, { method: 'GET', path: '/api/state' })).status).toBe(403);
    expect(status(7)).toBe('pending');

    // The same request with the token, from the page's own origin, goes through (and the store still refuses what it refuses).
    const ok = await write({ 'x-tasks-token': server.token, origin: server.origin });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ task: 7, unblocked: [9] });
    expect(status(7)).toBe('completed');
  });
});
