import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readTaskFile, tasks, tempBoard, createTasks } from '../helpers.js';

// Planning through the CLI: --priority, --label, list filters, ready's order
// and --explain, claim --next, notes and search (docs/protocol.md, "Ready").
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
function ok(cwd: string, args: string[], env: Record<string, string> = {}, input?: string) {
  const r = tasks(cwd, args, env, input);
  expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

describe('priority and labels', () => {
  it('create and update take them, list shows and filters them, show prints them', () => {
    const t = board();
    ok(t.root, ['create', 'Parse', '--priority', '0', '--label', 'parser,core']);
    ok(t.root, ['create', 'Docs', '--priority', '3', '--label', 'docs', '--label', 'docs']);
    ok(t.root, ['create', 'Plain']);
    expect(readTaskFile(t.board, 1)).toMatchObject({ priority: 0, labels: ['core', 'parser'] });
    expect(Object.keys(readTaskFile(t.board, 3))).not.toContain('priority');
    expect(ok(t.root, ['list']).stdout).toMatchInlineSnapshot(`
      "[ ] #1: Parse P0 #core #parser
      [ ] #2: Docs P3 #docs
      [ ] #3: Plain
      0/3 done · ready: #1, #3, #2
      "
    `);
    expect(ok(t.root, ['list', '--label', 'docs,core']).stdout).toMatch(/^\[ \] #1: .*\n\[ \] #2: /);
    expect(ok(t.root, ['list', '--priority', '2']).stdout.split('\n')[0]).toBe('[ ] #3: Plain');
    ok(t.root, ['update', '1', '--priority', '2', '--remove-label', 'core', '--label', 'urgent']);
    expect(readTaskFile(t.board, 1)).toMatchObject({ labels: ['parser', 'urgent'] });
    expect(Object.keys(readTaskFile(t.board, 1))).not.toContain('priority');
    expect(ok(t.root, ['show', '2']).stdout).toContain('  priority:    P3\n  labels:      docs\n');
    expect(JSON.parse(ok(t.root, ['show', '3', '--json']).stdout)).toMatchObject({ priority: 2, labels: [], notes: [] });
    const bad = tasks(t.root, ['create', 'x', '--priority', '7']);
    expect(bad.code).toBe(2);
    expect(tasks(t.root, ['list', '--priority', 'high']).code).toBe(2);
  });

  it('a file without the planning fields keeps its bytes through every rewrite', async () => {
    const t = board();
    ok(t.root, ['create', 'A', '--meta', 'k=1']);
    ok(t.root, ['create', 'B', '--blocked-by', '1']);
    const before = readFileSync(join(t.board, 'task_2.json'), 'utf8');
    ok(t.root, ['update', '2', '--priority', '1']);
    ok(t.root, ['update', '2', '--priority', '2']);
    ok(t.root, ['update', '2', '--label', 'x']);
    ok(t.root, ['update', '2', '--remove-label', 'x']);
    expect(readFileSync(join(t.board, 'task_2.json'), 'utf8')).toBe(before);
  });
});

describe('ready and claim --next order', () => {
  // #1 → #3 → #4 (a chain of two behind #1), #2 alone, #5 P1 alone, #6 P4 → #7.
  async function dag() {
    const t = board();
    await createTasks(t.board, [
      'head of chain',
      'alone',
      { subject: 'middle', blockedBy: [1] },
      { subject: 'end', blockedBy: [3] },
      { subject: 'urgent', priority: 1 },
      { subject: 'someday', priority: 4 },
      { subject: 'after someday', blockedBy: [6] },
    ]);
    return t;
  }

  it('ready lists priority first, then the work each unblocks, then id; --explain says why', async () => {
    const t = await dag();
    expect(ok(t.root, ['ready', '--explain']).stdout).toMatchInlineSnapshot(`
      "[ ] #5: urgent P1
          1. P1 · unblocks nothing · id 5
      [ ] #1: head of chain
          2. P2 · unblocks 2 (#1 → #3 → #4) · id 1
      [ ] #2: alone
          3. P2 · unblocks nothing · id 2
      [ ] #6: someday P4
          4. P4 · unblocks 1 (#6 → #7) · id 6
      4 of 7 tasks on the board · 0/4 done · ready: #5, #1, #2, #6
      "
    `);
    const json = JSON.parse(ok(t.root, ['ready', '--json', '--explain']).stdout);
    expect(json.tasks.map((x: { id: number; rank: { unblocks: number } }) => [x.id, x.rank.unblocks])).toEqual([
      [5, 0],
      [1, 2],
      [2, 0],
      [6, 1],
    ]);
  });

  it('claim --next takes them in that order', async () => {
    const t = await dag();
    const order = [];
    for (let i = 0; i < 4; i++) order.push(JSON.parse(ok(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: `agent-${i}` }).stdout).task.id);
    expect(order).toEqual([5, 1, 2, 6]);
  });
});

describe('priority that flows', () => {
  // The inversion: a P3 blocker of a P0 release, and two plain P2 tasks.
  async function inversion() {
    const t = board();
    await createTasks(t.board, [{ subject: 'blocker', priority: 3 }, { subject: 'release', priority: 0, blockedBy: [1] }, 'plain one', 'plain two']);
    return t;
  }

  it('a blocker ranks with the most urgent open work behind it, and --explain says through which task', async () => {
    const t = await inversion();
    expect(ok(t.root, ['ready', '--explain']).stdout).toMatchInlineSnapshot(`
      "[ ] #1: blocker P3
          1. P0 through #2 (own P3) · unblocks 1 (#1 → #2) · id 1
      [ ] #3: plain one
          2. P2 · unblocks nothing · id 3
      [ ] #4: plain two
          3. P2 · unblocks nothing · id 4
      3 of 4 tasks on the board · 0/3 done · ready: #1, #3, #4
      "
    `);
    const json = JSON.parse(ok(t.root, ['ready', '--json', '--explain']).stdout);
    expect(json.tasks[0]).toMatchObject({ id: 1, priority: 3, rank: { priority: 0, ownPriority: 3, through: 2 } });
    // Its own priority is unchanged in its file.
    expect(readTaskFile(t.board, 1).priority).toBe(3);
    expect(JSON.parse(ok(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: 'agent-1' }).stdout).task.id).toBe(1);
  });

  it('flows through a chain, and stops flowing when the urgent task is done', async () => {
    const t = board();
    await createTasks(t.board, [
      { subject: 'first', priority: 4 },
      { subject: 'second', blockedBy: [1] },
      { subject: 'urgent', priority: 1, blockedBy: [2] },
      'plain',
    ]);
    expect(
      JSON.parse(ok(t.root, ['ready', '--json', '--explain']).stdout).tasks.map((x: { id: number; rank: { priority: number } }) => [x.id, x.rank.priority]),
    ).toEqual([
      [1, 1],
      [4, 2],
    ]);
    ok(t.root, ['update', '3', '--status', 'deleted']);
    expect(JSON.parse(ok(t.root, ['ready', '--json', '--explain']).stdout).tasks.map((x: { id: number }) => x.id)).toEqual([4, 1]);
  });
});

