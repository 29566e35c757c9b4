import { afterEach, describe, expect, it } from 'vitest';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTasks, readTaskFile, tasks, tasksAsync, tempBoard } from '../helpers.js';

// Parents through the CLI: a task's `parent`, kept in the child's file only
// (docs/protocol.md, "Parents"): create and update take it, completion waits
// for the children (or follows them, with completeParents), a cycle of parents
// is refused, claim --next ranks a child with its ancestors' priority, and
// list --tree, show, doctor and the imports know the hierarchy.
let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
function board() {
  const t = tempBoard();
  cleanups.push(t.cleanup);
  return t;
}
function ok(cwd: string, args: string[], env: Record<string, string> = {}) {
  const r = tasks(cwd, args, env);
  expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}
const file = (dir: string, id: number) => readFileSync(join(dir, `task_${id}.json`), 'utf8');
const events = (dir: string) =>
  readFileSync(join(dir, '.runtime', 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; task?: number; tx?: string; owner?: string });

/** #1 epic → #2 story → #3 and #4 tasks; #5 stands alone. */
const THREE_LEVELS = [
  { subject: 'Epic: payments' },
  { subject: 'Story: card checkout', parent: 1 },
  { subject: 'Stripe client', parent: 2 },
  { subject: 'Webhook handler', parent: 2 },
  { subject: 'Unrelated' },
];

/** The three levels, made in process (the core call `create --parent` makes) where the hierarchy, not its making, is the subject. */
async function threeLevels() {
  const t = board();
  await createTasks(t.board, THREE_LEVELS);
  return t;
}

