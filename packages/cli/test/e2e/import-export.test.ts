import { cpSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createTasks, readTaskFile, tasks, tempBoard } from '../helpers.js';

function run(cwd: string, args: string[]): string {
  const r = tasks(cwd, args);
  if (r.code !== 0) throw new Error(`tasks ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** A Claude Code task list as it sits in ~/.claude/tasks/<list-id>/. */
function writeClaudeList(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const write = (id: number, fields: Record<string, unknown>) => writeFileSync(join(dir, `${id}.json`), JSON.stringify({ id: String(id), ...fields }, null, 2));
  write(1, {
    subject: 'Set up schema',
    description: 'users and orders',
    activeForm: 'Setting up schema',
    status: 'completed',
    blocks: ['2', '3'],
    blockedBy: [],
  });
  write(2, { subject: 'Write API', description: '', activeForm: 'Writing API', status: 'in_progress', owner: 'agent-1', blocks: ['4'], blockedBy: ['1'] });
  // Only one side of 3 -> 4 is written here (Claude lists sometimes do that); the import writes both.
  write(3, { subject: 'Write client', description: '', status: 'pending', blocks: [], blockedBy: ['1'], metadata: { area: 'web' } });
  write(4, { subject: 'End-to-end tests', description: '', status: 'pending', blocks: [], blockedBy: ['2', '3', '99'] });
  writeFileSync(join(dir, '.highwatermark'), '4');
  writeFileSync(join(dir, '.lock'), '');
}

/** A single-file task store's tasks.json: next_id, ids like task_1, blocked_by. */
const STORE_FILE = {
  next_id: 4,
  tasks: [
    {
      id: 'task_1',
      subject: 'Design the tables',
      description: 'PostgreSQL',
      status: 'completed',
      owner: 'agent',
      active_form: 'writing schema.sql',
      blocked_by: [],
      metadata: { priority: 'high' },
    },
    {
      id: 'task_2',
      subject: 'Write the API',
      description: 'FastAPI',
      status: 'in_progress',
      owner: 'agent',
      active_form: 'implementing endpoints',
      blocked_by: [],
      metadata: {},
    },
    {
      id: 'task_3',
      subject: 'Write unit tests',
      description: 'edge cases',
      status: 'pending',
      owner: null,
      active_form: null,
      blocked_by: ['task_2', 'task_1'],
      metadata: {},
    },
  ],
};

/** Backlog.md and beads projects as those tools leave them (packages/core/test/fixtures/imports). */
const FIXTURES = fileURLToPath(new URL('../../../core/test/fixtures/imports/', import.meta.url));

describe('tasks import and export', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  async function board(): Promise<{ root: string; board: string }> {
    const t = tempBoard();
    cleanup = t.cleanup;
    // Something already on the board, so imported ids must move (made in process: create has its own tests).
    await createTasks(t.board, ['Existing task', 'Another one']);
    return t;
  }

  it('imports a Claude Code task list onto the next free ids with edges on both sides', async () => {
    const t = await board();
    const list = join(t.root, 'claude-list');
    writeClaudeList(list);

    const dry = tasks(t.root, ['import', 'claude', list, '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout.replace(list, 'LIST')).toMatchInlineSnapshot(`
      "would import 4 tasks from LIST (4 new):
        1 -> #3: Set up schema
        2 -> #4: Write API
        3 -> #5: Write client
        4 -> #6: End-to-end tests (blocked by #4, #5)
      nothing was written (drop --dry-run to import)
      "
    `);
    expect(dry.stderr).toContain('warning: 4 (End-to-end tests): dropped the edge to "99", which is not in the list');
    expect(existsSync(join(t.board, 'task_3.json'))).toBe(false);

    const r = tasks(t.root, ['import', 'claude', list]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('imported 4 tasks');
    expect(readTaskFile(t.board, 3)).toEqual({
      id: 3,
      subject: 'Set up schema',
      description: 'users and orders',
      status: 'completed',
      owner: '',
      activeForm: 'Setting up schema',
      blockedBy: [],
      blocks: [4, 5],
      // Where it came from, so that importing the list again does not double the board.
      metadata: { importedFrom: { tool: 'claude', id: '1', source: 'claude-list' } },
    });
    expect(readTaskFile(t.board, 4)).toMatchObject({ status: 'in_progress', owner: 'agent-1', blockedBy: [], blocks: [6] });
    expect(readTaskFile(t.board, 5)).toMatchObject({ blockedBy: [], blocks: [6], metadata: { area: 'web' } });
    expect(readTaskFile(t.board, 6)).toMatchObject({ blockedBy: [4, 5], blocks: [] });
    expect(readFileSync(join(t.board, '.highwatermark'), 'utf8')).toBe('6\n');
    // Both sides of every edge are on disk: doctor finds nothing to say.
    expect(tasks(t.root, ['doctor']).code).toBe(0);
    expect(run(t.root, ['list'])).toContain('[ ] #5: Write client\n[ ] #6: End-to-end tests (blocked by: #4, #5)');
    // New tasks after an import never reuse its ids.
    expect(run(t.root, ['create', 'After the import'])).toContain('created #7');
  });

  it("imports a single-file store's tasks.json, rewriting task_N ids and blocked_by", async () => {
    const t = await board();
    const file = join(t.root, 'tasks.json');
    writeFileSync(file, JSON.stringify(STORE_FILE, null, 2));
    const json = JSON.parse(run(t.root, ['import', 'store', file, '--json'])) as { mapping: unknown[] };
    expect(json.mapping).toEqual([
      { from: 'task_1', to: 3, subject: 'Design the tables', action: 'created' },
      { from: 'task_2', to: 4, subject: 'Write the API', action: 'created' },
      { from: 'task_3', to: 5, subject: 'Write unit tests', action: 'created' },
    ]);
    expect(readTaskFile(t.board, 3)).toEqual({
      id: 3,
      subject: 'Design the tables',
      description: 'PostgreSQL',
      status: 'completed',
      owner: 'agent',
      activeForm: 'writing schema.sql',
      blockedBy: [],
      blocks: [5],
      metadata: { importedFrom: { tool: 'store', id: 'task_1', source: 'tasks.json' }, priority: 'high' },
    });
    // A completed blocker keeps the edge on its side only (docs/protocol.md, "Edges"); the open one is on both.
    expect(readTaskFile(t.board, 5)).toMatchObject({ owner: '', blockedBy: [4], blocks: [] });
    expect(readTaskFile(t.board, 4)).toMatchObject({ activeForm: 'implementing endpoints', blocks: [5] });
    expect(readTaskFile(t.board, 5).activeForm).toBeUndefined();
    expect(tasks(t.root, ['doctor']).code).toBe(0);
  });

  it('refuses a list with a cycle and writes nothing', async () => {
    const t = await board();
    const file = join(t.root, 'tasks.json');
    writeFileSync(
      file,
      JSON.stringify({
        next_id: 3,
        tasks: [
          { id: 'task_1', subject: 'A', blocked_by: ['task_2'] },
          { id: 'task_2', subject: 'B', blocked_by: ['task_1'] },
        ],
      }),
    );
    const r = tasks(t.root, ['import', 'store', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('has a cycle "task_1" -> "task_2" -> "task_1"');
    expect(existsSync(join(t.board, 'task_3.json'))).toBe(false);
  });

  it('exports json, jsonl and markdown', async () => {
    const t = await board();
    run(t.root, ['create', 'Run tests', '--blocked-by', '1,2', '--description', 'unit and e2e\nwith coverage']);
    run(t.root, ['start', '1', '--owner', 'agent-1', '--active-form', 'working']);
    run(t.root, ['update', '3', '--priority', '0', '--label', 'release,ci', '--path', 'test/**']);
    run(t.root, ['note', '3', 'flaky under load', '--owner', 'agent-1']);
    run(t.root, ['note', '3', 'the *timeout* it was\nsee the log\n\nand the trace', '--owner', 'bob']);
    const json = JSON.parse(run(t.root, ['export'])) as { tasks: { id: number; openBlockers: number[] }[] };
    expect(json.tasks.map((x) => [x.id, x.openBlockers])).toEqual([
      [1, []],
      [2, []],
      [3, [1, 2]],
    ]);
    const lines = run(t.root, ['export', '--format', 'jsonl']).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { subject: string }).subject)).toEqual(['Existing task', 'Another one', 'Run tests']);
    // A priority other than the default and the labels as `tasks list` shows them, the scope, the notes one line each.
    expect(run(t.root, ['export', '-f', 'markdown']).replace(/\d{4}-\d\d-\d\d \d\d:\d\dZ/g, 'DATE TIMEZ')).toMatchInlineSnapshot(`
      "# Tasks

      0/3 done · 1 in progress · ready: #2 · 1 blocked

      - [ ] #1 Existing task — in progress by agent-1: working
      - [ ] #2 Another one — ready
      - [ ] #3 Run tests P0 #ci #release — blocked by #1, #2; paths \`test/**\`
        unit and e2e
        with coverage
        - note by agent-1, DATE TIMEZ: flaky under load
        - note by bob, DATE TIMEZ: the \\*timeout\\* it was (+2 more lines)
      "
    `);
  });

  it('imports a Backlog.md project: statuses, owners, dependencies as edges, archived and draft tasks left out with a note', async () => {
    const t = await board();
    cpSync(join(FIXTURES, 'backlog-project'), join(t.root, 'shop'), { recursive: true });
    const dry = tasks(join(t.root, 'shop'), ['import', 'backlog', '.', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatchInlineSnapshot(`
      "would import 5 tasks from backlog/tasks (5 new):
        task-1 -> #3: Set up the database schema
        task-2 -> #4: Write the REST API
        task-3 -> #5: Build the web client
        task-4 -> #6: End-to-end tests (blocked by #4, #5)
        task-4.01 -> #7: Triage flaky tests
      nothing was written (drop --dry-run to import)
      "
    `);
    expect(dry.stderr).toMatchInlineSnapshot(`
      "note: left out 1 task in backlog/drafts (drafts); only backlog/tasks is imported
      note: left out 1 task in backlog/archive/tasks (archived); only backlog/tasks is imported
      warning: task-4: 2 assignees; the first, carol, is the owner, all are kept in metadata.backlog.assignee
      warning: task-4.01: status "Blocked" is not To Do, In Progress or Done; imported as pending
      warning: task-4 (End-to-end tests): dropped the edge to "task-9", which is not in the list
      "
    `);
    expect(existsSync(join(t.board, 'task_3.json'))).toBe(false);

    expect(tasks(t.root, ['import', 'backlog', join(t.root, 'shop', 'backlog')]).code).toBe(0);
    expect(readTaskFile(t.board, 3)).toEqual({
      id: 3,
      subject: 'Set up the database schema',
      description:
        'Tables for users and orders, with migrations.\n\n## Acceptance Criteria\n- [x] #1 users table with a unique email\n- [x] #2 orders reference users',
      status: 'completed',
      owner: 'ann',
      blockedBy: [],
      blocks: [4, 5],
      priority: 1,
      labels: ['backend', 'db'],
      metadata: {
        importedFrom: { tool: 'backlog', id: 'task-1', source: 'shop/backlog/tasks' },
        backlog: { created_date: '2025-06-02 09:15', updated_date: '2025-06-03 17:40' },
      },
    });
    expect(readTaskFile(t.board, 6)).toMatchObject({ owner: 'carol', blockedBy: [4, 5], priority: 3 });
    // Its parent_task_id is its parent (docs/protocol.md, "Parents").
    expect(readTaskFile(t.board, 7)).toMatchObject({ parent: 6 });
    expect(readTaskFile(t.board, 7).metadata).not.toHaveProperty('links');
    // bob's work in progress counts as his claim, as any imported in-progress task does.
    expect(JSON.parse(readFileSync(join(t.board, '.runtime', 'leases', 'task_4.json'), 'utf8'))).toMatchObject({ task: 4, owner: 'bob', expiresAt: null });
    expect(tasks(t.root, ['doctor']).code).toBe(0);
    expect(run(t.root, ['list'])).toContain(
      // Priority and labels came over as the task's own planning fields.
      '[x] #3: Set up the database schema P1 #backend #db\n[>] #4: Write the REST API #backend (bob)\n[ ] #5: Build the web client #frontend\n[ ] #6: End-to-end tests P3 (blocked by: #4, #5; owner: carol; 0/1 done)\n',
    );
  });

  it('imports beads issues: blocks dependencies become edges, parent-child ones parents, related and discovered-from soft links, tombstones left out', async () => {
    const t = await board();
    const file = join(t.root, 'issues.jsonl');
    cpSync(join(FIXTURES, 'beads-project', '.beads', 'issues.jsonl'), file);
    const r = tasks(t.root, ['import', 'beads', file, '--json']);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { mapping: { from: string; to: number }[]; notes: string[]; warnings: string[] };
    expect(json.mapping.map((m) => `${m.from} -> #${m.to}`)).toEqual(['bd-7f3a -> #3', 'bd-7f3a.1 -> #4', 'bd-7f3a.2 -> #5', 'bd-9d02 -> #6', 'bd-c41e -> #7']);
    expect(json.notes).toEqual(['left out 1 tombstone (deleted issues)']);
    expect(json.warnings).toEqual([]);
    expect(readTaskFile(t.board, 7)).toEqual({
      id: 7,
      subject: 'Refund flow',
      description: 'Full and partial refunds.\n\n## Acceptance Criteria\n\n- partial refund keeps the order open',
      status: 'pending',
      owner: '',
      blockedBy: [5],
      blocks: [],
      priority: 0,
      related: [6],
      discoveredFrom: [5],
      metadata: {
        importedFrom: { tool: 'beads', id: 'bd-c41e', source: 'issues.jsonl' },
        beads: { issue_type: 'feature', created_at: '2025-11-02T09:00:00.000000-08:00', updated_at: '2025-11-02T09:00:00.000000-08:00' },
      },
    });
    // The links are on both sides (docs/protocol.md, "Links").
    expect(readTaskFile(t.board, 6)).toMatchObject({ related: [7] });
    // The closed blocker keeps its side as history; the open one is on both sides.
    expect(readTaskFile(t.board, 4)).toMatchObject({ status: 'completed', owner: 'ann', blocks: [5] });
    expect(readTaskFile(t.board, 5)).toMatchObject({ status: 'in_progress', owner: 'bob', blockedBy: [], blocks: [7], discovered: [7] });
    expect(tasks(t.root, ['doctor']).code).toBe(0);
    // The project folder works as well as the file.
    const again = tasks(t.root, ['import', 'beads', join(FIXTURES, 'beads-project'), '--dry-run']);
    expect(again.stdout).toContain('bd-c41e -> #12: Refund flow (blocked by #10)');
  });

  it('round-trips a board through export and import dotasks: the same tasks, ids renumbered consistently', async () => {
    const t = await board();
    run(t.root, ['create', 'Write docs', '--description', 'README\nand the guide', '--blocked-by', '1', '--meta', 'area=docs']);
    run(t.root, ['create', 'Scratch']);
    run(t.root, ['create', 'Release', '--blocked-by', '2,3']);
    run(t.root, ['delete', '4']);
    run(t.root, ['done', '1']);
    run(t.root, ['start', '2', '--owner', 'agent-1', '--active-form', 'wiring it up']);
    // The planning fields and the file scope travel too.
    run(t.root, ['update', '3', '--priority', '0', '--label', 'release,ops', '--path', 'docs/**']);
    run(t.root, ['note', '2', 'halfway there', '--owner', 'agent-1']);
    const first = run(t.root, ['export']);
    writeFileSync(join(t.root, 'board.json'), first);

    const other = tempBoard();
    const cleanFirst = cleanup;
    cleanup = () => {
      cleanFirst();
      other.cleanup();
    };
    const r = tasks(other.root, ['import', 'dotasks', join(t.root, 'board.json')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const second = run(other.root, ['export']);

    type View = { id: number; blockedBy: number[]; blocks: number[]; openBlockers: number[]; metadata: Record<string, unknown> };
    const before = (JSON.parse(first) as { tasks: View[] }).tasks;
    const after = (JSON.parse(second) as { tasks: View[] }).tasks;
    // #4 was deleted, so 1 2 3 5 become 1 2 3 4.
    const newId = new Map(before.map((v, i) => [v.id, i + 1]));
    expect(after.map((v) => v.metadata.importedFrom)).toEqual(before.map((v) => ({ tool: 'dotasks', id: String(v.id), source: join(t.root, 'board.json') })));
    const renumbered = before.map((v) => ({
      ...v,
      id: newId.get(v.id),
      blockedBy: v.blockedBy.map((id) => newId.get(id)),
      blocks: v.blocks.map((id) => newId.get(id)),
      openBlockers: v.openBlockers.map((id) => newId.get(id)),
    }));
    const withoutOrigin = after.map(({ metadata: { importedFrom: _origin, ...metadata }, ...v }) => ({ ...v, metadata }));
    expect(withoutOrigin).toEqual(renumbered);
    expect(after[1]).toMatchObject({ notes: [{ owner: 'agent-1', text: 'halfway there' }] });
    expect(after[2]).toMatchObject({ priority: 0, labels: ['ops', 'release'], paths: ['docs/**'] });
    expect(tasks(other.root, ['doctor']).code).toBe(0);
  });
});
