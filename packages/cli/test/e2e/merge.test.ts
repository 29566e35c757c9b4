import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { claimWithWorktree, TaskStore } from '@dotasks/core';
import { createBoardSource } from '@dotasks/terminal-board';
import { createBoardFeed, type WebState } from '@dotasks/web';
import { readTaskFile, tasks } from '../helpers.js';
import { git, readEventLog, startTasks, tempRepo, type TasksProcess } from '../agents-helpers.js';

/**
 * The way back to main (docs/protocol.md, "The way back to main"), with
 * real git and real `tasks` processes: branch status in `tasks worktree
 * list`, `tasks merge` one at a time through the merge slot (and a slot
 * whose holder froze and died taken over), a conflict that changes nothing,
 * the rebase strategy, and merged-means-done after a person's `git merge`,
 * with the watcher running and without (on a board that requires review
 * too).
 */

const IDENTITY = {
  GIT_AUTHOR_NAME: 'dotasks test',
  GIT_AUTHOR_EMAIL: 'test@dotasks.invalid',
  GIT_COMMITTER_NAME: 'dotasks test',
  GIT_COMMITTER_EMAIL: 'test@dotasks.invalid',
};

let cleanup = () => {};
const running: TasksProcess[] = [];
afterEach(() => {
  for (const p of running.splice(0)) p.child.kill('SIGKILL');
  cleanup();
  cleanup = () => {};
});

type Repo = ReturnType<typeof tempRepo>;

function repo(config: Record<string, unknown> = {}): Repo {
  const r = tempRepo();
  cleanup = r.cleanup;
  writeFileSync(join(r.board, 'config.json'), JSON.stringify(config, null, 2) + '\n');
  return r;
}

function ok(cwd: string, args: string[]): string {
  const r = tasks(cwd, args, IDENTITY);
  expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Creates task `subject`, claims it with a worktree for `owner`, and commits `files` on its branch. */
function taskWithWork(r: Repo, subject: string, owner: string, files: Record<string, string>): { id: number; path: string } {
  const id = (JSON.parse(ok(r.repo, ['create', subject, '--json'])) as { task: { id: number } }).task.id;
  const claim = JSON.parse(ok(r.repo, ['claim', String(id), '--worktree', '--owner', owner, '--json'])) as { worktree: { path: string } };
  const path = claim.worktree.path;
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text);
  git(path, ['add', '-A']);
  git(path, ['commit', '-q', '-m', `${subject}: the work`]);
  return { id, path };
}

function sha(cwd: string, rev: string): string {
  return git(cwd, ['rev-parse', rev]).trim();
}

interface ListedWorktree {
  task: number;
  branchStatus?: { target: string; ahead: number; behind: number; clean: boolean; merged: boolean; exists: boolean };
}

function worktreeStatus(r: Repo, id: number): { json: ListedWorktree['branchStatus']; line: string } {
  const json = (JSON.parse(ok(r.repo, ['worktree', 'list', '--json'])) as { worktrees: ListedWorktree[] }).worktrees.find((w) => w.task === id);
  const line = ok(r.repo, ['worktree', 'list'])
    .split('\n')
    .find((l) => l.startsWith(`#${id} `))!;
  return { json: json?.branchStatus, line };
}