describe('a three-level hierarchy', () => {
  it('keeps the parent in the child only, and files without one keep their bytes', () => {
    const t = board();
    ok(t.root, ['create', 'Epic: payments']);
    ok(t.root, ['create', 'Story: card checkout', '--parent', '1']);
    ok(t.root, ['create', 'Stripe client', '--parent', '2']);
    ok(t.root, ['create', 'Webhook handler', '--parent', '#2']);
    ok(t.root, ['create', 'Unrelated']);
    expect(readTaskFile(t.board, 3)).toMatchObject({ id: 3, parent: 2 });
    expect(Object.keys(readTaskFile(t.board, 3))).toEqual(['id', 'subject', 'description', 'status', 'owner', 'parent', 'blockedBy', 'blocks']);
    // Neither the parent's file nor a task without a parent gets a field.
    for (const id of [1, 5]) expect(Object.keys(readTaskFile(t.board, id))).not.toContain('parent');
    expect(Object.keys(readTaskFile(t.board, 2))).not.toContain('children');
    const before = file(t.board, 5);
    ok(t.root, ['update', '5', '--priority', '1']);
    ok(t.root, ['update', '5', '--priority', '2']);
    expect(file(t.board, 5)).toBe(before);
  });

  it('a parent cannot complete while a child is open, by done, update --status completed or --force', async () => {
    const t = await threeLevels();
    const epic = file(t.board, 1);
    const refused = tasks(t.root, ['done', '1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('tasks: task #1 waits for its children: #2 is open (0/1 done); complete it first, or move it: tasks update 2 --parent none\n');
    expect(tasks(t.root, ['done', '1', '--force']).code).toBe(1);
    const story = tasks(t.root, ['update', '2', '--status', 'completed', '--json']);
    expect(story.code).toBe(1);
    expect(JSON.parse(story.stdout).error).toMatchObject({ code: 'E_BLOCKED' });
    expect(story.stderr).toContain('#3, #4 are open (0/2 done)');
    expect(file(t.board, 1)).toBe(epic);
    // Completing the children one by one leaves their parents open (no completeParents), then they may complete.
    ok(t.root, ['done', '3']);
    expect(tasks(t.root, ['done', '2']).stderr).toContain('#4 is open (1/2 done)');
    ok(t.root, ['done', '4']);
    expect(readTaskFile(t.board, 2).status).toBe('pending');
    ok(t.root, ['done', '2']);
    ok(t.root, ['done', '1']);
    expect(readTaskFile(t.board, 1).status).toBe('completed');
  });

  it('with completeParents a parent completes itself with its last open child, up two levels, in one transaction', async () => {
    const t = await threeLevels();
    writeFileSync(join(t.board, 'config.json'), '{"completeParents": true}\n');
    ok(t.root, ['done', '3'], { TASKS_OWNER: 'ann' });
    expect([1, 2].map((id) => readTaskFile(t.board, id).status)).toEqual(['pending', 'pending']);
    const done = ok(t.root, ['done', '4', '--json'], { TASKS_OWNER: 'ann' });
    expect(JSON.parse(done.stdout).completedParents).toEqual([2, 1]);
    expect([1, 2, 4].map((id) => readTaskFile(t.board, id).status)).toEqual(['completed', 'completed', 'completed']);
    const completed = events(t.board).filter((e) => e.type === 'completed' && [1, 2, 4].includes(e.task!));
    expect(completed.map((e) => e.task)).toEqual([4, 2, 1]);
    expect(new Set(completed.map((e) => e.tx)).size).toBe(1);
    expect(readTaskFile(t.board, 5).status).toBe('pending');
  });

  it('with completeParents a chain of 60 parents completes with its last child in one change (it once started over at each level and gave up)', async () => {
    const t = board();
    await createTasks(
      t.board,
      Array.from({ length: 60 }, (_, i) => ({ subject: `level ${i + 1}`, ...(i ? { parent: i } : {}) })),
    );
    writeFileSync(join(t.board, 'config.json'), '{"completeParents": true}\n');
    const done = ok(t.root, ['done', '60', '--json']);
    expect(JSON.parse(done.stdout).completedParents).toEqual(Array.from({ length: 59 }, (_, i) => 59 - i));
    expect(readTaskFile(t.board, 1).status).toBe('completed');
    const completed = events(t.board).filter((e) => e.type === 'completed');
    expect(completed).toHaveLength(60);
    expect(new Set(completed.map((e) => e.tx)).size).toBe(1);
  });

  it('a parent with a check before done: refused before its check runs, and not completed by its children', async () => {
    const t = await threeLevels();
    const marker = join(t.root, 'checked');
    // The story's own check leaves a mark: it must not run while the story's children are open.
    ok(t.root, ['update', '2', '--verify', `touch ${marker}`]);
    const refused = tasks(t.root, ['done', '2']);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      'tasks: task #2 waits for its children: #3, #4 are open (0/2 done); complete them first, or move them: tasks update 3 --parent none\n',
    ]);
    expect(existsSync(marker)).toBe(false);
    writeFileSync(join(t.board, 'config.json'), '{"completeParents": true}\n');
    ok(t.root, ['done', '3']);
    ok(t.root, ['done', '4']);
    // The story has a check, so it waits for 'tasks done', which runs it; the epic waits for the story.
    expect([1, 2].map((id) => readTaskFile(t.board, id).status)).toEqual(['pending', 'pending']);
    expect(JSON.parse(ok(t.root, ['done', '2', '--json']).stdout).completedParents).toEqual([1]);
    expect(existsSync(marker)).toBe(true);
  });

  it('a cycle of parents is refused, directly and through update, and nothing is written', async () => {
    const t = await threeLevels();
    const before = file(t.board, 1);
    const self = tasks(t.root, ['update', '1', '--parent', '1']);
    expect(self.code).toBe(1);
    expect(self.stderr).toBe('tasks: refused: a task cannot be its own parent (#1 -> #1)\n');
    const cycle = tasks(t.root, ['update', '1', '--parent', '3', '--json']);
    expect(cycle.code).toBe(1);
    expect(JSON.parse(cycle.stdout).error).toMatchObject({ code: 'E_CYCLE' });
    expect(cycle.stderr).toBe(
      'tasks: refused: #3 as the parent of #1 would close a cycle of parents #1 -> #3 -> #2 -> #1 (a task cannot be its own ancestor)\n',
    );
    expect(file(t.board, 1)).toBe(before);
  });

  it('bad, missing and deleted parents are refused with one line; --parent none clears it', async () => {
    const t = await threeLevels();
    expect(tasks(t.root, ['create', 'x', '--parent', '03']).code).toBe(2);
    const missing = tasks(t.root, ['create', 'x', '--parent', '99']);
    expect([missing.code, missing.stderr]).toEqual([1, "tasks: cannot make #99 a parent: it does not exist (see 'tasks list')\n"]);
    ok(t.root, ['delete', '5']);
    const deleted = tasks(t.root, ['update', '3', '--parent', '5']);
    expect([deleted.code, deleted.stderr]).toEqual([1, 'tasks: cannot make #5 a parent: it is deleted\n']);
    expect(readFileSync(join(t.board, '.highwatermark'), 'utf8')).toBe('5\n');
    ok(t.root, ['update', '4', '--parent', 'none']);
    expect(Object.keys(readTaskFile(t.board, 4))).not.toContain('parent');
    ok(t.root, ['update', '4', '--parent', '1']);
    expect(readTaskFile(t.board, 4).parent).toBe(1);
  });

  it('a task moved under a parent counts at once, though the board index had it without one', async () => {
    const t = await threeLevels();
    ok(t.root, ['done', '3']);
    ok(t.root, ['done', '4']);
    ok(t.root, ['list']); // the index now holds #5 as a task of its own
    ok(t.root, ['update', '5', '--parent', '2']);
    expect(tasks(t.root, ['done', '2']).stderr).toContain('waits for its children: #5 is open (2/3 done)');
    expect(tasks(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: 'a' }).stdout).toContain('"id": 5');
  });

  it('deleting a parent hands its open children to its own parent', async () => {
    const t = await threeLevels();
    ok(t.root, ['done', '3']);
    ok(t.root, ['delete', '2']);
    expect(readTaskFile(t.board, 4).parent).toBe(1);
    // The completed child keeps its parent as history.
    expect(readTaskFile(t.board, 3).parent).toBe(2);
  });
});

