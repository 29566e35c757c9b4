import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core/internal';
import { createTodoTool, strictSchema, todoInputSchema, type TodoResult, type TodoTool } from '../src/index.js';
import { strictViolations } from './openai-strict-rules.js';

let root: string;
let store: TaskStore;
let author: TodoTool;
let reviewer: TodoTool;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-agent-review-')));
  store = TaskStore.init(join(root, '.tasks'));
  author = createTodoTool({ store, owner: 'agent-1' });
  reviewer = createTodoTool({ store, owner: 'agent-2' });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const ok = (r: TodoResult) => {
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r;
};

describe("the todo tool's review: completing puts a task that requires review in review; approve and reject", () => {
  it('a completion waits for review: the result says "in review", the board shows a needs-review section; another agent approves it', async () => {
    ok(await author.execute({ action: 'create', subject: 'Parse AST', review: true }));
    ok(await author.execute({ action: 'create', subject: 'Emit', add_blocked_by: [1] }));
    expect(store.getTask(1).review).toEqual({ required: true });
    ok(await author.execute({ action: 'claim', task_id: 1 }));

    const done = ok(await author.execute({ action: 'update', task_id: 1, status: 'completed', result: 'src/parse.ts' }));
    expect(done.message).toBe(
      'Finished #1: Parse AST; it is in review now, not completed: it completes (and unblocks what waits for it) when someone other than you approves it. Take your next task meanwhile.',
    );
    expect(done.task).toMatchObject({ id: 1, status: 'in_progress', inReview: true });
    expect(done.unblocked).toEqual([]);
    expect(done.board).toBe(
      [
        '<TASK_BOARD>',
        '[ ] #2: Emit (blocked by: #1)',
        'needs review (someone other than its owner approves or rejects it):',
        '[?] #1: Parse AST (agent-1: waits for review)',
        '0/2 done · 1 in review · nothing ready · 1 blocked',
        '</TASK_BOARD>',
      ].join('\n'),
    );
    expect(store.getTask(1)).toMatchObject({ status: 'in_progress', result: 'src/parse.ts', review: { state: 'waiting' } });

    const own = await author.execute({ action: 'approve', task_id: 1 });
    expect(own.ok).toBe(false);
    if (!own.ok) {
      expect(own.error.code).toBe('E_OWN_REVIEW');
      expect(own.error.hint).toContain('someone other than the owner');
      expect(own.board).toContain('[?] #1');
    }

    const approved = ok(await reviewer.execute({ action: 'approve', task_id: 1 }));
    expect(approved.message).toBe("Approved #1: Parse AST (agent-1's work); it is completed; unblocked #2");
    expect(approved.unblocked).toEqual([2]);
    expect(store.getTask(1)).toMatchObject({ status: 'completed', review: { state: 'approved', by: 'agent-2' } });
  });

  it('reject sends it back to its owner with the text as the note; reject without text and approve of a task not in review are refused with hints', async () => {
    ok(await author.execute({ action: 'create', subject: 'Parse AST', review: true }));
    ok(await author.execute({ action: 'claim', task_id: 1 }));
    ok(await author.execute({ action: 'update', task_id: 1, status: 'completed' }));

    const noText = await reviewer.execute({ action: 'reject', task_id: 1 });
    expect(noText.ok).toBe(false);
    if (!noText.ok) expect(noText.error.hint).toContain('give text');

    const sent = ok(await reviewer.execute({ action: 'reject', task_id: 1, text: 'comments are dropped' }));
    expect(sent.message).toBe('Sent #1: Parse AST back to agent-1 (pending, with your note)');
    expect(store.getTask(1)).toMatchObject({ status: 'pending', owner: 'agent-1', review: { state: 'rejected', by: 'agent-2' } });
    expect(store.getTask(1).notes?.map((n) => [n.owner, n.text])).toEqual([['agent-2', 'sent back in review: comments are dropped']]);

    const notWaiting = await reviewer.execute({ action: 'approve', task_id: 1 });
    expect(notWaiting.ok).toBe(false);
    if (!notWaiting.ok) expect(notWaiting.error).toMatchObject({ code: 'E_TRANSITION', hint: expect.stringContaining('waiting for review') });
  });

  it('the new fields keep the schema portable: strict mode passes, and a strict caller may send review: false or null where it does not apply', async () => {
    expect(strictViolations(strictSchema(todoInputSchema))).toEqual([]);
    const props = todoInputSchema.properties as Record<string, { type?: string }>;
    expect(props.review.type).toBe('boolean');
    ok(await author.execute({ action: 'create', subject: 'x' }));
    ok(await author.execute({ action: 'list', review: false, text: null }));
    ok(await author.execute({ action: 'update', task_id: 1, review: false }));
    expect(store.getTask(1).review).toEqual({ required: false });
  });
});
