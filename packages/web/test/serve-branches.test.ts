import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { readTaskFile, tasks } from '../../cli/test/helpers.js';
import { git, tempRepo } from '../../cli/test/agents-helpers.js';
import { launchBrowser, serve, type Served } from './serve-helpers.js';

/**
 * The task branches on `tasks serve`'s page (docs/decisions.md, "Branch
 * status on the cards"): a real git repository whose tasks have worktrees
 * and commits, the built bin, and Chromium.
 */

const IDENTITY = {
  GIT_AUTHOR_NAME: 'dotasks test',
  GIT_AUTHOR_EMAIL: 'test@dotasks.invalid',
  GIT_COMMITTER_NAME: 'dotasks test',
  GIT_COMMITTER_EMAIL: 'test@dotasks.invalid',
};

type Repo = ReturnType<typeof tempRepo>;

function ok(cwd: string, args: string[]): string {
  const r = tasks(cwd, args, IDENTITY);
  expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Commits `files` in the worktree at `path`. */
function commit(path: string, files: Record<string, string>, message: string): void {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text);
  git(path, ['add', ...Object.keys(files)]);
  git(path, ['commit', '-q', '-m', message]);
}

/** Creates task `subject`, claims it with a worktree for `owner`, and commits `files` on its branch. */
function taskWithWork(r: Repo, subject: string, owner: string, files: Record<string, string>): { id: number; path: string } {
  const id = (JSON.parse(ok(r.repo, ['create', subject, '--json'])) as { task: { id: number } }).task.id;
  const claim = JSON.parse(ok(r.repo, ['claim', String(id), '--worktree', '--owner', owner, '--json'])) as { worktree: { path: string } };
  commit(claim.worktree.path, files, `${subject}: the work`);
  return { id, path: claim.worktree.path };
}

/** Waits until the element at `selector` has exactly `text` (the page follows the server's poll of the refs); polls, no fixed sleeps. */
async function textBecomes(page: Page, selector: string, text: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  let shown: string | null = null;
  while ((shown = (await page.textContent(selector, { timeout: 10_000 }))?.trim() ?? null) !== text) {
    if (Date.now() > deadline) throw new Error(`not ${JSON.stringify(text)} within 10 s at ${selector}: ${JSON.stringify(shown)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('tasks serve shows the task branches (Chromium, the built bin, real git)', () => {
  let server: Served | undefined;
  let browser: Browser | undefined;
  let cleanup = () => {};
  afterEach(async () => {
    await browser?.close();
    await server?.stop();
    browser = server = undefined;
    cleanup();
  });

  it('on the cards and in the panel, follows new commits live, and approves from the Review column', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ review: true }) + '\n');
    const parser = taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const emitter = taskWithWork(r, 'emitter', 'carol', { 'emitter.txt': 'emit\n' });
    ok(r.repo, ['done', String(emitter.id), '--owner', 'carol']);
    ok(r.repo, ['create', 'docs']);
    server = await serve(r.repo, ['--owner', 'bob']);
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
    await page.goto(server.url);

    const card = (column: string, id: number) => `[data-column="${column}"] [data-task-id="${id}"] .branch-status`;
    await textBecomes(page, card('in_progress', parser.id), '⎇ task/1 ↑1 ↓0');
    await textBecomes(page, card('review', emitter.id), '⎇ task/2 ↑1 ↓0');
    expect(await page.$$('[data-column="ready"] .branch-status')).toHaveLength(0); // a pending task has no branch line

    // The panel says it in full.
    await page.click(`[data-column="in_progress"] [data-task-id="${parser.id}"]`);
    const panel = `[data-panel="${parser.id}"] .branch-status`;
    await textBecomes(page, panel, '→ main: ahead 1 · behind 0 · clean');

    // The branch gains a commit: no task file changes, and the card and the open panel follow.
    commit(parser.path, { 'parser.txt': 'parse\nand check\n' }, 'parser: more');
    await textBecomes(page, card('in_progress', parser.id), '⎇ task/1 ↑2 ↓0');
    await textBecomes(page, panel, '→ main: ahead 2 · behind 0 · clean');

    // main gains a commit on parser.txt too: conflicts, marked as such.
    commit(r.repo, { 'parser.txt': 'parse differently\n' }, 'main: its own parser');
    await textBecomes(page, card('in_progress', parser.id), '⎇ task/1 ↑2 ↓1 conflicts');
    await textBecomes(page, panel, '→ main: ahead 2 · behind 1 · conflicts');
    expect(await page.$$(`${card('in_progress', parser.id)}.conflicts`)).toHaveLength(1);
    await textBecomes(page, card('review', emitter.id), '⎇ task/2 ↑1 ↓1');
    expect(await page.$$(`${card('review', emitter.id)}.conflicts`)).toHaveLength(0);

    // Approve from the Review column: #2 is completed as bob and its Done card keeps the branch line.
    await page.click(`[data-panel="${parser.id}"] button.close`);
    await page.click(`[data-column="review"] [data-task-id="${emitter.id}"] button.approve`);
    await page.waitForSelector(`[data-column="done"] [data-task-id="${emitter.id}"]`);
    expect(readTaskFile(r.board, emitter.id)).toMatchObject({ status: 'completed', review: { state: 'approved', by: 'bob' } });
    await textBecomes(page, card('done', emitter.id), '⎇ task/2 ↑1 ↓1');
    expect(readTaskFile(r.board, parser.id)).toMatchObject({ status: 'in_progress', owner: 'alice' });
  });
});