describe('branch status', () => {
  it('tasks worktree list shows each branch ahead of and behind main, whether it merges cleanly, and once merged, merged', () => {
    const r = repo();
    ok(r.repo, ['create', 'parser']);
    ok(r.repo, ['claim', '1', '--worktree', '--owner', 'alice']);
    // Made from main and not worked on yet: nothing to merge, and not "merged" either.
    expect(worktreeStatus(r, 1).json).toEqual({ branch: 'task/1', target: 'main', exists: true, ahead: 0, behind: 0, clean: true, merged: false });
    expect(worktreeStatus(r, 1).line).toMatch(/→ main: ahead 0 · behind 0 · nothing to merge$/);

    const path = join(r.root, 'repo.worktrees', 'task-1');
    writeFileSync(join(path, 'parser.txt'), 'parse\n');
    git(path, ['add', '-A']);
    git(path, ['commit', '-q', '-m', 'parser']);
    writeFileSync(join(r.repo, 'other.txt'), 'other\n');
    git(r.repo, ['add', 'other.txt']);
    git(r.repo, ['commit', '-q', '-m', 'other work on main']);
    expect(worktreeStatus(r, 1).json).toMatchObject({ ahead: 1, behind: 1, clean: true, merged: false });
    expect(worktreeStatus(r, 1).line).toMatch(/→ main: ahead 1 · behind 1 · clean$/);

    // Main changes the file the branch changed: it no longer merges cleanly.
    writeFileSync(join(r.repo, 'parser.txt'), 'something else\n');
    git(r.repo, ['add', 'parser.txt']);
    git(r.repo, ['commit', '-q', '-m', 'parser on main']);
    expect(worktreeStatus(r, 1).json).toMatchObject({ ahead: 1, behind: 2, clean: false, merged: false });
    expect(worktreeStatus(r, 1).line).toMatch(/→ main: ahead 1 · behind 2 · conflicts$/);

    // Resolved on the branch, then merged into main by a person: merged.
    git(path, ['merge', '-q', '-X', 'ours', '--no-edit', 'main']);
    git(r.repo, ['merge', '-q', '--no-edit', 'task/1']);
    expect(worktreeStatus(r, 1).json).toMatchObject({ ahead: 0, behind: 0, merged: true });
    expect(worktreeStatus(r, 1).line).toMatch(/→ main: merged$/);
    // mergedMeansDone is off: the task is left as it is.
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'in_progress' });
  });

  it("the boards' data carry it: the task panel of tasks serve and the detail of tasks board", async () => {
    const r = repo();
    taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const store = new TaskStore(r.board);
    const feed = createBoardFeed(store, { actor: 'tester' });
    const web = (JSON.parse(feed.stateJson()) as WebState).tasks.find((t) => t.id === 1);
    feed.close();
    expect(web?.branchStatus).toEqual({
      target: 'main',
      exists: true,
      ahead: 1,
      behind: 0,
      clean: true,
      merged: false,
      summary: 'ahead 1 · behind 0 · clean',
      short: '↑1 ↓0',
    });
    const source = createBoardSource(store);
    expect(source.get().branches?.get(1)).toMatchObject({ branch: 'task/1', target: 'main', ahead: 1, behind: 0, clean: true, merged: false });
    await source.close();
  });
});

/** A check script for config.json's "verify": appends `start ID` / `end ID` to `log`, waiting in between for `go` to exist. */
function loggingCheck(r: Repo): { log: string; go: string } {
  const log = join(r.root, 'checks.log');
  const go = join(r.root, 'go');
  const script = join(r.root, 'check.sh');
  // The wait is a poll for a file the test makes: the check holds the slot until the test lets it go.
  writeFileSync(script, `echo "start $TASK_ID" >> '${log}'\nwhile [ ! -f '${go}' ]; do sleep 0.02; done\necho "end $TASK_ID" >> '${log}'\n`);
  writeFileSync(join(r.board, 'config.json'), JSON.stringify({ verify: `sh '${script}'` }) + '\n');
  return { log, go };
}

function readLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