describe('readiness and priority', () => {
  it('a parent with open children is not claimable; its children rank with its priority', () => {
    const t = board();
    ok(t.root, ['create', 'Release', '--priority', '0']);
    ok(t.root, ['create', 'Urgent elsewhere', '--priority', '1']);
    ok(t.root, ['create', 'Changelog', '--parent', '1']);
    ok(t.root, ['create', 'Tag', '--parent', '1', '--priority', '3']);
    expect(ok(t.root, ['ready', '--explain']).stdout).toMatchInlineSnapshot(`
      "[ ] #3: Changelog
          1. P0 from parent #1 (own P2) · unblocks nothing · id 3
      [ ] #4: Tag P3
          2. P0 from parent #1 (own P3) · unblocks nothing · id 4
      [ ] #2: Urgent elsewhere P1
          3. P1 · unblocks nothing · id 2
      3 of 4 tasks on the board · 0/3 done · ready: #3, #4, #2
      #1: Release waits for its children (0/2 done: #3, #4 open); claim --next takes it once they are done
      "
    `);
    const json = JSON.parse(ok(t.root, ['ready', '--json', '--explain']).stdout);
    expect(json.tasks[0]).toMatchObject({ id: 3, parent: 1, rank: { priority: 0, ownPriority: 2, fromParent: 1 } });
    expect(json.waitingForChildren).toEqual([{ id: 1, done: 0, total: 2, open: [3, 4] }]);
    const claimed = [];
    for (let i = 0; i < 3; i++) claimed.push(JSON.parse(ok(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: `agent-${i}` }).stdout).task.id);
    expect(claimed).toEqual([3, 4, 2]);
    const none = tasks(t.root, ['claim', '--next'], { TASKS_OWNER: 'agent-9' });
    expect(none.code).toBe(3);
    const explicit = tasks(t.root, ['claim', '1'], { TASKS_OWNER: 'agent-9' });
    expect([explicit.code, explicit.stderr]).toEqual([1, 'tasks: blocked: task #1 waits for its children: #3, #4 are open (0/2 done); claim one of them\n']);
    ok(t.root, ['done', '3'], { TASKS_OWNER: 'agent-0' });
    ok(t.root, ['done', '4'], { TASKS_OWNER: 'agent-1' });
    expect(JSON.parse(ok(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: 'agent-9' }).stdout).task.id).toBe(1);
  });

  it('a blocker of a child ranks with the priority the child inherits', () => {
    const t = board();
    ok(t.root, ['create', 'Epic', '--priority', '0']);
    ok(t.root, ['create', 'Plain']);
    ok(t.root, ['create', 'Groundwork', '--priority', '4']);
    ok(t.root, ['create', 'Child', '--parent', '1', '--blocked-by', '3']);
    expect(ok(t.root, ['ready', '--explain']).stdout).toContain('[ ] #3: Groundwork P4\n    1. P0 through #4 (own P4) · unblocks 1 (#3 → #4) · id 3\n');
    expect(JSON.parse(ok(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: 'a' }).stdout).task.id).toBe(3);
  });
});

