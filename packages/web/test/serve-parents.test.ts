import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core';
import type { Browser, Page } from 'playwright-core';
import { tasksAsync, tempBoard } from '../../cli/test/helpers.js';
import { launchBrowser, serve, type Served } from './serve-helpers.js';

/** The ids of a column's cards, top down, each with how deep it stands under its parent. */
const cardsOf = (page: Page, column: string) =>
  page.$$eval(`[data-column="${column}"] [data-task-id]`, (els) =>
    els.map((e) => [Number(e.getAttribute('data-task-id')), Number(e.getAttribute('data-depth'))]),
  );

describe("tasks serve's kanban groups children under their parent (Chromium, the built bin, real processes)", () => {
  let server: Served | undefined;
  let browser: Browser | undefined;
  let cleanup = () => {};
  afterEach(async () => {
    await browser?.close();
    await server?.stop();
    browser = server = undefined;
    cleanup();
  });

  it('stands a child right under its parent, puts progress on parent cards, says whose a child elsewhere is, and shows the chain and children in the panel', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const store = new TaskStore(t.board);
    await store.createTask({ subject: 'Unrelated' });
    await store.createTask({ subject: 'Release epic' });
    await store.createTask({ subject: 'Waits for unrelated', blockedBy: [1] });
    await store.createTask({ subject: 'Story', parent: 2 });
    await store.createTask({ subject: 'Write code', parent: 4 });
    await store.createTask({ subject: 'Docs', parent: 2 });
    await store.completeTask(6, { actor: 'ann' });
    server = await serve(t.root, ['--owner', 'ann']);
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
    await page.goto(server.url);

    await page.waitForSelector('[data-column="blocked"] [data-task-id="4"]');
    // Blocked by id would be #2, #3, #4: the story stands right under its epic, indented.
    expect(await cardsOf(page, 'blocked')).toEqual([
      [2, 0],
      [4, 1],
      [3, 0],
    ]);
    expect(await page.textContent('[data-column="blocked"] [data-task-id="2"] .progress')).toBe('(1/2 done)');
    expect(await page.textContent('[data-column="blocked"] [data-task-id="4"] .progress')).toBe('(0/1 done)');
    expect(await page.$('[data-column="blocked"] [data-task-id="4"] .parent-ref')).toBeNull();
    expect(await page.$('[data-column="blocked"] [data-task-id="3"] .progress')).toBeNull();
    // Children whose parent stands in another column say whose they are.
    expect(await page.textContent('[data-column="ready"] [data-task-id="5"] .parent-ref')).toBe('↑ #4 Story');
    expect(await page.textContent('[data-column="done"] [data-task-id="6"] .parent-ref')).toBe('↑ #2 Release epic');
    expect(await page.$('[data-column="ready"] [data-task-id="1"] .parent-ref')).toBeNull();

    // The story's panel: its chain of parents and its children with their status.
    await page.click('[data-column="blocked"] [data-task-id="4"]');
    await page.waitForSelector('[data-panel="4"] [data-parents]');
    expect(await page.textContent('[data-panel="4"] [data-parents]')).toBe('part of #2: Release epic');
    expect(await page.textContent('[data-panel="4"] [data-child="5"]')).toBe('#5: Write code pending');
    // The epic's: its children, done and open, under its progress.
    await page.click('[data-panel="4"] [data-parents] button');
    await page.waitForSelector('[data-panel="2"] [data-child="6"]');
    expect(await page.textContent('[data-panel="2"] .children')).toBe('#4: Story pending#6: Docs completed');
    expect(await page.textContent('[data-panel="2"] h3:has-text("Children")')).toBe('Children 1/2 done');
    await page.click('[data-panel="2"] button.close');

    // Another process completes the story's last child: the story moves to Ready, and Done says whose #5 is.
    expect((await tasksAsync(t.root, ['done', '5', '--owner', 'ann'])).code).toBe(0);
    await page.waitForSelector('[data-column="ready"] [data-task-id="4"]');
    await page.waitForSelector('[data-column="done"] [data-task-id="5"] .parent-ref:has-text("↑ #4 Story")');
    expect(await page.textContent('[data-column="ready"] [data-task-id="4"] .parent-ref')).toBe('↑ #2 Release epic');
    expect(await page.textContent('[data-column="ready"] [data-task-id="4"] .progress')).toBe('(1/1 done)');
  });
});
