import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskStore, resolveOwner } from '@dotasks/core';
import { cleanEnv, createTasks, readTaskFile, tasks, tempBoard } from '../helpers.js';

// Soft links through the CLI (docs/protocol.md, "Links"): `related` and
// `discoveredFrom`/`discovered`, on both sides, shown, drawn, repaired, and
// never part of readiness.
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
/** Every file of the board and its bytes, to show a refusal wrote nothing. */
function files(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .filter((n) => n.startsWith('task_') || n === '.highwatermark')
      .map((n) => [n, readFileSync(join(dir, n), 'utf8')]),
  );
}

describe('links are written on both sides', () => {
  it('by create and update, and taken off both sides by --remove-related and --remove-discovered-from', () => {
    const t = board();
    ok(t.root, ['create', 'Lexer']);
    ok(t.root, ['create', 'Parser', '--related', '1']);
    ok(t.root, ['create', 'Flaky lexer test', '--discovered-from', '1', '--related', '#2']);
    expect(readTaskFile(t.board, 1)).toMatchObject({ related: [2], discovered: [3] });
    expect(readTaskFile(t.board, 2)).toMatchObject({ related: [1, 3] });
    expect(readTaskFile(t.board, 3)).toMatchObject({ related: [2], discoveredFrom: [1] });
    expect(readTaskFile(t.board, 3)).not.toHaveProperty('discovered');

    ok(t.root, ['update', '2', '--discovered-from', '3', '--remove-related', '1,3']);
    expect(readTaskFile(t.board, 1)).not.toHaveProperty('related');
    expect(readTaskFile(t.board, 2)).toMatchObject({ discoveredFrom: [3] });
    expect(readTaskFile(t.board, 2)).not.toHaveProperty('related');
    expect(readTaskFile(t.board, 3)).toMatchObject({ discovered: [2], discoveredFrom: [1] });
    expect(readTaskFile(t.board, 3)).not.toHaveProperty('related');
    ok(t.root, ['update', '3', '--remove-discovered-from', '1']);
    expect(readTaskFile(t.board, 1)).not.toHaveProperty('discovered');
    expect(readTaskFile(t.board, 3)).not.toHaveProperty('discoveredFrom');
  });

  it('show prints them and --json gives them; a task without links shows and gives none', () => {
    const t = board();
    ok(t.root, ['create', 'Lexer']);
    ok(t.root, ['create', 'Parser', '--related', '1']);
    expect(JSON.parse(ok(t.root, ['create', 'Flaky test', '--discovered-from', '1', '--json']).stdout).task).toMatchObject({ id: 3, discoveredFrom: [1] });
    expect(ok(t.root, ['show', '1']).stdout).toMatchInlineSnapshot(`
      "[ ] #1: Lexer
        status:      pending (ready)
        owner:       (none)
        blockedBy:   (none)
        blocks:      (none)
        priority:    P2 (default)
        related:     #2
        discovered:  #3 (found while working on this one)
      "
    `);
    expect(ok(t.root, ['show', '3']).stdout).toContain('  discoveredFrom: #1 (found while working on it)\n');
    expect(JSON.parse(ok(t.root, ['show', '1', '--json']).stdout)).toMatchObject({ related: [2], discovered: [3], ready: true });
    expect(JSON.parse(ok(t.root, ['show', '3', '--json']).stdout)).toMatchObject({ discoveredFrom: [1] });
    const plain = ok(t.root, ['create', 'Plain', '--json']).stdout;
    expect(Object.keys(JSON.parse(plain).task)).not.toContain('related');
  });

  it('a file without links keeps its bytes when a link comes and goes', async () => {
    const t = board();
    // Made in process (create's own tests run the command): the links come and go through update.
    await createTasks(t.board, [{ subject: 'A', metadata: { k: 1 } }, 'B']);
    const before = readFileSync(join(t.board, 'task_1.json'), 'utf8');
    ok(t.root, ['update', '1', '--related', '2', '--discovered-from', '2']);
    ok(t.root, ['update', '1', '--remove-related', '2', '--remove-discovered-from', '2']);
    expect(readFileSync(join(t.board, 'task_1.json'), 'utf8')).toBe(before);
    expect(readFileSync(join(t.board, 'task_2.json'), 'utf8')).not.toMatch(/related|discovered/);
  });

  it('refuses bad ids, self-links and missing or deleted tasks with one line, writing nothing', async () => {
    const t = board();
    await createTasks(t.board, ['A', 'B']);
    await new TaskStore(t.board).deleteTask(2, { actor: resolveOwner({ cwd: t.root, env: cleanEnv() }).owner });
    const before = files(t.board);
    const refusals: [string[], number, RegExp][] = [
      [['create', 'C', '--related', 'x'], 2, /^tasks: not a task id: 'x'/],
      [['update', '1', '--discovered-from', '03.5'], 2, /^tasks: not a task id/],
      [['update', '1', '--related', '1'], 1, /^tasks: task #1 cannot be related to itself$/],
      [['update', '1', '--discovered-from', '1'], 1, /^tasks: task #1 cannot be discovered from itself$/],
      [['create', 'C', '--related', '9'], 1, /^tasks: cannot link to task #9: it does not exist/],
      [['update', '1', '--related', '2'], 1, /^tasks: cannot link to task #2: it is deleted$/],
      [['create', 'C', '--discovered-from', '1', '--related', '2'], 1, /^tasks: cannot link to task #2: it is deleted$/],
    ];
    for (const [args, code, message] of refusals) {
      const r = tasks(t.root, args);
      expect([args.join(' '), r.code]).toEqual([args.join(' '), code]);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr.trimEnd()).toMatch(message);
    }
    expect(files(t.board)).toEqual(before);
  });

  it("a deleted task's links leave the other side; its own stay as history", () => {
    const t = board();
    ok(t.root, ['create', 'A']);
    ok(t.root, ['create', 'B', '--related', '1', '--discovered-from', '1']);
    ok(t.root, ['create', 'C', '--discovered-from', '2']);
    ok(t.root, ['delete', '2']);
    expect(readTaskFile(t.board, 1)).not.toHaveProperty('related');
    expect(readTaskFile(t.board, 1)).not.toHaveProperty('discovered');
    expect(readTaskFile(t.board, 3)).not.toHaveProperty('discoveredFrom');
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'deleted', related: [1], discoveredFrom: [1], discovered: [3] });
    expect(tasks(t.root, ['doctor']).code).toBe(0);
  });
});

describe('links are never in readiness', () => {
  it('a task related to or found from open work is ready and claimable; links flow no priority and loop freely', () => {
    const t = board();
    ok(t.root, ['create', 'Open work', '--priority', '0']);
    ok(t.root, ['claim', '1'], { TASKS_OWNER: 'agent-1' });
    ok(t.root, ['create', 'Found', '--priority', '3', '--discovered-from', '1', '--related', '1']);
    ok(t.root, ['create', 'Loop', '--discovered-from', '2']);
    // A discovered-from chain that comes back is no cycle: not refused.
    ok(t.root, ['update', '2', '--discovered-from', '3']);
    ok(t.root, ['update', '3', '--related', '2']);
    expect(ok(t.root, ['ready', '--explain']).stdout).toMatchInlineSnapshot(`
      "[ ] #3: Loop
          1. P2 · unblocks nothing · id 3
      [ ] #2: Found P3
          2. P3 · unblocks nothing · id 2
      2 of 3 tasks on the board · 0/2 done · ready: #3, #2
      "
    `);
    expect(JSON.parse(ok(t.root, ['show', '2', '--json']).stdout)).toMatchObject({ ready: true, openBlockers: [] });
    expect(JSON.parse(ok(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: 'agent-2' }).stdout).task.id).toBe(3);
    expect(JSON.parse(ok(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: 'agent-3' }).stdout).task.id).toBe(2);
    // Completing one end needs nothing of the other.
    ok(t.root, ['done', '2'], { TASKS_OWNER: 'agent-3' });
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'in_progress', related: [2], discovered: [2] });
  });
});

