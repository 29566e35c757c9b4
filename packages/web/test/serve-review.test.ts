import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core';
import type { Browser } from 'playwright-core';
import { readTaskFile, tempBoard } from '../../cli/test/helpers.js';
import { httpRequest, launchBrowser, serve, type Served } from './serve-helpers.js';

/** Polls `check` until it holds, at most `ms` (no fixed sleeps). */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("tasks serve's Review column (Chromium, the built bin, real processes)", () => {
  let server: Served | undefined;
  let browser: Browser | undefined;
  let cleanup = () => {};
  afterEach(async () => {
    await browser?.close();
    await server?.stop();
    browser = server = undefined;
    cleanup();
  });

  it('shows the tasks waiting for review between In progress and Done; Approve completes one, Reject asks for a note and sends one back', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    writeFileSync(join(t.board, 'config.json'), JSON.stringify({ review: true }));
    const store = new TaskStore(t.board);
    for (const [id, owner] of ['alice', 'carol', 'ann'].entries()) {
      await store.createTask({ subject: `Work of ${owner}` });
      await store.startTask(id + 1, { owner, actor: owner });
      await store.completeTask(id + 1, { actor: owner });
    }
    await store.createTask({ subject: 'After alice', blockedBy: [1] });
    server = await serve(t.root, ['--owner', 'ann']);
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
    await page.goto(server.url);

    await page.waitForSelector('[data-column="review"] [data-task-id="1"]');
    const columns = await page.$$eval('[data-column]', (els) => els.map((e) => e.getAttribute('data-column')));
    expect(columns).toEqual(['ready', 'blocked', 'in_progress', 'review', 'done']);
    const inReview = await page.$$eval('[data-column="review"] [data-task-id]', (els) => els.map((e) => Number(e.getAttribute('data-task-id'))));
    expect(inReview).toEqual([1, 2, 3]);
    expect(await page.textContent('[data-column="review"] [data-task-id="1"]')).toContain('alice: waits for review');

    await page.click('[data-column="review"] [data-task-id="1"] button.approve');
    await until(() => readTaskFile(t.board, 1).status === 'completed', 5000, '#1 approved on disk');
    expect(readTaskFile(t.board, 1).review).toMatchObject({ state: 'approved', by: 'ann' });
    await page.waitForSelector('[data-column="done"] [data-task-id="1"]');
    await page.waitForSelector('[data-column="ready"] [data-task-id="4"]');
    await page.waitForSelector('[data-notice="ok"]:has-text("approved #1: Work of alice; unblocked #4")');

    page.once('dialog', (dialog) => void dialog.accept('the tests do not run'));
    await page.click('[data-column="review"] [data-task-id="2"] button.reject');
    await until(() => readTaskFile(t.board, 2).status === 'pending', 5000, '#2 sent back on disk');
    expect(readTaskFile(t.board, 2)).toMatchObject({ owner: 'carol', review: { state: 'rejected', by: 'ann' } });
    expect((readTaskFile(t.board, 2).notes as { text: string }[]).map((n) => n.text)).toEqual(['sent back in review: the tests do not run']);
    await page.waitForSelector('[data-column="ready"] [data-task-id="2"]');

    // #3 is ann's own, and the server acts as ann: refused, with the reason on the page, and nothing changes.
    await page.click('[data-column="review"] [data-task-id="3"] button.approve');
    await page.waitForSelector('[data-notice="error"]:has-text("task #3 is ann\'s own work")');
    expect(readTaskFile(t.board, 3)).toMatchObject({ status: 'in_progress', review: { state: 'waiting' } });
    // The API says the same: 409, E_OWN_REVIEW; a reject without a note is a usage error (400).
    const own = await httpRequest(server.origin, { method: 'POST', path: '/api/tasks/3/approve', headers: { 'x-tasks-token': server.token }, body: {} });
    expect(own.status).toBe(409);
    expect(own.body.error?.code).toBe('E_OWN_REVIEW');
    const noNote = await httpRequest(server.origin, { method: 'POST', path: '/api/tasks/3/reject', headers: { 'x-tasks-token': server.token }, body: {} });
    expect(noNote.status).toBe(400);
  });
});
