import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempBoard } from '../../test/helpers/temp-board.js';
import { readConfig } from '../board-config.js';
import { CorruptTaskError, TasksError } from '../errors.js';
import { parseTask, serializeTask, type Task } from '../format/format.js';
import { VerifyError, checkTail } from '../runtime/verify-run.js';
import { checkResult, checkVerifyCommand, clipResult, MAX_RESULT_CHARS } from './outcome-fields.js';
import { UPSTREAM_ENV_BYTES, upstreamEnv, upstreamOf } from './results.js';

const file = '/b/.tasks/task_3.json';

describe('the verify and result fields', () => {
  it('a file without them reads and writes as before, byte for byte; with them, they come after the notes, before metadata', () => {
    const old =
      '{\n  "id": 3,\n  "subject": "S",\n  "description": "",\n  "status": "pending",\n  "owner": "",\n  "blockedBy": [],\n  "blocks": [],\n  "metadata": {\n    "k": 1\n  }\n}\n';
    const task = parseTask(old, file);
    expect(task).not.toHaveProperty('verify');
    expect(task).not.toHaveProperty('result');
    expect(serializeTask(task)).toBe(old);
    const withThem = serializeTask({ ...task, verify: 'npm test', result: 'done\nwell', notes: [{ at: '2026-01-01T00:00:00.000Z', owner: 'a', text: 'n' }] });
    expect(Object.keys(JSON.parse(withThem) as object)).toEqual([
      'id',
      'subject',
      'description',
      'status',
      'owner',
      'blockedBy',
      'blocks',
      'notes',
      'verify',
      'result',
      'metadata',
    ]);
    expect(parseTask(withThem, file)).toMatchObject({ verify: 'npm test', result: 'done\nwell' });
  });

  it('a verify that is not a command, or a result that is not a string, makes the file bad at that key', () => {
    const bad = (extra: string) => {
      try {
        parseTask(`{"id":3,"subject":"S","status":"pending",\n${extra}}`, file);
      } catch (error) {
        if (error instanceof CorruptTaskError) return [error.line, error.column, error.details.problem];
        throw error;
      }
      throw new Error('expected the file to be refused');
    };
    expect(bad('"verify": ""')).toEqual([2, 1, '"verify" must be a shell command (a non-empty string), got ""']);
    expect(bad('"verify": ["npm", "test"]')).toEqual([2, 1, '"verify" must be a shell command (a non-empty string), got ["npm","test"]']);
    expect(bad('"result": 3')).toEqual([2, 1, '"result" must be a string, got 3']);
  });

  it('create and done hold them to their limits; a result file is cut to the limit instead', () => {
    expect(checkVerifyCommand('  npm test ')).toBe('npm test');
    expect(() => checkVerifyCommand('npm test\nnpm run lint')).toThrow(/one line/);
    expect(() => checkVerifyCommand('x'.repeat(1001))).toThrow(/at most 1000 characters/);
    expect(() => checkResult('   ')).toThrow(TasksError);
    expect(checkResult(' two\nlines ')).toBe('two\nlines');
    expect(() => checkResult('x'.repeat(MAX_RESULT_CHARS + 1))).toThrow(/at most 2000 characters \(this one has 2001\)/);
    expect(clipResult(' \n ')).toBeUndefined();
    const clipped = clipResult('y'.repeat(5000))!;
    expect(clipped).toHaveLength(MAX_RESULT_CHARS);
    expect(clipped.endsWith('y…')).toBe(true);
    // Not between the halves of a pair.
    const emoji = clipResult('a'.repeat(MAX_RESULT_CHARS - 2) + '😀'.repeat(10))!;
    expect(emoji.endsWith('a…')).toBe(true);
  });

  it('config.json takes a board-wide verify and its timeout', () => {
    const { dir } = tempBoard();
    expect(readConfig(dir)).toMatchObject({ verifyTimeoutSeconds: 600 });
    expect(readConfig(dir).verify).toBeUndefined();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ verify: 'npm test', verifyTimeoutSeconds: 30 }));
    expect(readConfig(dir)).toMatchObject({ verify: 'npm test', verifyTimeoutSeconds: 30 });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ verify: 3 }));
    expect(() => readConfig(dir)).toThrow(/"verify" must be a non-empty string/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ verifyTimeoutSeconds: 0 }));
    expect(() => readConfig(dir)).toThrow(/"verifyTimeoutSeconds" must be a positive number of seconds/);
  });
});

