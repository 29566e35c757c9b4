import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../helpers.js';
import { copyRemote, createRemote, git, type RemoteFixture } from '../../../core/test/git-remote.js';

/**
 * Two branches that each created tasks under the same ids, brought together
 * by git as people do (merge, rebase, pull --rebase, cherry-pick, a third
 * clone merging two pushed branches): every task of both sides survives
 * under its own id, and every edge and `#N` mention points at the task its
 * author meant (docs/protocol.md, "Ids across branches"). Real git, real
 * `tasks` processes.
 */

let fixture: RemoteFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

function ok(dir: string, args: string[]): string {
  const r = tasks(dir, args);
  expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout + r.stderr;
}

const commit = (dir: string, message: string) => {
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
};

interface Board {
  /** By subject: the task's id, what it waits for and blocks (as subjects), its description. */
  bySubject: Map<string, { id: number; blockedBy: string[]; blocks: string[]; description: string; priority?: number; labels?: string[] }>;
  ids: number[];
  texts: string[];
}

function readBoard(dir: string): Board {
  const board = join(dir, '.tasks');
  const texts = readdirSync(board)
    .filter((n) => /^task_\d+\.json$/.test(n))
    .map((n) => readFileSync(join(board, n), 'utf8'));
  const tasksOf = texts.map(
    (t) => JSON.parse(t) as { id: number; subject: string; blockedBy: number[]; blocks: number[]; description: string; priority?: number; labels?: string[] },
  );
  const subjectOf = new Map(tasksOf.map((t) => [t.id, t.subject]));
  const bySubject = new Map(
    tasksOf.map((t) => [
      t.subject,
      {
        id: t.id,
        blockedBy: t.blockedBy.map((id) => subjectOf.get(id) ?? `#${id}?`).sort(),
        blocks: t.blocks.map((id) => subjectOf.get(id) ?? `#${id}?`).sort(),
        description: t.description,
        priority: t.priority,
        labels: t.labels,
      },
    ]),
  );
  return { bySubject, ids: tasksOf.map((t) => t.id).sort((a, b) => a - b), texts };
}

/**
 * A repository with a board (driver and hooks from `tasks init --git`), two
 * tasks on main, and two branches each creating three tasks (the same ids
 * on both) with edges among them and to main's tasks, mentions of their own
 * ids, and one change each to a task both change.
 */
function twoBranches(dir: string): void {
  ok(dir, ['create', 'Existing']);
  ok(dir, ['create', 'Shared']);
  commit(dir, 'board');
  git(dir, 'checkout', '-q', '-b', 'feature-a');
  ok(dir, ['create', 'A one', '--blocked-by', '1']);
  ok(dir, ['create', 'A two', '--blocked-by', '3', '-d', 'after #3; see also #1']);
  ok(dir, ['create', 'A three', '--blocked-by', '4,1', '-d', 'needs #4 and #3']);
  ok(dir, ['update', '2', '--priority', '0']);
  commit(dir, 'feature a');
  git(dir, 'checkout', '-q', 'main');
  git(dir, 'checkout', '-q', '-b', 'feature-b');
  ok(dir, ['create', 'B one', '--blocked-by', '1']);
  ok(dir, ['create', 'B two', '--blocked-by', '3', '-d', 'see #3']);
  ok(dir, ['create', 'B three', '--blocked-by', '3,4', '--blocks', '2', '-d', 'after #4']);
  ok(dir, ['update', '2', '--label', 'b-side']);
  commit(dir, 'feature b');
  git(dir, 'checkout', '-q', 'main');
}

