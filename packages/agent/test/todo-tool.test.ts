import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TaskStore, readLeases, writeLease } from '@dotasks/core/internal';
import { TODO_ACTIONS, createTodoTool, renderToolResult, todoInputSchema, toolDefinition, type TodoResult, type TodoTool } from '../src/index.js';

const BOARD_RE = /^<TASK_BOARD>\n[\s\S]*\n<\/TASK_BOARD>$/;

let root: string;
let store: TaskStore;
let tool: TodoTool;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-agent-')));
  store = TaskStore.init(join(root, '.tasks'));
  tool = createTodoTool({ store, owner: 'agent-1' });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** Runs a call that must succeed; mutating ones must carry the board. */
async function ok(input: Record<string, unknown>, on: TodoTool = tool): Promise<Extract<TodoResult, { ok: true }>> {
  const result = await on.execute(input);
  if (!result.ok) throw new Error(`expected ok, got ${JSON.stringify(result.error)}`);
  if (input.action !== 'get') expect(result.board).toMatch(BOARD_RE);
  return result;
}

/** Runs a call that must be refused with `code`; never a throw. */
async function refused(input: unknown, code: string, on: TodoTool = tool): Promise<Extract<TodoResult, { ok: false }>> {
  const result = await on.execute(input);
  if (result.ok) throw new Error(`expected ${code}, got ok: ${result.message}`);
  expect(result.error.code).toBe(code);
  expect(result.error.message).toBeTruthy();
  expect(result.error.hint).toBeTruthy();
  return result;
}

async function threeTasks(): Promise<void> {
  await ok({ action: 'create', subject: 'Parse AST' });
  await ok({ action: 'create', subject: 'Transform AST' });
  await ok({ action: 'create', subject: 'Emit code' });
}