describe('list --tree and show', () => {
  it('list --tree indents children under their parents with progress; list and show say it too', async () => {
    const t = await threeLevels();
    ok(t.root, ['done', '3']);
    expect(ok(t.root, ['list', '--tree']).stdout).toMatchInlineSnapshot(`
      "[ ] #1: Epic: payments (0/1 done)
        [ ] #2: Story: card checkout (1/2 done)
          [x] #3: Stripe client
          [ ] #4: Webhook handler
      [ ] #5: Unrelated
      1/5 done · ready: #4, #5
      "
    `);
    expect(ok(t.root, ['list']).stdout.split('\n').slice(0, 2)).toEqual(['[ ] #1: Epic: payments (0/1 done)', '[ ] #2: Story: card checkout (1/2 done)']);
    expect(ok(t.root, ['show', '4']).stdout).toContain('  parent:      #2: Story: card checkout, under #1: Epic: payments\n');
    const story = ok(t.root, ['show', '2']).stdout;
    expect(story).toContain('  status:      pending (waits for its children)\n');
    expect(story).toContain('  children:    1/2 done\n    [x] #3: Stripe client\n    [ ] #4: Webhook handler\n');
    const json = JSON.parse(ok(t.root, ['show', '2', '--json']).stdout);
    expect(json).toMatchObject({ id: 2, parent: 1, ancestors: [1], children: [3, 4], progress: { done: 1, total: 2 }, ready: false });
    const listed = JSON.parse(ok(t.root, ['list', '--json']).stdout).tasks;
    expect(listed.map((x: { parent?: number }) => x.parent ?? null)).toEqual([null, 1, 2, 2, null]);
  });
});

describe('graph and export', () => {
  it('graph draws each child to its parent as an edge of its own, and a parent with open children is not ready there', async () => {
    const t = await threeLevels();
    ok(t.root, ['create', 'After the client', '--blocked-by', '3']);
    ok(t.root, ['done', '3']);
    expect(ok(t.root, ['graph']).stdout).toMatchInlineSnapshot(`
      "[ ] #1: Epic: payments
      [ ] #2: Story: card checkout
      [x] #3: Stripe client
      └── [ ] #6: After the client (ready)
      [ ] #4: Webhook handler (ready)
      [ ] #5: Unrelated (ready)

      parents (a parent waits for its children):
        #2 part of #1
        #3 part of #2
        #4 part of #2

      critical path: none (no open task waits for another)
      ready: #4, #5, #6
      "
    `);
    const json = JSON.parse(ok(t.root, ['graph', '--json']).stdout) as { parents: unknown[]; nodes: { id: number; state: string; ready: boolean }[] };
    expect(json.parents).toEqual([
      { child: 2, parent: 1 },
      { child: 3, parent: 2 },
      { child: 4, parent: 2 },
    ]);
    expect(json.nodes.filter((n) => n.id <= 2)).toMatchObject([
      { id: 1, state: 'blocked', ready: false },
      { id: 2, state: 'blocked', ready: false },
    ]);
    // Mermaid: the edge and the link come first, so the parents' linkStyle counts them.
    const mermaid = ok(t.root, ['graph', '--format', 'mermaid']).stdout;
    expect(mermaid).toContain(
      '  t3 -.-> t6\n  t2 -- part of --o t1\n  t3 -- part of --o t2\n  t4 -- part of --o t2\n  linkStyle 1,2,3 stroke:#8e24aa,stroke-width:2px\n',
    );
    const dot = ok(t.root, ['graph', '--format', 'dot']).stdout;
    expect(dot).toContain('  t2 -> t1 [style=bold, arrowhead=odiamond, color="#8e24aa", fontcolor="#8e24aa", label="part of"];');
    // A parent deleted (and so hidden) draws no edge; with --all it does.
    ok(t.root, ['delete', '1']);
    expect(JSON.parse(ok(t.root, ['graph', '--json']).stdout).parents).toEqual([
      { child: 3, parent: 2 },
      { child: 4, parent: 2 },
    ]);
  });

  it('export keeps parent in json and jsonl, says it in markdown, and an import of the export brings the hierarchy back', async () => {
    const t = await threeLevels();
    ok(t.root, ['done', '3']);
    const exported = JSON.parse(ok(t.root, ['export', '--format', 'json']).stdout).tasks as { id: number; parent?: number }[];
    expect(exported.map((x) => x.parent ?? null)).toEqual([null, 1, 2, 2, null]);
    const lines = ok(t.root, ['export', '--format', 'jsonl']).stdout.trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { parent?: number }).parent ?? null)).toEqual([null, 1, 2, 2, null]);
    const markdown = ok(t.root, ['export', '--format', 'markdown']).stdout;
    expect(markdown).toContain('- [ ] #1 Epic: payments — waits for its children #2; 0/1 done\n');
    expect(markdown).toContain('- [ ] #2 Story: card checkout — waits for its children #4; part of #1; 1/2 done\n');
    expect(markdown).toContain('- [x] #3 Stripe client — part of #2\n');
    expect(markdown).toContain('- [ ] #4 Webhook handler — ready; part of #2\n');
    const other = board();
    const file = join(other.root, 'export.json');
    writeFileSync(file, ok(t.root, ['export', '--format', 'json']).stdout);
    ok(other.root, ['import', 'dotasks', file]);
    expect(ok(other.root, ['list', '--tree']).stdout.split('\n').slice(0, 4)).toEqual([
      '[ ] #1: Epic: payments (0/1 done)',
      '  [ ] #2: Story: card checkout (1/2 done)',
      '    [x] #3: Stripe client',
      '    [ ] #4: Webhook handler',
    ]);
  });
});