describe('why a ready task waits, and what can start at once', () => {
  async function scoped() {
    const t = board();
    spawnSync('git', ['init', '-q'], { cwd: t.root });
    for (const file of ['src/parser/lexer.ts', 'src/parser/ast.ts', 'src/cli/help.ts', 'src/cli/main.ts', 'web/app.ts']) {
      mkdirSync(join(t.root, dirname(file)), { recursive: true });
      writeFileSync(join(t.root, file), '');
    }
    spawnSync('git', ['add', '-A'], { cwd: t.root });
    await createTasks(t.board, [
      { subject: 'parser', paths: ['src/parser/**'] },
      { subject: 'lexer', paths: ['src/parser/lexer.ts'] },
      { subject: 'cli', paths: ['src/cli/**'] },
      { subject: 'cli help', paths: ['src/cli/help.ts'] },
      'notes',
      { subject: 'web', paths: ['web/**'] },
    ]);
    ok(t.root, ['claim', '1'], { TASKS_OWNER: 'alice' });
    return t;
  }

  it('ready --explain names the task in progress a held-back task overlaps, as claim --next passes it over', async () => {
    const t = await scoped();
    const explained = ok(t.root, ['ready', '--explain']).stdout;
    expect(explained).toContain(
      '[ ] #2: lexer\n    1. P2 · unblocks nothing · id 2 · held back: its files overlap #1 in progress (claim --next passes it over)\n',
    );
    expect(explained).toContain('    2. P2 · unblocks nothing · id 3\n');
    const json = JSON.parse(ok(t.root, ['ready', '--json', '--explain']).stdout);
    expect(json.tasks.find((x: { id: number }) => x.id === 2).rank.heldBackBy).toEqual([1]);
    expect(json.tasks.find((x: { id: number }) => x.id === 3).rank.heldBackBy).toBeUndefined();
    expect(JSON.parse(ok(t.root, ['claim', '--next', '--json'], { TASKS_OWNER: 'bob' }).stdout).task.id).toBe(3);
  });

  it('ready --parallel N gives up to N ready tasks whose scopes are pairwise disjoint and clear of the work in progress', async () => {
    const t = await scoped();
    const ids = (args: string[]) => JSON.parse(ok(t.root, ['ready', '--json', ...args]).stdout).tasks.map((x: { id: number }) => x.id);
    expect(ids(['--parallel', '3'])).toEqual([3, 5, 6]);
    expect(ids(['--parallel', '2'])).toEqual([3, 5]);
    expect(ok(t.root, ['ready', '--parallel', '3']).stdout).toMatch(/^\[ \] #3: cli\n\[ \] #5: notes\n\[ \] #6: web\n3 of 6 tasks on the board/);
    expect(tasks(t.root, ['ready', '--parallel', '0']).code).toBe(2);
  });
});

describe('notes', () => {
  it('tasks note appends {at, owner, text} to the file; show prints them; stdin with --stdin', async () => {
    const t = board();
    await createTasks(t.board, ['Parse']);
    expect(ok(t.root, ['note', '1', 'CRLF', 'breaks', 'the', 'lexer'], { TASKS_OWNER: 'ann' }).stdout).toBe('noted on #1: Parse\n');
    ok(t.root, ['note', '1', '--stdin'], { TASKS_OWNER: 'bob' }, 'line one\nline two\n');
    const notes = readTaskFile(t.board, 1).notes as { at: string; owner: string; text: string }[];
    expect(notes.map((n) => [n.owner, n.text])).toEqual([
      ['ann', 'CRLF breaks the lexer'],
      ['bob', 'line one\nline two'],
    ]);
    expect(Date.parse(notes[0].at)).toBeGreaterThan(Date.now() - 60_000);
    const shown = ok(t.root, ['show', '1']).stdout;
    expect(shown).toContain(`  notes (2):\n  - ${notes[0].at} ann: CRLF breaks the lexer\n  - ${notes[1].at} bob: line one\n      line two\n`);
    expect(tasks(t.root, ['note', '1']).code).not.toBe(0);
    expect(tasks(t.root, ['note', '9', 'x']).code).toBe(1);
  });
});

describe('search', () => {
  it('finds text in subject, labels, description and notes, ranked by field; list --grep filters', async () => {
    const t = board();
    await createTasks(t.board, ['Notes only']);
    ok(t.root, ['note', '1', 'the Lexer fails here']);
    await createTasks(t.board, [
      { subject: 'Description', description: 'rewrite the lexer' },
      { subject: 'Labelled', labels: ['lexer'] },
      'Lexer in the subject',
      'Other',
    ]);
    expect(ok(t.root, ['search', 'LEXER']).stdout).toMatchInlineSnapshot(`
      "[ ] #4: Lexer in the subject
      [ ] #3: Labelled #lexer [labels]
      [ ] #2: Description [description]
      [ ] #1: Notes only [notes]
      4 matches
      "
    `);
    const json = JSON.parse(ok(t.root, ['search', 'lexer', '--json']).stdout);
    expect(json.tasks.map((x: { id: number; match: string }) => [x.id, x.match])).toEqual([
      [4, 'subject'],
      [3, 'labels'],
      [2, 'description'],
      [1, 'notes'],
    ]);
    expect(ok(t.root, ['search', 'nothing like it']).stdout).toBe('no task matches\n');
    expect(ok(t.root, ['list', '--grep', 'lexer']).stdout.split('\n').slice(0, 4)).toEqual([
      '[ ] #1: Notes only',
      '[ ] #2: Description',
      '[ ] #3: Labelled #lexer',
      '[ ] #4: Lexer in the subject',
    ]);
  });
});