describe('todo tool actions', () => {
  it('create allocates ids and returns the task and the board', async () => {
    const first = await ok({ action: 'create', subject: 'Parse AST', description: 'use acorn', active_form: 'parsing' });
    expect(first.task).toMatchObject({ id: 1, subject: 'Parse AST', status: 'pending', ready: true });
    expect(first.task).not.toHaveProperty('description');
    const second = await ok({ action: 'create', subject: 'Transform AST', add_blocked_by: ['#1'] });
    expect(second.task).toMatchObject({ id: 2, blockedBy: [1], ready: false });
    expect(second.board).toBe('<TASK_BOARD>\n[ ] #1: Parse AST\n[ ] #2: Transform AST (blocked by: #1)\n0/2 done · ready: #1 · 1 blocked\n</TASK_BOARD>');
    expect(store.getTask(1).description).toBe('use acorn');
  });

  it('create and update take paths, the files a task will change; update replaces them', async () => {
    const made = await ok({ action: 'create', subject: 'Parser', paths: ['src/parser/**'] });
    expect(made.task).toMatchObject({ id: 1, paths: ['src/parser/**'] });
    await ok({ action: 'update', task_id: 1, paths: ['src/parser/**', 'docs/parser.md'] });
    expect(store.getTask(1).paths).toEqual(['src/parser/**', 'docs/parser.md']);
    const bad = await refused({ action: 'create', subject: 'X', paths: 'src/**' }, 'E_INVALID');
    expect(bad.error.hint).toMatch(/\["src\/parser\/\*\*"/);
  });

  it('update links, starts and completes, reporting what it unblocked', async () => {
    await threeTasks();
    const linked = await ok({ action: 'update', task_id: 'task_2', add_blocked_by: [1] });
    expect(linked.task).toMatchObject({ id: 2, blockedBy: [1] });
    await ok({ action: 'update', task_id: 3, add_blocked_by: ['2'] });
    const started = await ok({ action: 'update', task_id: '#1', status: 'in_progress', active_form: 'parsing' });
    expect(started.task).toMatchObject({ status: 'in_progress', owner: 'agent-1', activeForm: 'parsing' });
    expect(started.board).toContain('[>] #1: Parse AST (agent-1: parsing)');
    const done = await ok({ action: 'update', task_id: 1, status: 'completed' });
    expect(done.unblocked).toEqual([2]);
    expect(done.message).toContain('unblocked #2');
    expect(done.board).toContain('(1 completed task not shown');
    expect(done.board).not.toContain('#1: Parse AST');
    const unlinked = await ok({ action: 'update', task_id: 3, remove_blocked_by: [2], subject: 'Emit JS' });
    expect(unlinked.task).toMatchObject({ subject: 'Emit JS', blockedBy: [], ready: true });
    const back = await ok({ action: 'update', task_id: 2, status: 'in_progress' });
    expect(back.task?.status).toBe('in_progress');
    const released = await ok({ action: 'update', task_id: 2, status: 'pending' });
    expect(released.task).toMatchObject({ status: 'pending', owner: '' });
    const deleted = await ok({ action: 'update', task_id: 3, status: 'deleted' });
    expect(deleted.board).not.toContain('Emit JS');
  });

  it('create, update and write take a parent; a parent completes after its children, and a cycle of parents is refused', async () => {
    await ok({ action: 'create', subject: 'Payments' });
    const child = await ok({ action: 'create', subject: 'Stripe client', parent: '#1' });
    expect(child.task).toMatchObject({ id: 2, parent: 1, ready: true });
    expect(child.board).toContain('[ ] #1: Payments (0/1 done)');
    const written = await ok({ action: 'write', todos: [{ subject: 'Webhooks', parent: 1 }] });
    expect(written.tasks?.[0]).toMatchObject({ id: 3, parent: 1 });
    const listed = await ok({ action: 'list' });
    expect(listed.tasks?.find((t) => t.id === 1)).toMatchObject({ ready: false });
    expect(await tool.execute({ action: 'get', task_id: 1 })).toMatchObject({ ok: true, task: { ready: false } });
    const early = await refused({ action: 'update', task_id: 1, status: 'completed', subject: 'Payments v2' }, 'E_BLOCKED');
    expect(early.error).toMatchObject({ children: [2, 3] });
    expect(early.error.hint).toContain('A parent completes after its children');
    // Refused before anything was written.
    expect(store.getTask(1).subject).toBe('Payments');
    const cycle = await refused({ action: 'update', task_id: 1, parent: 3 }, 'E_CYCLE');
    expect(cycle.error.hint).toContain('its own ancestor (#1 -> #3 -> #1)');
    await ok({ action: 'update', task_id: 3, parent: 'none' });
    expect(store.getTask(3)).not.toHaveProperty('parent');
    await refused({ action: 'create', subject: 'x', parent: 'none' }, 'E_INVALID');
    writeFileSync(join(root, '.tasks', 'config.json'), JSON.stringify({ completeParents: true }));
    const done = await ok({ action: 'update', task_id: 2, status: 'completed' }, createTodoTool({ dir: join(root, '.tasks'), owner: 'agent-1' }));
    expect(done.message).toBe('Completed #2: Stripe client; completed #1 (its children are done)');
    expect(store.getTask(1).status).toBe('completed');
  });

  it('list is a compact summary without descriptions; include_deleted shows tombstones', async () => {
    await ok({ action: 'create', subject: 'Parse AST', description: 'a long description that list must not repeat' });
    await ok({ action: 'create', subject: 'Old idea' });
    await ok({ action: 'update', task_id: 2, status: 'deleted' });
    const list = await ok({ action: 'list' });
    expect(list.tasks).toEqual([{ id: 1, subject: 'Parse AST', status: 'pending', owner: '', activeForm: null, blockedBy: [], blocks: [], ready: true }]);
    expect(JSON.stringify(list)).not.toContain('a long description');
    const all = await ok({ action: 'list', include_deleted: true });
    expect(all.tasks?.map((t) => [t.id, t.status])).toEqual([
      [1, 'pending'],
      [2, 'deleted'],
    ]);
  });

  it('the board a result carries lists the open work and folds the history: 300 tasks, 240 done', async () => {
    const items = Array.from({ length: 300 }, (_, i) => ({ subject: `Step ${i + 1} of the plan`, ...(i < 240 ? { status: 'completed' as const } : {}) }));
    await store.batchWrite(items, { actor: 'agent-1' });
    const created = await ok({ action: 'create', subject: 'One more step' });
    const board = created.board!;
    expect(board.length).toBeLessThanOrEqual(4000);
    expect(board).not.toContain('[x]');
    expect(board).toContain('(240 completed tasks not shown: list returns every task, get shows one)');
    expect([...board.matchAll(/^\[ \] #\d+:/gm)]).toHaveLength(61);
    // The whole result as an MCP client gets it stays near the board's size (it was 19,516 characters).
    expect(renderToolResult(created).length).toBeLessThan(5000);
  });

  it("config.json's echoBudget bounds the board; the least urgent open work is counted, not listed", async () => {
    writeFileSync(join(root, '.tasks', 'config.json'), JSON.stringify({ echoBudget: 600 }));
    const items = Array.from({ length: 50 }, (_, i) => ({ subject: `Step ${i + 1} of the plan`, priority: i % 5 }));
    await store.batchWrite(items, { actor: 'agent-1' });
    const listed = await ok({ action: 'list' }, createTodoTool({ dir: join(root, '.tasks'), owner: 'agent-1' }));
    expect(listed.board!.length).toBeLessThanOrEqual(600);
    expect(listed.board).toMatch(/\(… \d+ more open tasks not shown, less urgent than those above: \d+ ready; list returns every task\)/);
    expect(listed.board).toContain('[ ] #1: Step 1 of the plan P0');
    expect(listed.tasks).toHaveLength(50);
    writeFileSync(join(root, '.tasks', 'config.json'), JSON.stringify({ echoBudget: 20 }));
    const bad = await createTodoTool({ dir: join(root, '.tasks'), owner: 'agent-1' }).execute({ action: 'list' });
    expect(bad).toMatchObject({
      ok: false,
      error: { code: 'E_INVALID', message: expect.stringContaining('"echoBudget" must be a whole number of characters, at least 500') },
    });
  });

  it('get returns the whole task and no board', async () => {
    await ok({ action: 'create', subject: 'Parse AST', description: 'use acorn' });
    const got = await tool.execute({ action: 'get', task_id: 'task_1.json' });
    expect(got).toMatchObject({ ok: true, task: { id: 1, description: 'use acorn', metadata: {}, openBlockers: [] } });
    expect(got).not.toHaveProperty('board');
  });

  it('write creates and updates many at once', async () => {
    await ok({ action: 'create', subject: 'Parse AST' });
    await ok({ action: 'create', subject: 'Transform AST', add_blocked_by: [1] });
    const wrote = await ok({
      action: 'write',
      todos: [
        { subject: 'Emit code', blocked_by: [2] },
        { task_id: 1, status: 'completed' },
        { subject: 'Write docs', status: 'in_progress', active_form: 'writing' },
      ],
    });
    expect(wrote.tasks?.map((t) => [t.id, t.status])).toEqual([
      [3, 'pending'],
      [1, 'completed'],
      [4, 'in_progress'],
    ]);
    expect(wrote.unblocked).toEqual([2]);
    expect(store.getTask(4).owner).toBe('agent-1');
    expect(store.getTask(3).blockedBy).toEqual([2]);
  });

  it('claim takes the next ready task or a named one; release gives it back', async () => {
    await threeTasks();
    await ok({ action: 'update', task_id: 2, add_blocked_by: [1] });
    const claimed = await ok({ action: 'claim' });
    expect(claimed.task).toMatchObject({ id: 1, status: 'in_progress', owner: 'agent-1' });
    expect(claimed.unblocked).toEqual([]);
    expect(typeof claimed.expiresAt).toBe('string');
    const again = await ok({ action: 'claim', task_id: 1 });
    expect(again.message).toContain('Already held');
    const released = await ok({ action: 'release', task_id: 1 });
    expect(released.task).toMatchObject({ status: 'pending', owner: '' });
    const other = createTodoTool({ store, owner: 'agent-2' });
    const named = await ok({ action: 'claim', task_id: 3, active_form: 'emitting' }, other);
    expect(named.task).toMatchObject({ id: 3, owner: 'agent-2', activeForm: 'emitting' });
  });

  it('a 2 MB subject or description is refused with the limit named, and nothing is written', async () => {
    const subject = await refused({ action: 'create', subject: 's'.repeat(2 * 1024 * 1024) }, 'E_INVALID');
    expect(subject.error.message).toMatch(/at most 500 characters/);
    const description = await refused({ action: 'create', subject: 'big', description: 'd'.repeat(2 * 1024 * 1024) }, 'E_INVALID');
    expect(description.error.message).toMatch(/over the 1 MiB limit/);
    await refused({ action: 'write', todos: [{ content: 'w'.repeat(2 * 1024 * 1024), status: 'pending' }] }, 'E_INVALID');
    expect(store.listIds()).toEqual([]);
  });

  it('clear empties the board', async () => {
    await threeTasks();
    const cleared = await ok({ action: 'clear' });
    expect(cleared.removed).toEqual([1, 2, 3]);
    expect(cleared.board).toContain('no tasks yet');
    // Ids are never handed out again, not even after clear.
    const next = await ok({ action: 'create', subject: 'Fresh start' });
    expect(next.task?.id).toBe(4);
  });

  it('any call renews the expiring leases of its owner', async () => {
    await ok({ action: 'create', subject: 'Parse AST' });
    await ok({ action: 'claim', task_id: 1 });
    const [lease] = readLeases(store);
    writeLease(store.runtimeDir, { ...lease, expiresAt: new Date(Date.now() + 1000).toISOString() });
    await ok({ action: 'list' });
    const [renewed] = readLeases(store);
    expect(Date.parse(renewed.expiresAt!)).toBeGreaterThan(Date.now() + 600_000);
  });
});

describe('todo tool mistakes come back as results', () => {
  it('unknown id', async () => {
    await ok({ action: 'create', subject: 'Parse AST' });
    const r = await refused({ action: 'update', task_id: 9, status: 'completed' }, 'E_NOT_FOUND');
    expect(r.error.message).toContain('#9');
    expect(r.board).toMatch(BOARD_RE);
    await refused({ action: 'get', task_id: '#9' }, 'E_NOT_FOUND');
    await refused({ action: 'update', task_id: 1, add_blocked_by: [7] }, 'E_NOT_FOUND');
  });

  it('a cycle, spelled out', async () => {
    await threeTasks();
    await ok({ action: 'update', task_id: 2, add_blocked_by: [1] });
    await ok({ action: 'update', task_id: 3, add_blocked_by: [2] });
    const r = await refused({ action: 'update', task_id: 1, add_blocked_by: [3] }, 'E_CYCLE');
    // #1 would wait for #3, which waits for #2, which waits for #1.
    expect(r.error.message).toContain('#3 -> #1 -> #2 -> #3');
    expect(r.error.cycle).toEqual([3, 1, 2, 3]);
    expect(r.error.hint).toContain('remove_blocked_by');
    const self = await refused({ action: 'update', task_id: 2, add_blocked_by: [2] }, 'E_CYCLE');
    expect(self.error.message).toContain('#2 -> #2');
    expect(store.getTask(1).blockedBy).toEqual([]);
  });

  it('blocked: starting or completing before the blockers are done', async () => {
    await ok({ action: 'create', subject: 'Parse AST' });
    await ok({ action: 'create', subject: 'Transform AST', add_blocked_by: [1] });
    const start = await refused({ action: 'update', task_id: 2, status: 'in_progress' }, 'E_BLOCKED');
    expect(start.error.hint).toContain('#1');
    await refused({ action: 'update', task_id: 2, status: 'completed', subject: 'Renamed' }, 'E_BLOCKED');
    expect(store.getTask(2)).toMatchObject({ status: 'pending', subject: 'Transform AST' });
    await refused({ action: 'claim', task_id: 2 }, 'E_BLOCKED');
  });

  it('claimed by someone else', async () => {
    await ok({ action: 'create', subject: 'Parse AST' });
    const other = createTodoTool({ store, owner: 'agent-2' });
    await ok({ action: 'claim', task_id: 1 }, other);
    const r = await refused({ action: 'claim', task_id: 1 }, 'E_CLAIMED');
    expect(r.error.hint).toContain('agent-2');
    await refused({ action: 'update', task_id: 1, status: 'completed' }, 'E_CLAIMED');
    await refused({ action: 'update', task_id: 1, status: 'pending' }, 'E_CLAIMED');
    await refused({ action: 'clear' }, 'E_CLAIMED');
    await refused({ action: 'release', task_id: 1 }, 'E_NOT_OWNER');
    expect(store.getTask(1)).toMatchObject({ status: 'in_progress', owner: 'agent-2' });
  });

  it('owner busy: one task in progress at a time', async () => {
    await threeTasks();
    await ok({ action: 'update', task_id: 1, status: 'in_progress' });
    const r = await refused({ action: 'update', task_id: 2, status: 'in_progress' }, 'E_OWNER_BUSY');
    expect(r.error.hint).toContain('#1');
    await refused({ action: 'claim' }, 'E_OWNER_BUSY');
  });

  it('nothing ready, not pending, final transitions', async () => {
    await ok({ action: 'create', subject: 'Parse AST' });
    await ok({ action: 'update', task_id: 1, status: 'completed' });
    await refused({ action: 'claim' }, 'E_NOTHING_READY');
    await refused({ action: 'claim', task_id: 1 }, 'E_NOT_PENDING');
    await refused({ action: 'update', task_id: 1, status: 'in_progress' }, 'E_TRANSITION');
  });

  it('a subject put where an id belongs', async () => {
    await ok({ action: 'create', subject: 'Parse AST' });
    const r = await refused({ action: 'update', task_id: 'Parse AST', status: 'in_progress' }, 'E_INVALID');
    expect(r.error.message).toBe('task_id "Parse AST" is not a task id');
    expect(r.error.hint).toContain('action "create" with subject "Parse AST"');
    const item = await refused({ action: 'update', task_id: 1, add_blocked_by: ['write tests'] }, 'E_INVALID');
    expect(item.error.message).toContain('add_blocked_by[0]');
    const bySubject = await refused({ action: 'get', subject: 'Parse AST' }, 'E_INVALID');
    expect(bySubject.error.hint).toContain('task_id');
  });

  it('malformed input of every kind, never a throw', async () => {
    for (const bad of [null, 'list', 42, [], { action: 'explode' }, {}]) await refused(bad, 'E_INVALID');
    await refused({ action: 'create' }, 'E_INVALID');
    await refused({ action: 'create', subject: '   ' }, 'E_INVALID');
    await refused({ action: 'create', subject: 'x', task_id: 3 }, 'E_INVALID');
    await refused({ action: 'update', task_id: 1 }, 'E_INVALID');
    await refused({ action: 'update', status: 'completed' }, 'E_INVALID');
    await refused({ action: 'update', task_id: 1, status: 'done' }, 'E_INVALID');
    await refused({ action: 'list', colour: 'red' }, 'E_INVALID');
    await refused({ action: 'list', include_deleted: 'yes' }, 'E_INVALID');
    await refused({ action: 'write', todos: [] }, 'E_INVALID');
    const content = await refused({ action: 'write', todos: [{ content: 'Parse' }] }, 'E_INVALID');
    expect(content.error.hint).toContain('subject');
    await refused({ action: 'write', todos: [{ status: 'pending' }] }, 'E_INVALID');
    await refused({ action: 'release' }, 'E_INVALID');
  });

  it('fields models send as null or empty are ignored', async () => {
    const r = await ok({ action: 'create', subject: 'Parse AST', task_id: null, status: null, add_blocked_by: [], include_deleted: false });
    expect(r.task?.id).toBe(1);
  });

  it('no board: a structured error naming tasks init', async () => {
    const empty = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-noboard-')));
    try {
      const lost = createTodoTool({ dir: join(empty, '.tasks'), owner: 'a' });
      const r = await refused({ action: 'create', subject: 'Parse AST' }, 'E_NO_BOARD', lost);
      expect(r.error.hint).toContain('tasks init');
      expect(r).not.toHaveProperty('board');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('a damaged task file is reported, not thrown', async () => {
    await ok({ action: 'create', subject: 'Parse AST' });
    writeFileSync(join(store.dir, 'task_1.json'), '{"id": 1, "subject": ');
    const r = await refused({ action: 'update', task_id: 1, status: 'completed' }, 'E_CORRUPT');
    expect(r.error.message).toContain('task_1.json');
  });
});

describe('todo tool planning: priority, labels, notes', () => {
  it('create and update take priority and labels; summaries show them when set; claim takes the most urgent first', async () => {
    const created = await ok({ action: 'create', subject: 'Later', priority: 3, add_labels: ['docs'] });
    expect(created.task).toMatchObject({ id: 1, priority: 3, labels: ['docs'] });
    await ok({ action: 'create', subject: 'Plain' });
    await ok({ action: 'create', subject: 'Urgent', priority: 0 });
    const plain = await ok({ action: 'get', task_id: 2 });
    expect(plain.task).toMatchObject({ priority: 2, labels: [] });
    const updated = await ok({ action: 'update', task_id: 1, priority: 2, add_labels: ['api'], remove_labels: ['docs'] });
    expect(updated.task).toMatchObject({ labels: ['api'] });
    expect(updated.task).not.toHaveProperty('priority');
    expect(updated.board).toContain('[ ] #3: Urgent P0');
    const claimed = await ok({ action: 'claim' });
    expect(claimed.task).toMatchObject({ id: 3 });
    const badPriority = await refused({ action: 'update', task_id: 1, priority: 9 }, 'E_INVALID');
    expect(badPriority.error.hint).toMatch(/0 \(most urgent\) to 4/);
  });

  it('create files found work with discovered_from and related, on both sides; update adds and removes; results show them and readiness ignores them', async () => {
    await ok({ action: 'create', subject: 'Lexer' });
    await ok({ action: 'claim', task_id: 1 });
    await ok({ action: 'create', subject: 'Parser' });
    const found = await ok({ action: 'create', subject: 'Flaky lexer test', discovered_from: 1, related: ['#2'] });
    expect(found.task).toMatchObject({ id: 3, discoveredFrom: [1], related: [2], ready: true });
    expect(store.getTask(1)).toMatchObject({ discovered: [3] });
    expect(store.getTask(2)).toMatchObject({ related: [3] });
    const updated = await ok({ action: 'update', task_id: 2, remove_related: [3], discovered_from: [1] });
    expect(updated.task).toMatchObject({ id: 2, discoveredFrom: [1] });
    expect(updated.task).not.toHaveProperty('related');
    expect(store.getTask(3).related).toBeUndefined();
    const got = await ok({ action: 'get', task_id: 1 });
    expect(got.task).toMatchObject({ discovered: [2, 3] });
    // Linked to work in progress, still the next ready task.
    const claimed = await ok({ action: 'claim' }, createTodoTool({ store, owner: 'agent-2' }));
    expect(claimed.task).toMatchObject({ id: 2 });
    const self = await refused({ action: 'update', task_id: 3, related: [3] }, 'E_INVALID');
    expect(self.error.message).toBe('task #3 cannot be related to itself');
    const camel = await refused({ action: 'create', subject: 'X', discoveredFrom: 1 }, 'E_INVALID');
    expect(camel.error.hint).toBe('call it "discovered_from".');
    await refused({ action: 'create', subject: 'X', discovered_from: 9 }, 'E_NOT_FOUND');
    expect(store.loadBoard().tasks).toHaveLength(3);
  });

  it('note appends to the task; get shows the notes; write sets priority and replaces labels', async () => {
    await ok({ action: 'create', subject: 'Parse' });
    const noted = await ok({ action: 'note', task_id: '#1', text: 'CRLF breaks the lexer' });
    expect(noted.message).toBe('Noted on #1: Parse (1 note; "get" shows them)');
    const got = await ok({ action: 'get', task_id: 1 });
    expect((got.task as { notes: unknown[] }).notes).toMatchObject([{ owner: 'agent-1', text: 'CRLF breaks the lexer' }]);
    await refused({ action: 'note', task_id: 1 }, 'E_INVALID');
    await refused({ action: 'note', text: 'x' }, 'E_INVALID');
    await refused({ action: 'note', task_id: 1, text: 'x', subject: 'y' }, 'E_INVALID');
    await ok({ action: 'write', todos: [{ task_id: 1, priority: 1, labels: ['a', 'b'] }] });
    await ok({ action: 'write', todos: [{ task_id: 1, labels: ['c'] }] });
    expect(store.getTask(1)).toMatchObject({ priority: 1, labels: ['c'] });
  });
});

describe('todo tool schema', () => {
  const good: unknown[] = [
    { action: 'list' },
    { action: 'list', include_deleted: true },
    { action: 'create', subject: 'Parse AST', description: 'd', active_form: 'parsing', owner: 'a', add_blocked_by: [1, '#2'] },
    { action: 'update', task_id: 3, status: 'completed' },
    { action: 'update', task_id: 'task_3', add_blocked_by: ['2'], remove_blocked_by: [1] },
    { action: 'get', task_id: '#3' },
    { action: 'write', todos: [{ subject: 'a' }, { task_id: 2, status: 'in_progress', blocked_by: [] }] },
    { action: 'claim' },
    { action: 'release', task_id: 1 },
    { action: 'clear' },
    { action: 'create', subject: 'x', priority: 0, add_labels: ['ui'] },
    { action: 'update', task_id: 1, priority: 4, add_labels: ['a'], remove_labels: ['b'] },
    { action: 'note', task_id: 1, text: 'found it' },
    { action: 'write', todos: [{ subject: 'a', priority: 1, labels: ['x'] }] },
  ];
  const bad: unknown[] = [
    {},
    { action: 'explode' },
    { action: 'list', colour: 'red' },
    { action: 'update', task_id: 0 },
    { action: 'update', task_id: '' },
    { action: 'update', task_id: 1, status: 'done' },
    { action: 'create', subject: '' },
    { action: 'create', subject: 'x', add_blocked_by: 3 },
    { action: 'write', todos: [] },
    { action: 'write', todos: [{ content: 'x' }] },
    { action: 'list', include_deleted: 'yes' },
    { action: 'create', subject: 'x', priority: 5 },
    { action: 'create', subject: 'x', priority: 1.5 },
    { action: 'create', subject: 'x', add_labels: [''] },
    { action: 'note', task_id: 1, text: '' },
    'list',
  ];

  it('validates good inputs and rejects bad ones (draft-07 and 2020-12 validators)', () => {
    for (const ajv of [new Ajv({ strict: true }), new Ajv2020({ strict: true })]) {
      const validate = ajv.compile(todoInputSchema);
      for (const input of good) expect(validate(input), JSON.stringify(input) + JSON.stringify(validate.errors)).toBe(true);
      for (const input of bad) expect(validate(input), JSON.stringify(input)).toBe(false);
    }
  });

  it('every action of the schema is one the tool runs', () => {
    expect((todoInputSchema.properties as { action: { enum: string[] } }).action.enum).toEqual([...TODO_ACTIONS]);
  });

  it('uses only keywords every provider accepts', () => {
    const text = JSON.stringify(todoInputSchema);
    for (const keyword of ['"$ref"', '"oneOf"', '"allOf"', '"if"', '"then"', '"not"', '"format"']) expect(text).not.toContain(keyword);
    expect(todoInputSchema.type).toBe('object');
    expect(todoInputSchema).not.toHaveProperty('anyOf');
  });

  it('renders as an OpenAI function, an Anthropic tool and a JSON Schema document', () => {
    const parts = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
    const openai = toolDefinition(parts, 'openai') as { type: string; function: { name: string; parameters: unknown } };
    expect(openai.type).toBe('function');
    expect(openai.function.name).toBe('todo');
    expect(openai.function.parameters).toEqual(todoInputSchema);
    const anthropic = toolDefinition(parts, 'anthropic');
    expect(Object.keys(anthropic)).toEqual(['name', 'description', 'input_schema']);
    const doc = toolDefinition(parts, 'json-schema');
    const validate = new Ajv2020({ strict: true }).compile(doc);
    expect(validate({ action: 'list' })).toBe(true);
    expect(validate({ action: 'nope' })).toBe(false);
  });

  it('the description teaches the protocol in a few lines', () => {
    const lines = tool.description.split('\n');
    expect(lines.length).toBeLessThanOrEqual(10);
    for (const word of ['create', 'add_blocked_by', 'in_progress', 'completed', 'unblocked', '<TASK_BOARD>']) expect(tool.description).toContain(word);
  });

  it('renderToolResult puts the board after the JSON, unescaped', async () => {
    const result = await ok({ action: 'create', subject: 'Parse AST' });
    const text = renderToolResult(result);
    expect(text).toMatch(/\n<TASK_BOARD>\n\[ \] #1: Parse AST\n/);
    expect(JSON.parse(text.slice(0, text.indexOf('\n<TASK_BOARD>')))).toMatchObject({ ok: true, task: { id: 1 } });
  });
});