describe('doctor', () => {
  it('reports a cycle of parents made by hand, and a parent that does not exist', () => {
    const t = board();
    const write = (id: number, fields: Record<string, unknown>) =>
      writeFileSync(
        join(t.board, `task_${id}.json`),
        // In canonical order (the parent after the owner), so doctor finds nothing else to say.
        JSON.stringify({ id, subject: `Task ${id}`, description: '', status: 'pending', owner: '', ...fields, blockedBy: [], blocks: [] }, null, 2) + '\n',
      );
    write(1, { parent: 2 });
    write(2, { parent: 3 });
    write(3, { parent: 1 });
    write(4, { parent: 9 });
    writeFileSync(join(t.board, '.highwatermark'), '4\n');
    const r = tasks(t.root, ['doctor', '--json']);
    expect(r.code).toBe(1);
    const findings = JSON.parse(r.stdout).findings as { code: string; task: number; cycle?: number[]; message: string; fixable: boolean }[];
    expect(findings.map((f) => [f.code, f.task, f.fixable])).toEqual([
      ['parent_cycle', 1, false],
      ['missing_parent', 4, false],
    ]);
    expect(findings[0].cycle).toEqual([1, 2, 3, 1]);
    expect(findings[0].message).toBe('a cycle of parents #1 -> #2 -> #3 -> #1: none of these tasks can complete, each waits for its child');
    expect(findings[1].message).toBe('#4 has the parent #9, which does not exist');
    expect(tasks(t.root, ['doctor']).stdout).toContain('tasks update 1 --parent none');
    // The board still lists, and refuses to close the cycle further.
    expect(tasks(t.root, ['list']).code).toBe(0);
  });
});

describe('doctor and a parent completed by hand', () => {
  it('reports a completed parent with open children, at its status, with a hint; deleted and completed children are no matter', async () => {
    const t = await threeLevels();
    ok(t.root, ['done', '3']);
    ok(t.root, ['create', 'Dropped', '--parent', '1']);
    ok(t.root, ['delete', '6']);
    expect(tasks(t.root, ['doctor']).code).toBe(0);
    // Completed by hand in an editor (dotasks refuses it): #2 with #4 open, and #1.
    for (const id of [1, 2]) writeFileSync(join(t.board, `task_${id}.json`), file(t.board, id).replace('"status": "pending"', '"status": "completed"'));
    const before = file(t.board, 2);
    const r = tasks(t.root, ['doctor', '--json']);
    expect(r.code).toBe(1);
    const findings = JSON.parse(r.stdout).findings as {
      code: string;
      task: number;
      file: string;
      line: number;
      column: number;
      message: string;
      fix: string;
      fixable: boolean;
    }[];
    // #1's children are #2, completed (by hand), and #6, deleted: nothing open under it.
    expect(findings.map((f) => [f.code, f.task, f.fixable])).toEqual([['completed_parent_open_children', 2, false]]);
    const story = findings[0];
    expect(story.file).toBe(join(t.board, 'task_2.json'));
    // The line and column of its "status" key, as the other findings point at their key.
    const lines = before.split('\n');
    expect(lines[story.line - 1].slice(story.column - 1)).toMatch(/^"status": "completed"/);
    expect(story.message).toBe('#2 is completed but its children are open: #4 (1/2 done); a completed task takes no open children');
    expect(story.fix).toBe(
      'finish them (tasks done 4) or move them out (tasks update 4 --parent none); completed by mistake: set "status" back to "pending" in its file',
    );
    const text = tasks(t.root, ['doctor']);
    expect(text.stdout).toContain(`.tasks/task_2.json:${story.line}:${story.column}: #2 is completed but its children are open`);
    // --fix repairs nothing of it and writes nothing.
    expect(tasks(t.root, ['doctor', '--fix']).code).toBe(1);
    expect(file(t.board, 2)).toBe(before);
    // Its children done, nothing is left to report.
    ok(t.root, ['done', '4']);
    expect(tasks(t.root, ['doctor', '--json']).stdout).not.toContain('completed_parent_open_children');
  });
});

