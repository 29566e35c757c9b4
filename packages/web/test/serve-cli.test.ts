import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tasks, tempBoard } from '../../cli/test/helpers.js';
import { httpRequest, serve } from './serve-helpers.js';

// The command line of `tasks serve`, without a browser.

let board: ReturnType<typeof tempBoard>;

beforeAll(() => {
  board = tempBoard();
  expect(tasks(board.root, ['create', 'Parse AST']).code).toBe(0);
});

afterAll(() => board?.cleanup());

describe('tasks serve', () => {
  it('--host other than loopback warns on stderr; --json prints the address', async () => {
    const server = await serve(board.root, ['--host', '0.0.0.0', '--json']);
    try {
      expect(server.stderr()).toContain('warning: listening on 0.0.0.0, not only on this machine');
      const state = await httpRequest(server.origin, { method: 'GET', path: '/api/state', headers: { 'x-tasks-token': server.token } });
      expect(state.status).toBe(200);
      expect((state.body.tasks as { subject: string }[]).map((t) => t.subject)).toEqual(['Parse AST']);
    } finally {
      await server.stop();
    }
  });

  it('a port in use is refused with one line', async () => {
    const first = await serve(board.root, []);
    try {
      const port = new URL(first.origin).port;
      const second = tasks(board.root, ['serve', '--port', port]);
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(`tasks: port ${port} on 127.0.0.1 is in use; pick another with --port, or 0 for any free one\n`);
    } finally {
      await first.stop();
    }
  });

  it('without a board it fails as every command does', () => {
    const empty = tempBoard({ init: false });
    try {
      const r = tasks(empty.root, ['serve']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('tasks init');
    } finally {
      empty.cleanup();
    }
  });

  it('an idle board is not read again (the poll only stats), and a hand edit still reaches the page', async () => {
    const server = await serve(board.root, [], { TASKS_DEBUG: '1' });
    const reads = () =>
      server
        .stderr()
        .split('\n')
        .filter((l) => l === 'tasks serve: read the board').length;
    const idlePolls = () =>
      server
        .stderr()
        .split('\n')
        .filter((l) => l === 'tasks serve: poll: nothing moved').length;
    const until = async (what: string, done: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 400 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(await done(), `${what}; stderr: ${server.stderr()}`).toBe(true);
    };
    try {
      await until('two polls that found nothing moved', () => idlePolls() >= 2);
      const before = reads();
      await until('a third idle poll', () => idlePolls() >= 3);
      expect(reads()).toBe(before);
      // A hand edit in place (as an editor saves): the folder watch sees it, the board is read once more.
      const file = join(board.board, 'task_1.json');
      writeFileSync(file, readFileSync(file, 'utf8').replace('"Parse AST"', '"Parse the AST"'));
      const subjects = async () => {
        const state = await httpRequest(server.origin, { method: 'GET', path: '/api/state', headers: { 'x-tasks-token': server.token } });
        return (state.body.tasks as { subject: string }[]).map((t) => t.subject);
      };
      await until('the edit on the page', async () => (await subjects()).includes('Parse the AST'));
      expect(reads()).toBeGreaterThan(before);
    } finally {
      await server.stop();
      const file = join(board.board, 'task_1.json');
      writeFileSync(file, readFileSync(file, 'utf8').replace('"Parse the AST"', '"Parse AST"'));
    }
  });
});