describe('tasks graph draws links apart from edges', () => {
  it('dotted and labelled in mermaid and dot, a section of its own in text, a list in --json', () => {
    const t = board();
    ok(t.root, ['create', 'Lexer']);
    ok(t.root, ['create', 'Parser', '--blocked-by', '1', '--related', '1']);
    ok(t.root, ['create', 'Flaky test', '--discovered-from', '2']);
    expect(ok(t.root, ['graph']).stdout).toMatchInlineSnapshot(`
      "[ ] #1: Lexer (ready; critical path)
      └── [ ] #2: Parser (critical path)
      [ ] #3: Flaky test (ready)

      links (they block nothing):
        #1 ~ #2 related
        #3 found while on #2

      critical path: #1 -> #2 (2 open tasks in a row)
      ready: #1, #3
      "
    `);
    const mermaid = ok(t.root, ['graph', '--format', 'mermaid']).stdout;
    expect(mermaid).toContain('  t1 ==> t2\n  t1 -. related .- t2\n  t3 -. found while on .-> t2\n');
    expect(mermaid).toContain('linkStyle 0 stroke:#d93025');
    const dot = ok(t.root, ['graph', '--format', 'dot']).stdout;
    expect(dot).toContain('  t1 -> t2 [style=dotted, dir=none, constraint=false, color="#9aa0a6", fontcolor="#9aa0a6", label="related"];');
    expect(dot).toContain('  t3 -> t2 [style=dotted, constraint=false, color="#9aa0a6", fontcolor="#9aa0a6", label="found while on"];');
    const json = JSON.parse(ok(t.root, ['graph', '--json']).stdout) as { links: unknown[]; edges: unknown[] };
    expect(json.links).toEqual([
      { from: 1, to: 2, type: 'related' },
      { from: 3, to: 2, type: 'discovered-from' },
    ]);
    expect(json.edges).toEqual([{ from: 1, to: 2, critical: true }]);
  });
});