describe('the tail of a check', () => {
  it('drops escape sequences, keeps a line rewritten with \\r as it was left, and escapes what else draws nothing', () => {
    const raw = '\x1b]0;title\x07\x1b[1;31mFAIL\x1b[0m a.test.ts\r\nprogress 10%\rprogress 100%\n\x1bPdcs\x1b\\kept \u009b2Jafter \u202eevil \x07bell\n\n';
    expect(checkTail(raw)).toBe('FAIL a.test.ts\nprogress 100%\nkept after \\u202eevil \\x07bell');
  });

  it('keeps the last 40 lines, within 4096 characters, starting at a whole line', () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n');
    expect(checkTail(lines).split('\n')).toEqual(Array.from({ length: 40 }, (_, i) => `line ${i + 61}`));
    const wide = Array.from({ length: 40 }, (_, i) => `${i}:${'x'.repeat(200)}`).join('\n');
    const tail = checkTail(wide);
    expect(tail.length).toBeLessThanOrEqual(4096);
    expect(tail.split('\n')[0]).toMatch(/^\d+:x{200}$/);
    expect(tail.split('\n').at(-1)).toBe(`39:${'x'.repeat(200)}`);
  });
});

describe('results upstream', () => {
  const task = (id: number, fields: Partial<Task> = {}): Task => ({
    id,
    subject: `T${id}`,
    description: '',
    status: 'pending',
    owner: '',
    blockedBy: [],
    blocks: [],
    extra: {},
    ...fields,
  });

  it('are the direct blockers: completed ones through their blocks (kept as history), open ones through blockedBy; not deleted ones', () => {
    const tasks = [
      task(1, { status: 'completed', blocks: [4], result: 'r1' }),
      task(2, { status: 'completed', blocks: [4] }),
      task(3, { status: 'deleted', blocks: [4], result: 'dropped' }),
      task(4, { blockedBy: [5] }),
      task(5, { blocks: [4], result: 'not yet' }),
      task(6, { status: 'completed', blocks: [7], result: 'elsewhere' }),
    ];
    const byId = new Map(tasks.map((t) => [t.id, t]));
    expect(upstreamOf(byId.get(4)!, tasks, (id) => byId.get(id))).toEqual([
      { id: 1, subject: 'T1', result: 'r1' },
      { id: 2, subject: 'T2', result: null },
      { id: 5, subject: 'T5', result: null },
    ]);
  });

  it('fit TASK_UPSTREAM: results are cut to a share of 64 KiB when all of them do not fit', () => {
    const small = [{ id: 1, subject: 'a', result: 'r' }];
    expect(upstreamEnv(small)).toBe(JSON.stringify(small));
    const many = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, subject: `T${i + 1}`, result: '"é'.repeat(1000) }));
    const env = upstreamEnv(many);
    expect(Buffer.byteLength(env)).toBeLessThanOrEqual(UPSTREAM_ENV_BYTES);
    const parsed = JSON.parse(env) as { id: number; result: string }[];
    expect(parsed.map((u) => u.id)).toEqual(many.map((u) => u.id));
    expect(parsed[0].result.endsWith('…')).toBe(true);
  });
});

describe('finishTask (real shell commands)', () => {
  it('without a check completes as before; with one, passes or leaves a note and throws a VerifyError', async () => {
    const { store, dir } = tempBoard();
    await store.createTask({ subject: 'no check' });
    expect((await store.finishTask(1, { actor: 'ann' })).task.status).toBe('completed');

    await store.createTask({ subject: 'fails', verify: 'echo nope; exit 2' });
    const before = readFileSync(join(dir, 'task_2.json'), 'utf8');
    const error = await store.finishTask(2, { actor: 'ann', result: 'never kept' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VerifyError);
    expect(error).toMatchObject({ code: 'E_VERIFY', details: { task: 2, exitCode: 2, tail: 'nope', timedOut: false } });
    const after = store.getTask(2);
    expect(after).toMatchObject({ status: 'pending', owner: '' });
    expect(after).not.toHaveProperty('result');
    expect(after.notes?.map((n) => [n.owner, n.text])).toEqual([['ann', 'the check failed (exit 2): echo nope; exit 2; its output ended:\nnope']]);
    expect(readFileSync(join(dir, 'task_2.json'), 'utf8')).not.toBe(before);

    await store.createTask({ subject: 'passes', verify: 'test "$TASK_ID" = 3 && test -n "$TASKS_DIR"' });
    const done = await store.finishTask(3, { actor: 'ann', result: 'ok' });
    expect(done.check).toMatchObject({ passed: true, exitCode: 0 });
    expect(done.task).toMatchObject({ status: 'completed', result: 'ok' });
  });

  it("refuses what the completion would refuse before the check runs: a blocked task, another owner's", async () => {
    const { store, root } = tempBoard();
    const marker = join(root, 'ran');
    await store.createTask({ subject: 'blocker' });
    await store.createTask({ subject: 'blocked', blockedBy: [1], verify: `touch ${marker}` });
    await expect(store.finishTask(2, { actor: 'ann' })).rejects.toMatchObject({ code: 'E_BLOCKED' });
    await store.startTask(1, { owner: 'bob' });
    await store.updateTask(1, { verify: `touch ${marker}` }, { actor: 'bob' });
    await expect(store.finishTask(1, { actor: 'ann' })).rejects.toMatchObject({ code: 'E_NOT_OWNER' });
    expect(() => readFileSync(marker)).toThrow();
  });
});
