import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readTaskFile, tasks, tempBoard } from '../../cli/test/helpers.js';
import { httpRequest, serve, type Served } from './serve-helpers.js';

describe("tasks serve's finish runs the task's check before done (the built bin, real processes)", () => {
  let server: Served | undefined;
  let cleanup = () => {};
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    cleanup();
  });

  it('a failing check answers 409 E_VERIFY and leaves the task in progress with its note; a passing one completes it', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    tasks(t.root, ['create', 'Checked', '--verify', 'echo "3 failed"; test -f ok']);
    tasks(t.root, ['start', '1', '--owner', 'ann']);
    server = await serve(t.root, [], { TASKS_OWNER: 'ann' });
    const done = () => httpRequest(server!.origin, { method: 'POST', path: '/api/tasks/1/done', headers: { 'x-tasks-token': server!.token }, body: {} });

    const refused = await done();
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'E_VERIFY' });
    expect(refused.body.error?.message).toMatch(/^the check of #1 failed \(exit 1\): echo "3 failed"; test -f ok; #1 stays in progress/);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'in_progress', owner: 'ann' });
    expect((readTaskFile(t.board, 1).notes as { text: string }[])[0].text).toContain('its output ended:\n3 failed');

    writeFileSync(join(t.root, 'ok'), '');
    const passed = await done();
    expect(passed.status, JSON.stringify(passed.body)).toBe(200);
    expect(readTaskFile(t.board, 1).status).toBe('completed');
  });
});