describe('tasks merge', () => {
  it('two merges at once go one after the other: the second waits for the slot, says so, and merges after the first', async () => {
    const r = repo();
    const { log, go } = loggingCheck(r);
    const one = taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const two = taskWithWork(r, 'emitter', 'bob', { 'emitter.txt': 'emit\n' });
    const before = sha(r.repo, 'main');
    const merges = new Map([
      [one.id, startTasks(r.repo, ['merge', String(one.id), '--owner', 'alice'], IDENTITY)],
      [two.id, startTasks(r.repo, ['merge', String(two.id), '--owner', 'bob'], IDENTITY)],
    ]);
    running.push(...merges.values());
    // One of them holds the slot (its check started); the other waits, and says whom for after a second.
    await vi.waitFor(() => expect(readLines(log)).toHaveLength(1), { timeout: 30_000, interval: 20 });
    const first = Number(readLines(log)[0].split(' ')[1]);
    const second = first === one.id ? two.id : one.id;
    const firstOwner = first === one.id ? 'alice' : 'bob';
    await vi.waitFor(() => expect(merges.get(second)!.stderr()).toContain('waiting for the merge slot'), { timeout: 30_000, interval: 20 });
    expect(merges.get(second)!.stderr().trim()).toBe(
      `tasks: waiting for the merge slot held by pid ${merges.get(first)!.child.pid} (${firstOwner}, merging #${first})…`,
    );
    expect(readLines(log)).toEqual([`start ${first}`]);
    writeFileSync(go, '');
    const [a, b] = await Promise.all([merges.get(one.id)!.done, merges.get(two.id)!.done]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);

    // The checks ran one after the other, and main's history holds the merges in that order.
    expect(readLines(log)).toEqual([`start ${first}`, `end ${first}`, `start ${second}`, `end ${second}`]);
    const history = git(r.repo, ['log', '--first-parent', '--format=%s', `${before}..main`])
      .trim()
      .split('\n');
    expect(history).toEqual([
      `Merge task/${second} into main: #${second} ${second === one.id ? 'parser' : 'emitter'}`,
      expect.stringContaining(`task/${first}`),
    ]);
    expect(git(r.repo, ['show', 'main:parser.txt'])).toBe('parse\n');
    expect(git(r.repo, ['show', 'main:emitter.txt'])).toBe('emit\n');
    for (const { id, path } of [one, two]) {
      expect(readTaskFile(r.board, id)).toMatchObject({ status: 'completed', metadata: { branch: `task/${id}`, merged: { into: 'main' } } });
      expect(existsSync(path)).toBe(false);
    }
    expect(git(r.repo, ['branch', '--list', 'task/*']).trim()).toBe('');
    // The main worktree was moved along with main: the merged files are there, nothing else changed.
    expect(readFileSync(join(r.repo, 'parser.txt'), 'utf8')).toBe('parse\n');
    expect(git(r.repo, ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!.tasks']).trim()).toBe('');
  });

  it('a merger frozen inside the slot and then killed loses it: the next merge takes it over and merges; the killed one changed nothing', async () => {
    const r = repo();
    const hold = join(r.root, 'hold');
    const frozen = join(r.root, 'frozen');
    const script = join(r.root, 'check.sh');
    // The first check to run finds `hold`, writes its pid and stays (the test kills it); the others pass.
    writeFileSync(script, `if [ -f '${hold}' ]; then rm '${hold}'; echo $$ > '${frozen}'; while :; do sleep 0.02; done; fi\n`);
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ verify: `sh '${script}'`, staleLockSeconds: 2 }) + '\n');
    writeFileSync(hold, '');
    const one = taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const two = taskWithWork(r, 'emitter', 'bob', { 'emitter.txt': 'emit\n' });
    const before = sha(r.repo, 'main');
    const tipOne = sha(r.repo, 'task/1');

    const stuck = startTasks(r.repo, ['merge', '1', '--owner', 'alice'], IDENTITY);
    running.push(stuck);
    await vi.waitFor(() => expect(existsSync(frozen) && readFileSync(frozen, 'utf8').trim() !== '').toBe(true), { timeout: 30_000, interval: 20 });
    stuck.child.kill('SIGSTOP');
    const next = startTasks(r.repo, ['merge', '2', '--owner', 'bob'], IDENTITY);
    running.push(next);
    await vi.waitFor(() => expect(next.stderr()).toContain(`waiting for the merge slot held by pid ${stuck.child.pid} (alice, merging #1)`), {
      timeout: 30_000,
      interval: 20,
    });
    stuck.child.kill('SIGKILL');
    process.kill(Number(readFileSync(frozen, 'utf8').trim()), 'SIGKILL');
    const merged = await next.done;
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stdout).toContain(`merged task/2 into main`);

    // Main moved once, for #2; #1's branch, worktree and task are as they were.
    expect(git(r.repo, ['log', '--first-parent', '--format=%s', `${before}..main`]).trim()).toBe('Merge task/2 into main: #2 emitter');
    expect(sha(r.repo, 'task/1')).toBe(tipOne);
    expect(existsSync(one.path)).toBe(true);
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice' });
    expect(readTaskFile(r.board, 2)).toMatchObject({ status: 'completed' });
    expect(existsSync(two.path)).toBe(false);
    // The killed merger's scratch checkout went with the takeover; #1 merges now.
    expect(
      git(r.repo, ['worktree', 'list'])
        .split('\n')
        .filter((l) => l.includes('dotasks-merge-')),
    ).toEqual([]);
    ok(r.repo, ['merge', '1', '--owner', 'alice']);
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'completed' });
  });

  it('a conflicting branch stops with one line and exit 1: main, the branch, the worktree and the board as they were, no check run', () => {
    const r = repo();
    const checked = join(r.root, 'checked');
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ verify: `touch '${checked}'` }) + '\n');
    const one = taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse one way\n' });
    writeFileSync(join(r.repo, 'parser.txt'), 'parse another way\n');
    git(r.repo, ['add', 'parser.txt']);
    git(r.repo, ['commit', '-q', '-m', 'parser on main']);
    const main = sha(r.repo, 'main');
    const tip = sha(r.repo, 'task/1');
    const file = readFileSync(join(r.board, 'task_1.json'), 'utf8');

    const r1 = tasks(r.repo, ['merge', '1', '--owner', 'alice'], IDENTITY);
    expect(r1.code).toBe(1);
    expect(r1.stdout).toBe('');
    expect(r1.stderr).toBe(
      "tasks: task/1 of #1 conflicts with main in parser.txt; nothing was changed: in its worktree run 'git merge main', resolve and commit, then 'tasks merge 1' again\n",
    );
    expect(sha(r.repo, 'main')).toBe(main);
    expect(sha(r.repo, 'task/1')).toBe(tip);
    expect(readFileSync(join(r.board, 'task_1.json'), 'utf8')).toBe(file);
    expect(readFileSync(join(r.repo, 'parser.txt'), 'utf8')).toBe('parse another way\n');
    expect(existsSync(join(r.repo, '.git', 'MERGE_HEAD'))).toBe(false);
    expect(existsSync(one.path)).toBe(true);
    expect(existsSync(checked)).toBe(false);
    expect(
      git(r.repo, ['worktree', 'list'])
        .split('\n')
        .filter((l) => l.includes('dotasks-merge-')),
    ).toEqual([]);
    // --json: the stable code.
    const r2 = tasks(r.repo, ['merge', '1', '--owner', 'alice', '--json'], IDENTITY);
    expect(r2.code).toBe(1);
    expect(JSON.parse(r2.stdout)).toMatchObject({ error: { code: 'E_CONFLICT' } });
  });

  it('a check that fails on the merged result leaves main where it was and the task in progress', () => {
    const r = repo({ verify: 'test ! -f parser.txt || { echo "parser.txt is not allowed"; exit 3; }' });
    taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const main = sha(r.repo, 'main');
    const failed = tasks(r.repo, ['merge', '1', '--owner', 'alice'], IDENTITY);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toBe(
      `tasks: the check "test ! -f parser.txt || { echo \\"parser.txt is not allowed\\"; exit 3; }" failed on #1 merged into main (exit 3): parser.txt is not allowed; main was left as it was: fix it on task/1, then 'tasks merge 1' again\n`,
    );
    expect(sha(r.repo, 'main')).toBe(main);
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'in_progress' });
    // Someone else's task needs --force.
    const other = tasks(r.repo, ['merge', '1', '--owner', 'bob'], IDENTITY);
    expect(other.code).toBe(1);
    expect(other.stderr).toBe('tasks: task #1 belongs to alice; only they merge it, or add --force\n');
  });

  it("a task's own check replaces the board's, and runs on the merged result, not on the branch alone", () => {
    // main gains a file after the branch was made: the merged result has it, the branch does not.
    const r = repo({ verify: 'false' });
    const id = (JSON.parse(ok(r.repo, ['create', 'parser', '--verify', 'test -f later.txt && test -f parser.txt', '--json'])) as { task: { id: number } }).task
      .id;
    const claim = JSON.parse(ok(r.repo, ['claim', String(id), '--worktree', '--owner', 'alice', '--json'])) as { worktree: { path: string } };
    writeFileSync(join(claim.worktree.path, 'parser.txt'), 'parse\n');
    git(claim.worktree.path, ['add', '-A']);
    git(claim.worktree.path, ['commit', '-q', '-m', 'parser']);
    writeFileSync(join(r.repo, 'later.txt'), 'later\n');
    git(r.repo, ['add', 'later.txt']);
    git(r.repo, ['commit', '-q', '-m', 'later on main']);
    const merged = JSON.parse(ok(r.repo, ['merge', String(id), '--owner', 'alice', '--json'])) as { check: { command: string; passed: boolean } };
    expect(merged.check).toMatchObject({ command: 'test -f later.txt && test -f parser.txt', passed: true });
    expect(readTaskFile(r.board, id)).toMatchObject({ status: 'completed' });
  });

  it('"mergeStrategy": "rebase": a branch behind main is replayed onto it, checked there, and main moves on in a line holding its commits', async () => {
    const r = repo({ mergeStrategy: 'rebase', verify: 'test -f later.txt && test -f parser.txt' });
    const store = new TaskStore(r.board);
    await taskWithWorkInProcess(r, store, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const path = join(r.root, 'repo.worktrees', 'task-1');
    writeFileSync(join(path, 'parser.txt'), 'parse more\n');
    git(path, ['commit', '-q', '-am', 'parser: more']);
    const branchTip = sha(r.repo, 'task/1');
    const before = sha(r.repo, 'main');
    moveMain(r, 'later.txt');
    const later = sha(r.repo, 'main');
    const merged = ok(r.repo, ['merge', '1', '--owner', 'alice']);
    const main = sha(r.repo, 'main');
    expect(merged.split('\n')[0]).toBe(
      `merged task/1 into main (rebased onto it, ${main.slice(0, 12)}) after "test -f later.txt && test -f parser.txt" passed on the result`,
    );
    // A line: no merge commit, main's commit and then the task's two, replayed on top of it (new commits, not the branch's).
    expect(git(r.repo, ['rev-list', '--merges', `${before}..main`]).trim()).toBe('');
    expect(
      git(r.repo, ['log', '--format=%s', `${before}..main`])
        .trim()
        .split('\n'),
    ).toEqual(['parser: more', 'parser: the work', 'later.txt on main']);
    expect(sha(r.repo, 'main~2')).toBe(later);
    expect(spawnSync('git', ['merge-base', '--is-ancestor', branchTip, 'main'], { cwd: r.repo }).status).toBe(1);
    expect(git(r.repo, ['show', 'main:parser.txt'])).toBe('parse more\n');
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'completed', metadata: { merged: { into: 'main', commit: main } } });
    expect(git(r.repo, ['branch', '--list', 'task/*']).trim()).toBe('');
    expect(existsSync(path)).toBe(false);
  });
});