/** Both sides' tasks, wired as their authors meant, and a healthy board (but for `unless`, a finding expected to stay). */
function expectBothSides(dir: string, unless?: RegExp): void {
  const board = readBoard(dir);
  expect(board.ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  for (const text of board.texts) expect(text).not.toMatch(/^<{7}|^={7}|^>{7}/m);
  const t = (subject: string) => board.bySubject.get(subject)!;
  expect(t('Existing')).toMatchObject({ blockedBy: [], blocks: ['A one', 'A three', 'B one'] });
  expect(t('Shared')).toMatchObject({ blockedBy: ['B three'], priority: 0, labels: ['b-side'] });
  expect(t('A one')).toMatchObject({ blockedBy: ['Existing'], blocks: ['A two'] });
  expect(t('A two')).toMatchObject({ blockedBy: ['A one'], blocks: ['A three'], description: `after #${t('A one').id}; see also #1` });
  expect(t('A three')).toMatchObject({ blockedBy: ['A two', 'Existing'], description: `needs #${t('A two').id} and #${t('A one').id}` });
  expect(t('B one')).toMatchObject({ blockedBy: ['Existing'], blocks: ['B three', 'B two'] });
  expect(t('B two')).toMatchObject({ blockedBy: ['B one'], blocks: ['B three'], description: `see #${t('B one').id}` });
  expect(t('B three')).toMatchObject({ blockedBy: ['B one', 'B two'], blocks: ['Shared'], description: `after #${t('B two').id}` });
  const doctor = tasks(dir, ['doctor']);
  if (unless) expect(doctor.stdout.split('\n').filter((l) => / \[[a-z_]+\]$/.test(l))).toEqual([expect.stringMatching(unless)]);
  else expect(doctor.code, doctor.stdout).toBe(0);
}

/** The scenario, built once for the file (some forty `tasks` and git runs): each test starts from a copy. */
let template: RemoteFixture | undefined;
beforeAll(async () => {
  template = await createRemote({ prefix: 'dotasks-branches-' });
  const dir = template.clone('repo');
  ok(dir, ['init', '--git']);
  commit(dir, 'tasks init --git');
  twoBranches(dir);
});
afterAll(() => template?.cleanup());

/** A copy of the scenario: the repository with main and the two branches (see twoBranches). */
function repository(): string {
  fixture = copyRemote(template!, 'dotasks-branches-');
  return join(fixture.root, 'repo');
}

describe('two branches that handed out the same ids', () => {
  it('git merge: both sides survive, edges and mentions follow their tasks, the merge commit says what moved', async () => {
    const dir = repository();
    git(dir, 'merge', '-q', '--no-edit', 'feature-a');
    git(dir, 'merge', '-q', '--no-edit', 'feature-b');
    expectBothSides(dir);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(git(dir, 'log', '-1', '--format=%B')).toMatch(/tasks: the other side's #3 \("B one"\) is #6 now/);
    expect(readBoard(dir).bySubject.get('B one')!.id).toBe(6);
  });

  it('git merge of two diverged branches (neither fast-forwards)', async () => {
    const dir = repository();
    git(dir, 'checkout', '-q', 'feature-a');
    git(dir, 'merge', '-q', '--no-edit', 'feature-b');
    expectBothSides(dir);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('git rebase: the rebased branch keeps every task, and its last commit holds the settled board', async () => {
    const dir = repository();
    git(dir, 'checkout', '-q', 'feature-a');
    git(dir, 'rebase', '-q', 'main');
    git(dir, 'checkout', '-q', 'feature-b');
    git(dir, 'rebase', '-q', 'feature-a');
    expectBothSides(dir);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    // The rebased branch's tasks moved; feature-a's kept their ids.
    expect(readBoard(dir).bySubject.get('A one')!.id).toBe(3);
  });

  it('git cherry-pick: the picked commit brings its tasks under free ids', async () => {
    const dir = repository();
    git(dir, 'checkout', '-q', 'feature-a');
    git(dir, 'cherry-pick', 'feature-b');
    expectBothSides(dir);
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('git pull --rebase from another clone, and a third clone merging two pushed feature branches', async () => {
    const dir = repository();
    git(dir, 'push', '-q', 'origin', 'main', 'feature-a', 'feature-b');
    // Another clone works on main with feature-a's tasks; this one has feature-b's, and pulls with --rebase.
    const other = fixture!.clone('other');
    ok(other, ['init', '--git']);
    git(other, 'merge', '-q', '--ff-only', 'origin/feature-a');
    git(other, 'push', '-q', 'origin', 'main');
    git(dir, 'checkout', '-q', 'feature-b');
    git(dir, 'branch', '-q', '-f', 'main', 'feature-b');
    git(dir, 'checkout', '-q', 'main');
    git(dir, 'pull', '-q', '--rebase', 'origin', 'main');
    expectBothSides(dir);
    // An integrator's clone merges both feature branches into main.
    const third = fixture!.clone('third');
    ok(third, ['init', '--git']);
    git(third, 'checkout', '-q', '-b', 'integration', git(third, 'merge-base', 'origin/feature-a', 'origin/feature-b'));
    git(third, 'merge', '-q', '--no-edit', 'origin/feature-b');
    git(third, 'merge', '-q', '--no-edit', 'origin/feature-a');
    const board = readBoard(third);
    expect(board.ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // Here feature-b came first, so feature-a's tasks moved.
    expect(board.bySubject.get('B one')!.id).toBe(3);
    expect(board.bySubject.get('A two')).toMatchObject({ blockedBy: ['A one'], description: `after #${board.bySubject.get('A one')!.id}; see also #1` });
    expect(tasks(third, ['doctor']).code).toBe(0);
  });

  it('a branch that goes on after its tasks were renumbered on main merges again into the tasks they are now', async () => {
    const dir = repository();
    git(dir, 'merge', '-q', '--no-edit', 'feature-a');
    git(dir, 'merge', '-q', '--no-edit', 'feature-b');
    const moved = readBoard(dir).bySubject.get('B two')!.id;
    git(dir, 'checkout', '-q', 'feature-b');
    ok(dir, ['update', '4', '--description', 'see #3, done soon']);
    ok(dir, ['done', '3', '--force']);
    commit(dir, 'more on b');
    git(dir, 'checkout', '-q', 'main');
    git(dir, 'merge', '-q', '--no-edit', 'feature-b');
    const board = readBoard(dir);
    expect(board.ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(board.bySubject.get('B two')).toMatchObject({ id: moved, description: `see #${board.bySubject.get('B one')!.id}, done soon` });
    expect(board.bySubject.get('A two')).toMatchObject({ id: 4, description: 'after #3; see also #1' });
    expect(JSON.parse(tasks(dir, ['show', String(board.bySubject.get('B one')!.id), '--json']).stdout).status).toBe('completed');
    expect(JSON.parse(tasks(dir, ['show', '3', '--json']).stdout)).toMatchObject({ subject: 'A one', status: 'pending' });
    expect(tasks(dir, ['doctor']).code).toBe(0);
  });
});

describe('where no hook runs', () => {
  it('without the hooks, tasks list names the one command, and tasks doctor --fix settles it without wiring an edge to the wrong task', async () => {
    const dir = repository();
    git(dir, 'config', 'core.hooksPath', join(fixture!.root, 'no-hooks'));
    git(dir, 'merge', '-q', '--no-edit', 'feature-a');
    git(dir, 'merge', '-q', '--no-edit', 'feature-b');
    const listed = tasks(dir, ['list']);
    expect(listed.stderr).toMatch(
      /#3, #4, #5 were created on both sides of a merge as different tasks, and one of each was set aside: tasks doctor --fix brings them back/,
    );
    const doctor = tasks(dir, ['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/#3 was created on two branches as two different tasks: "A one" kept #3, "B one" was set aside \[id_clash\]/);
    // The edges of B's side name ids A's tasks hold now: never "fixed" by adding their other side there.
    expect(doctor.stdout).not.toMatch(/fix: add the missing side/);
    const fixed = tasks(dir, ['doctor', '--fix']);
    expect(fixed.stdout).toMatch(/brought back the other side's #3 \("B one"\) as #6/);
    // What is left is what the person should know: this clone has no hooks (and the fix, tasks init --git).
    expect(fixed.stdout).toMatch(/1 problem left for a person/);
    git(dir, 'commit', '-q', '-m', 'tasks doctor --fix');
    expectBothSides(dir, /this clone lacks the git hooks that settle task ids .*\[merge_driver\]$/);
  });

  it('without the merge driver, git stops on the task files, and tasks doctor --fix (then git commit) settles the board', async () => {
    fixture = await createRemote({ prefix: 'dotasks-branches-' });
    const dir = fixture.clone('repo');
    ok(dir, ['init']);
    commit(dir, 'tasks init');
    twoBranches(dir);
    git(dir, 'merge', '-q', '--no-edit', 'feature-a');
    expect(() => git(dir, 'merge', '--no-edit', 'feature-b')).toThrow();
    const listed = tasks(dir, ['list']);
    expect(listed.stderr).toMatch(/a merge is stopped half way: tasks doctor --fix merges the board of both sides, then finish the merge/);
    const fixed = tasks(dir, ['doctor', '--fix']);
    expect(fixed.code, fixed.stdout).toBe(0);
    expect(git(dir, 'diff', '--name-only', '--diff-filter=U')).toBe('');
    git(dir, 'commit', '-q', '--no-edit');
    expectBothSides(dir);
  });

  it('a clash a person settled by hand (keeping one side) is never "fixed" by wiring the other side\'s edge to the task that kept the id', async () => {
    fixture = await createRemote({ prefix: 'dotasks-branches-' });
    const dir = fixture.clone('repo');
    ok(dir, ['init']);
    ok(dir, ['create', 'Existing']);
    commit(dir, 'board');
    git(dir, 'checkout', '-q', '-b', 'a');
    ok(dir, ['create', 'A two']);
    commit(dir, 'a');
    git(dir, 'checkout', '-q', 'main');
    git(dir, 'checkout', '-q', '-b', 'b');
    ok(dir, ['create', 'B two']);
    ok(dir, ['create', 'B three', '--blocked-by', '2']);
    commit(dir, 'b');
    git(dir, 'checkout', '-q', 'a');
    expect(() => git(dir, 'merge', '--no-edit', 'b')).toThrow();
    git(dir, 'checkout', '--ours', '--', '.tasks/task_2.json', '.tasks/.highwatermark');
    commit(dir, 'kept ours');
    const before = readBoard(dir);
    const doctor = tasks(dir, ['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(
      /#3 is blocked by #2, but #2 does not list #3 in "blocks" \[one_sided_edge\]\n {2}fix: task_2\.json was created twice in git's history/,
    );
    expect(doctor.stdout).not.toMatch(/add the missing side/);
    tasks(dir, ['doctor', '--fix']);
    expect(readBoard(dir).bySubject.get('A two')!.blocks).toEqual(before.bySubject.get('A two')!.blocks);
  });
});
