import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readTaskFile, tasks } from '../helpers.js';
import { columnsOf as columnsOfTitles, hasTmux, tmuxBoards } from '../tmux-board.js';
import { git, tempRepo } from '../agents-helpers.js';

/**
 * The task branches on `tasks board` (docs/decisions.md, "Branch status on
 * the cards"), through a real pseudo-terminal: tmux runs the board on its
 * own server (-L) in a real git repository whose tasks have worktrees and
 * commits; the test types with send-keys and polls capture-pane.
 */

const boards = tmuxBoards(`dotasks-branches-${process.pid}`, { width: 160, height: 40 });
const { tmux, screenWhere } = boards;
const startBoard = (name: string, board: string, owner: string) => boards.start(name, board, owner);

const IDENTITY = {
  GIT_AUTHOR_NAME: 'dotasks test',
  GIT_AUTHOR_EMAIL: 'test@dotasks.invalid',
  GIT_COMMITTER_NAME: 'dotasks test',
  GIT_COMMITTER_EMAIL: 'test@dotasks.invalid',
};

const TITLES = ['Ready', 'Blocked', 'In progress', 'Review', 'Done'] as const;
const columnsOf = (text: string) => columnsOfTitles(text, TITLES);

type Repo = ReturnType<typeof tempRepo>;

function ok(cwd: string, args: string[]): string {
  const r = tasks(cwd, args, IDENTITY);
  expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Creates task `subject`, claims it with a worktree for `owner`, and commits `files` on its branch. */
function taskWithWork(r: Repo, subject: string, owner: string, files: Record<string, string>): number {
  const id = (JSON.parse(ok(r.repo, ['create', subject, '--json'])) as { task: { id: number } }).task.id;
  const claim = JSON.parse(ok(r.repo, ['claim', String(id), '--worktree', '--owner', owner, '--json'])) as { worktree: { path: string } };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(claim.worktree.path, name), text);
  git(claim.worktree.path, ['add', '-A']);
  git(claim.worktree.path, ['commit', '-q', '-m', `${subject}: the work`]);
  return id;
}

describe.skipIf(!hasTmux)('tasks board shows the task branches', () => {
  let cleanup = () => {};
  afterEach(() => {
    boards.killServer();
    cleanup();
  });

  it('on the cards and in the detail, follows a commit on main into conflicts, a approves a task from the Review lane, and its card says merged once main holds it', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ review: true }) + '\n');
    const parser = taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const emitter = taskWithWork(r, 'emitter', 'carol', { 'emitter.txt': 'emit\n' });
    ok(r.repo, ['done', String(emitter), '--owner', 'carol']);
    ok(r.repo, ['create', 'docs']);
    startBoard('g1', r.board, 'bob');

    let cols = columnsOf(
      await screenWhere('g1', (s) => {
        expect(columnsOf(s)['In progress']).toContain('⎇ ↑1 ↓0 task/1');
        expect(columnsOf(s).Review).toContain('⎇ ↑1 ↓0 task/2');
      }),
    );
    expect(cols['In progress']).toMatch(/#1 parser[\s\S]*alice[\s\S]*⎇ ↑1 ↓0 task\/1/);
    expect(cols.Review).toMatch(/#2 emitter[\s\S]*carol's work[\s\S]*⎇ ↑1 ↓0 task\/2/);
    expect(cols.Ready).toContain('#3 docs');
    expect(cols.Ready).not.toContain('⎇'); // a pending task has no branch line

    // The detail says it in full.
    for (let i = 0; i < 2; i++) tmux('send-keys', '-t', 'g1', 'Right');
    await screenWhere('g1', (s) => expect(columnsOf(s)['In progress']).toContain('› #1 parser'));
    tmux('send-keys', '-t', 'g1', 'Enter');
    await screenWhere('g1', (s) => expect(s).toContain('branch: task/1 → main: ahead 1 · behind 0 · clean'));
    tmux('send-keys', '-t', 'g1', 'Escape');
    await screenWhere('g1', (s) => expect(columnsOf(s)['In progress']).toContain('› #1 parser'));

    // main gains a commit that touches parser.txt too: no task file changes, and the cards follow.
    writeFileSync(join(r.repo, 'parser.txt'), 'parse differently\n');
    git(r.repo, ['add', 'parser.txt']);
    git(r.repo, ['commit', '-q', '-m', 'main: its own parser']);
    cols = columnsOf(
      await screenWhere('g1', (s) => {
        expect(columnsOf(s)['In progress']).toContain('⎇ ↑1 ↓1 conflicts task/1');
        expect(columnsOf(s).Review).toContain('⎇ ↑1 ↓1 task/2');
      }),
    );
    expect(cols.Review).not.toContain('conflicts');
    tmux('send-keys', '-t', 'g1', 'Enter');
    await screenWhere('g1', (s) => expect(s).toContain('branch: task/1 → main: ahead 1 · behind 1 · conflicts'));
    tmux('send-keys', '-t', 'g1', 'Escape');
    // Back on the columns before the next key: an Escape and an arrow in one read are one key to a terminal (Alt and the arrow).
    await screenWhere('g1', (s) => expect(columnsOf(s)['In progress']).toContain('› #1 parser'));

    // To the Review lane, then a: #2 is approved as bob and goes to Done with its branch line.
    tmux('send-keys', '-t', 'g1', 'Right');
    await screenWhere('g1', (s) => expect(columnsOf(s).Review).toContain('› #2 emitter'));
    tmux('send-keys', '-t', 'g1', 'a');
    await vi.waitFor(() => expect(readTaskFile(r.board, emitter)).toMatchObject({ status: 'completed', review: { state: 'approved', by: 'bob' } }), {
      timeout: 10_000,
      interval: 20,
    });
    cols = columnsOf(await screenWhere('g1', (s) => expect(columnsOf(s).Done).toContain('⎇ ↑1 ↓1 task/2')));
    expect(cols.Done).toContain('#2 emitter');
    expect(cols.Review).toContain('(none)');
    expect(readTaskFile(r.board, parser)).toMatchObject({ status: 'in_progress', owner: 'alice' });

    // A person merges the approved branch: its Done card says merged, no task file changing.
    git(r.repo, ['merge', '-q', '--no-edit', 'task/2']);
    cols = columnsOf(await screenWhere('g1', (s) => expect(columnsOf(s).Done).toContain('⎇ merged task/2')));
    expect(cols['In progress']).toContain('⎇ ↑1 ↓3 conflicts task/1'); // main's commit, task/2's and the merge
    tmux('send-keys', '-t', 'g1', 'q');
    await screenWhere('g1', (s) => expect(s).toContain('board exited 0'));
  });
});