describe('tasks doctor and links written by hand', () => {
  it('adds the missing side of a one-sided link, and reports a link to a missing task', () => {
    const t = board();
    ok(t.root, ['create', 'A']);
    ok(t.root, ['create', 'B']);
    ok(t.root, ['create', 'C']);
    const edit = (id: number, fields: Record<string, unknown>) =>
      writeFileSync(join(t.board, `task_${id}.json`), JSON.stringify({ ...readTaskFile(t.board, id), ...fields }, null, 2) + '\n');
    edit(1, { related: [2] });
    edit(3, { discoveredFrom: [1, 9] });
    const d = tasks(t.root, ['doctor', '--json']);
    expect(d.code).toBe(1);
    const findings = (JSON.parse(d.stdout) as { findings: { code: string; task: number; message: string; fixable: boolean }[] }).findings;
    expect(findings.map((f) => [f.code, f.task, f.message, f.fixable])).toEqual([
      ['one_sided_link', 1, '#1 names #2 as a link, but #2 does not list #1 in "related"', true],
      ['one_sided_link', 3, '#3 names #1 as a link, but #1 does not list #3 in "discovered"', true],
      ['bad_link', 3, '#3: "discoveredFrom" names #9, which does not exist', false],
    ]);
    expect(tasks(t.root, ['doctor', '--fix']).code).toBe(1);
    expect(readTaskFile(t.board, 2)).toMatchObject({ related: [1] });
    expect(readTaskFile(t.board, 1)).toMatchObject({ related: [2], discovered: [3] });
    const after = tasks(t.root, ['doctor']);
    expect(after.stdout).toContain('"discoveredFrom" names #9, which does not exist');
    expect(after.stdout).toContain('tasks update 3 --remove-discovered-from 9');
    ok(t.root, ['update', '3', '--remove-discovered-from', '9']);
    expect(ok(t.root, ['doctor']).stdout).toContain('the board is healthy');
  });
});