describe('races between real processes', () => {
  it('two updates that would close a cycle of parents together: exactly one is refused', async () => {
    for (let round = 0; round < 3; round++) {
      const t = board();
      ok(t.root, ['create', 'A']);
      ok(t.root, ['create', 'B']);
      ok(t.root, ['list']);
      const runs = await Promise.all([tasksAsync(t.root, ['update', '1', '--parent', '2']), tasksAsync(t.root, ['update', '2', '--parent', '1'])]);
      expect(runs.map((r) => r.code).sort()).toEqual([0, 1]);
      expect(runs.find((r) => r.code === 1)!.stderr).toMatch(/would close a cycle of parents/);
      expect([1, 2].filter((id) => readTaskFile(t.board, id).parent !== undefined)).toHaveLength(1);
    }
  });

  it('a parent completed while a child is created under it: one of the two is refused, never a completed parent of open work', async () => {
    for (let round = 0; round < 3; round++) {
      const t = board();
      ok(t.root, ['create', 'Parent']);
      // With a board index, as a board that was listed has: the children are looked for there.
      ok(t.root, ['list']);
      const [done, created] = await Promise.all([tasksAsync(t.root, ['done', '1']), tasksAsync(t.root, ['create', 'Child', '--parent', '1'])]);
      expect([done.code, created.code].sort()).toEqual([0, 1]);
      const parent = readTaskFile(t.board, 1);
      if (created.code === 0) expect([parent.status, readTaskFile(t.board, 2).parent]).toEqual(['pending', 1]);
      else expect([parent.status, created.stderr]).toEqual(['completed', expect.stringContaining('a completed task takes no open children')]);
    }
  });
});

/** Backlog.md and beads projects as those tools leave them (packages/core/test/fixtures/imports). */
const FIXTURES = fileURLToPath(new URL('../../../core/test/fixtures/imports/', import.meta.url));

describe('imports', () => {
  it("beads' parent-child dependencies and Backlog.md's parent_task_id become parents", () => {
    const t = board();
    const issues = join(t.root, 'issues.jsonl');
    cpSync(join(FIXTURES, 'beads-project', '.beads', 'issues.jsonl'), issues);
    ok(t.root, ['import', 'beads', issues]);
    // bd-7f3a (#1) is the epic of bd-7f3a.1 (#2) and bd-7f3a.2 (#3); related and discovered-from stay soft links.
    expect([2, 3].map((id) => readTaskFile(t.board, id).parent)).toEqual([1, 1]);
    expect(readTaskFile(t.board, 2).metadata).not.toHaveProperty('links');
    expect(readTaskFile(t.board, 5)).toMatchObject({ related: [4], discoveredFrom: [3] });
    expect(readTaskFile(t.board, 5)).not.toHaveProperty('parent');
    expect(ok(t.root, ['list', '--tree']).stdout.split('\n').slice(0, 3)).toEqual([
      '[ ] #1: Payments P1 #payments (1/2 done)',
      '  [x] #2: Add the Stripe client P1 #backend #payments',
      '  [>] #3: Webhook handler #backend (bob)',
    ]);
    cpSync(join(FIXTURES, 'backlog-project'), join(t.root, 'shop'), { recursive: true });
    ok(t.root, ['import', 'backlog', join(t.root, 'shop')]);
    // task-4 → #9, task-4.01 → #10.
    expect(readTaskFile(t.board, 10)).toMatchObject({ subject: 'Triage flaky tests', parent: 9 });
    expect(readTaskFile(t.board, 10).metadata).not.toHaveProperty('links');
    expect(tasks(t.root, ['doctor']).code).toBe(0);
  });
});
