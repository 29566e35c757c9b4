import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TASKS_BIN, cleanEnv, readTaskFile, tasks } from '../helpers.js';

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
};

function git(cwd: string, args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: cleanEnv({ ...GIT_ENV, HOME: cwd }), timeout: 120_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function ok(cwd: string, args: string[]): string {
  const r = git(cwd, args);
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** Runs tasks and insists it succeeds. */
function run(cwd: string, args: string[]): string {
  const r = tasks(cwd, args);
  if (r.code !== 0) throw new Error(`tasks ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

describe('git: tasks merge-driver with real merges', () => {
  let repo = '';
  afterEach(() => {
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  /**
   * A repository with a board set up for git (four tasks, committed on main) and a branch `other`, made once
   * for the file (an init --git and four creates, half a second of CPU): each test starts from a copy.
   */
  let template = '';
  beforeAll(() => {
    template = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-git-')));
    ok(template, ['init', '-q', '-b', 'main']);
    const init = run(template, ['init', '--git']);
    expect(init).toContain('registered merge.dotasks.driver');
    for (const subject of ['Parse AST', 'Transform AST', 'Emit output', 'Run tests']) run(template, ['create', subject]);
    ok(template, ['add', '-A']);
    ok(template, ['commit', '-q', '-m', 'board']);
    ok(template, ['branch', 'other']);
  });
  afterAll(() => {
    if (template) rmSync(template, { recursive: true, force: true });
  });

  /** A copy of the template repository (git keeps nothing of its path). */
  function setup(): void {
    repo = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-git-')));
    cpSync(template, repo, { recursive: true });
  }

  function commitOn(branch: string, edit: () => void): void {
    ok(repo, ['checkout', '-q', branch]);
    edit();
    ok(repo, ['add', '-A']);
    ok(repo, ['commit', '-q', '-m', `edit on ${branch}`]);
  }

  it('init --git writes .tasks/.gitattributes and registers the driver with this node and bin', () => {
    setup();
    expect(readFileSync(join(repo, '.tasks', '.gitattributes'), 'utf8')).toContain('task_*.json merge=dotasks\n.highwatermark merge=dotasks\n');
    const driver = ok(repo, ['config', '--get', 'merge.dotasks.driver']).trim();
    expect(driver).toContain(process.execPath);
    expect(driver).toContain(realpathSync(TASKS_BIN));
    expect(driver.endsWith(' merge-driver %O %A %B %P')).toBe(true);
    expect(ok(repo, ['check-attr', 'merge', '--', '.tasks/task_1.json', '.tasks/.highwatermark'])).toBe(
      '.tasks/task_1.json: merge: dotasks\n.tasks/.highwatermark: merge: dotasks\n',
    );
    // Running it again is harmless and changes nothing in .gitattributes.
    expect(run(repo, ['init', '--git'])).toContain('kept');
    expect(git(repo, ['status', '--porcelain']).stdout).toBe('');
  });

  it('merges different fields of one task cleanly', () => {
    setup();
    commitOn('other', () => run(repo, ['update', '1', '--description', 'use the TypeScript compiler API']));
    commitOn('main', () => run(repo, ['update', '1', '--subject', 'Parse the AST', '--meta', 'priority=1']));
    const merge = git(repo, ['merge', '--no-edit', 'other']);
    expect(merge.code).toBe(0);
    expect(readTaskFile(repo + '/.tasks', 1)).toMatchObject({
      subject: 'Parse the AST',
      description: 'use the TypeScript compiler API',
      metadata: { priority: 1 },
    });
    // Canonical bytes: what tasks itself would write.
    const text = readFileSync(join(repo, '.tasks', 'task_1.json'), 'utf8');
    expect(text).toBe(JSON.stringify(JSON.parse(text), null, 2) + '\n');
    expect(tasks(repo, ['doctor']).code).toBe(0);
  });

  it('takes the union when both branches add edges to the same task', () => {
    setup();
    commitOn('other', () => run(repo, ['dep', 'add', '4', '2']));
    commitOn('main', () => run(repo, ['dep', 'add', '4', '3']));
    const merge = git(repo, ['merge', '--no-edit', 'other']);
    expect(merge.code).toBe(0);
    expect(readTaskFile(repo + '/.tasks', 4).blockedBy).toEqual([2, 3]);
    expect(readTaskFile(repo + '/.tasks', 2).blocks).toEqual([4]);
    expect(readTaskFile(repo + '/.tasks', 3).blocks).toEqual([4]);
    expect(tasks(repo, ['list']).stdout).toContain('[ ] #4: Run tests (blocked by: #2, #3)');
    expect(tasks(repo, ['doctor']).code).toBe(0);
  });

  it('keeps an edge removed on one side removed (a completion propagated on one branch)', () => {
    setup();
    commitOn('main', () => run(repo, ['dep', 'add', '4', '1']));
    ok(repo, ['checkout', '-q', 'other']);
    ok(repo, ['merge', '-q', '--no-edit', 'main']);
    commitOn('other', () => run(repo, ['done', '1']));
    commitOn('main', () => run(repo, ['dep', 'add', '4', '2']));
    expect(git(repo, ['merge', '--no-edit', 'other']).code).toBe(0);
    expect(readTaskFile(repo + '/.tasks', 4).blockedBy).toEqual([2]);
    expect(readTaskFile(repo + '/.tasks', 1).status).toBe('completed');
    expect(tasks(repo, ['doctor']).code).toBe(0);
  });

  it('reports the same field changed differently as a conflict with both values', () => {
    setup();
    commitOn('other', () => run(repo, ['update', '2', '--subject', 'Transform AST with codemods', '--description', 'theirs too']));
    commitOn('main', () => run(repo, ['update', '2', '--subject', 'Rewrite the AST']));
    const merge = git(repo, ['merge', '--no-edit', 'other']);
    expect(merge.code).not.toBe(0);
    const said = merge.stdout + merge.stderr;
    expect(said).toContain(
      'tasks merge-driver: .tasks/task_2.json: both sides changed "subject" differently: ours "Rewrite the AST", theirs "Transform AST with codemods" (was "Transform AST")',
    );
    expect(said).toContain('CONFLICT');
    expect(ok(repo, ['diff', '--name-only', '--diff-filter=U'])).toBe('.tasks/task_2.json\n');
    // Every cleanly merged field is in place; only the conflicted one carries markers.
    expect(readFileSync(join(repo, '.tasks', 'task_2.json'), 'utf8')).toMatchInlineSnapshot(`
      "{
        "id": 2,
      <<<<<<< ours
        "subject": "Rewrite the AST",
      =======
        "subject": "Transform AST with codemods",
      >>>>>>> theirs
        "description": "theirs too",
        "status": "pending",
        "owner": "",
        "blockedBy": [],
        "blocks": []
      }
      "
    `);
    // Until it is resolved, tools name the spot instead of acting on half a merge.
    const doctor = tasks(repo, ['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain('.tasks/task_2.json:3:1: unresolved merge conflict');
    // Keeping one side and deleting the markers leaves a valid task.
    const text = readFileSync(join(repo, '.tasks', 'task_2.json'), 'utf8');
    const resolved = text.replace(/<<<<<<< ours\n(.*\n)=======\n.*\n>>>>>>> theirs\n/, '$1');
    expect(JSON.parse(resolved)).toMatchObject({ subject: 'Rewrite the AST', description: 'theirs too' });
  });

  it('merges .highwatermark to the maximum, and a task created on both branches keeps both (the hook moves theirs)', () => {
    setup();
    commitOn('other', () => run(repo, ['create', 'Write docs']));
    commitOn('main', () => {
      run(repo, ['create', 'Benchmark']);
      run(repo, ['create', 'Release']);
    });
    const merge = git(repo, ['merge', '--no-edit', 'other']);
    expect(merge.code, merge.stderr).toBe(0);
    expect(merge.stderr).toContain('both sides created #5, as two different tasks ("Benchmark" here, "Write docs" there)');
    expect(merge.stderr).toContain('both sides had a #5: "Write docs" is #7 now');
    expect(readFileSync(join(repo, '.tasks', '.highwatermark'), 'utf8')).toBe('7\n');
    expect(readTaskFile(join(repo, '.tasks'), 5)).toMatchObject({ subject: 'Benchmark' });
    expect(readTaskFile(join(repo, '.tasks'), 7)).toMatchObject({ subject: 'Write docs' });
    expect(ok(repo, ['status', '--porcelain'])).toBe('');
  });

  it('works as a plain command on three files', () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-md-')));
    repo = dir;
    const write = (name: string, value: unknown) => {
      const path = join(dir, name);
      writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
      return path;
    };
    const base = write('O', '3\n');
    const ours = write('A', '5\n');
    const theirs = write('B', '4\n');
    const r = spawnSync(process.execPath, [TASKS_BIN, 'merge-driver', base, ours, theirs, '.tasks/.highwatermark'], { encoding: 'utf8', env: cleanEnv() });
    expect(r.status).toBe(0);
    expect(readFileSync(ours, 'utf8')).toBe('5\n');
  });
});