describe('tasks merge of work that requires review', () => {
  const events = (r: Repo) =>
    readFileSync(join(r.board, '.runtime', 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; task?: number; owner?: string });

  it("is its approval when someone other than its owner merges it: one completion, approved and merged; its owner's merge changes nothing", () => {
    const r = repo({ review: true, verify: 'test -f parser.txt' });
    taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const main = sha(r.repo, 'main');
    // Still being worked on: nobody lands it before its review.
    const early = tasks(r.repo, ['merge', '1', '--owner', 'alice', '--force'], IDENTITY);
    expect(early.code).toBe(1);
    expect(early.stderr).toBe(
      "tasks: task #1 requires review and is in progress: its owner finishes it first ('tasks done 1'), then someone other than alice merges it\n",
    );
    expect(ok(r.repo, ['done', '1', '--owner', 'alice'])).toContain('waits for review');
    const waiting = readFileSync(join(r.board, 'task_1.json'), 'utf8');

    const own = tasks(r.repo, ['merge', '1', '--owner', 'alice', '--json'], IDENTITY);
    expect(own.code).toBe(1);
    expect(own.stderr).toBe("tasks: task #1 is alice's own work waiting for review: someone other than alice merges it, which approves it\n");
    expect(JSON.parse(own.stdout)).toMatchObject({ error: { code: 'E_OWN_REVIEW' } });
    expect(sha(r.repo, 'main')).toBe(main);
    expect(readFileSync(join(r.board, 'task_1.json'), 'utf8')).toBe(waiting);

    const merged = ok(r.repo, ['merge', '1', '--owner', 'bob']);
    expect(merged).toContain('completed #1: parser, approved by bob');
    expect(readTaskFile(r.board, 1)).toMatchObject({
      status: 'completed',
      owner: 'alice',
      review: { state: 'approved', by: 'bob' },
      metadata: { merged: { into: 'main', commit: sha(r.repo, 'main') } },
    });
    expect(git(r.repo, ['show', 'main:parser.txt'])).toBe('parse\n');
    const mine = events(r).filter((e) => e.task === 1);
    expect(mine.filter((e) => e.type === 'completed')).toHaveLength(1);
    expect(mine.filter((e) => e.type === 'review.approved')).toEqual([expect.objectContaining({ owner: 'bob' })]);
  });

  it('a conflict leaves it waiting for review, as it was', () => {
    const r = repo({ review: true });
    taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse one way\n' });
    ok(r.repo, ['done', '1', '--owner', 'alice']);
    writeFileSync(join(r.repo, 'parser.txt'), 'parse another way\n');
    git(r.repo, ['add', 'parser.txt']);
    git(r.repo, ['commit', '-q', '-m', 'parser on main']);
    const waiting = readFileSync(join(r.board, 'task_1.json'), 'utf8');
    const conflict = tasks(r.repo, ['merge', '1', '--owner', 'bob', '--json'], IDENTITY);
    expect(conflict.code).toBe(1);
    expect(JSON.parse(conflict.stdout)).toMatchObject({ error: { code: 'E_CONFLICT' } });
    expect(readFileSync(join(r.board, 'task_1.json'), 'utf8')).toBe(waiting);
  });
});

/** As taskWithWork, in process (creation and the claim are not the subject): task `subject`, claimed with a worktree for `owner`, with a commit. */
async function taskWithWorkInProcess(r: Repo, store: TaskStore, subject: string, owner: string, files: Record<string, string>): Promise<number> {
  const { task } = await store.createTask({ subject }, { actor: owner });
  const claim = await claimWithWorktree(store, task.id, { owner });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(claim.worktree.path, name), text);
  git(claim.worktree.path, ['add', '-A']);
  git(claim.worktree.path, ['commit', '-q', '-m', `${subject}: the work`]);
  return task.id;
}

/** A commit on main that no task branch holds: the target moves. */
function moveMain(r: Repo, name: string): void {
  writeFileSync(join(r.repo, name), `${name}\n`);
  git(r.repo, ['add', name]);
  git(r.repo, ['commit', '-q', '-m', `${name} on main`]);
}

describe('merged means done', () => {
  it('without a watcher: after a person merges the branch, the next tasks list shows the task completed and its dependent ready', () => {
    const r = repo({ mergedMeansDone: true });
    taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    ok(r.repo, ['create', 'emitter', '--blocked-by', '1']);
    // A branch made from main and not worked on yet is not "merged": its task stays in progress.
    ok(r.repo, ['create', 'docs']);
    ok(r.repo, ['claim', '3', '--worktree', '--owner', 'carol']);
    const status = () =>
      Object.fromEntries(
        (JSON.parse(ok(r.repo, ['list', '--json'])).tasks as { id: number; status: string; ready: boolean }[]).map((t) => [
          t.id,
          `${t.status}${t.ready ? ' ready' : ''}`,
        ]),
      );
    expect(status()).toEqual({ 1: 'in_progress', 2: 'pending', 3: 'in_progress' });

    git(r.repo, ['merge', '-q', '--no-edit', 'task/1']);
    const listed = tasks(r.repo, ['list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toBe('tasks: completed #1: its branch task/1 is merged ("mergedMeansDone" in config.json)\n');
    expect(listed.stdout).toContain('[x] #1: parser');
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'completed', metadata: { merged: { into: 'main', commit: sha(r.repo, 'main') } } });
    expect(status()).toEqual({ 1: 'completed', 2: 'pending ready', 3: 'in_progress' });
    // Said once: the next look finds main where it was and asks git nothing.
    expect(tasks(r.repo, ['list']).stderr).toBe('');
  });

  it('a worker looks before it claims: the dependent of a task merged by a person is claimed and worked', () => {
    const r = repo({ mergedMeansDone: true });
    taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    ok(r.repo, ['create', 'emitter', '--blocked-by', '1']);
    git(r.repo, ['merge', '-q', '--no-edit', 'task/1']);
    const worker = tasks(r.repo, ['worker', '--owner', 'bob', '--max-tasks', '1', '--idle-exit', '1', '--', 'true'], IDENTITY);
    expect(worker.code, worker.stderr).toBe(0);
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'completed', owner: 'alice', metadata: { merged: { into: 'main' } } });
    expect(readTaskFile(r.board, 2)).toMatchObject({ status: 'completed', owner: 'bob' });
  });

  it('with tasks watch running: a person merges the branch, and the watcher completes the task', async () => {
    const r = repo({ mergedMeansDone: true });
    taskWithWork(r, 'parser', 'alice', { 'parser.txt': 'parse\n' });
    const watcher = startTasks(r.repo, ['watch']);
    running.push(watcher);
    await vi.waitFor(() => expect(watcher.stderr()).toContain('watching'), { timeout: 30_000, interval: 20 });
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'in_progress' });
    git(r.repo, ['merge', '-q', '--no-edit', 'task/1']);
    await vi.waitFor(() => expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'completed', metadata: { merged: { into: 'main' } } }), {
      timeout: 30_000,
      interval: 20,
    });
    await vi.waitFor(() => expect(watcher.stderr()).toContain('completed #1: its branch task/1 is merged'), { timeout: 30_000, interval: 20 });
  });

  describe('on a board that requires review', () => {
    /** Alice's #1 in progress and Bob's #2 waiting for review, each with a commit; #3 waits for #1. */
    async function reviewBoard(): Promise<{ r: Repo; store: TaskStore }> {
      const r = repo({ review: true, mergedMeansDone: true });
      const store = new TaskStore(r.board);
      await taskWithWorkInProcess(r, store, 'parser', 'alice', { 'parser.txt': 'parse\n' });
      await taskWithWorkInProcess(r, store, 'emitter', 'bob', { 'emitter.txt': 'emit\n' });
      await store.completeTask(2, { actor: 'bob' });
      await store.createTask({ subject: 'docs', blockedBy: [1] }, { actor: 'carol' });
      expect(readTaskFile(r.board, 2)).toMatchObject({ status: 'in_progress', review: { state: 'waiting' } });
      return { r, store };
    }

    /** A task waiting for review whose branch main holds; `commit`, main when the look saw it, when the test knows it. */
    const waitsForReview = (owner: string, commit: string = expect.any(String) as string) => ({
      status: 'in_progress',
      owner,
      review: { state: 'waiting' },
      metadata: { merged: { into: 'main', commit } },
    });

    it("without a watcher: a person's merge is no verdict; each task waits for review, tasks list says so once, and a rejection stands", async () => {
      const { r, store } = await reviewBoard();
      git(r.repo, ['merge', '-q', '--no-edit', 'task/1']);
      git(r.repo, ['merge', '-q', '--no-edit', 'task/2']);
      const listed = tasks(r.repo, ['list']);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stderr).toBe(
        "tasks: #1's branch task/1 is merged into main; it waits for review ('tasks approve 1')\n" +
          "tasks: #2's branch task/2 is merged into main; it waits for review ('tasks approve 2')\n",
      );
      expect(readTaskFile(r.board, 1)).toMatchObject(waitsForReview('alice', sha(r.repo, 'main')));
      expect(readTaskFile(r.board, 2)).toMatchObject(waitsForReview('bob', sha(r.repo, 'main')));
      expect(readTaskFile(r.board, 3)).toMatchObject({ status: 'pending', blockedBy: [1] });
      const log = () => readEventLog(r.board).filter((e) => e.task === 1 || e.task === 2);
      expect(log().filter((e) => e.type === 'completed')).toEqual([]);
      expect(
        log()
          .filter((e) => e.type === 'review.waiting')
          .map((e) => e.task),
      ).toEqual([2, 1]);

      // Said once: main moving on does not say it again, and a task sent back is not put back into review by the merge it already had.
      await store.rejectTask(1, { actor: 'carol', note: 'needs tests' });
      moveMain(r, 'later.txt');
      const again = tasks(r.repo, ['list']);
      expect(again.stderr).toBe('');
      expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'pending', owner: 'alice', review: { state: 'rejected', by: 'carol' } });
      expect(log().filter((e) => e.type === 'review.waiting')).toHaveLength(2);
    });

    it('with tasks watch running: the watcher says the merged tasks wait for review, and completes neither', async () => {
      const { r } = await reviewBoard();
      const watcher = startTasks(r.repo, ['watch']);
      running.push(watcher);
      await vi.waitFor(() => expect(watcher.stderr()).toContain('watching'), { timeout: 30_000, interval: 20 });
      git(r.repo, ['merge', '-q', '--no-edit', 'task/1']);
      git(r.repo, ['merge', '-q', '--no-edit', 'task/2']);
      await vi.waitFor(
        () => {
          expect(watcher.stderr()).toContain("#1's branch task/1 is merged into main; it waits for review ('tasks approve 1')");
          expect(watcher.stderr()).toContain("#2's branch task/2 is merged into main; it waits for review ('tasks approve 2')");
        },
        { timeout: 30_000, interval: 20 },
      );
      // The watcher may look between the two merges: each task records the main that held it first.
      expect(readTaskFile(r.board, 1)).toMatchObject(waitsForReview('alice'));
      expect(readTaskFile(r.board, 2)).toMatchObject(waitsForReview('bob'));
      expect(watcher.stderr()).not.toContain('completed #');
      expect(readEventLog(r.board).filter((e) => e.type === 'completed')).toEqual([]);
    });
  });
});
