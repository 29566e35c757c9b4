import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore, resolveOwner } from '@dotasks/core';
import { isRunning } from '@dotasks/core/internal';
import { cleanEnv, createTasks, readTaskFile, tasks, tasksAsync, tempBoard } from '../helpers.js';
import { git, readEventLog, startTasks, tempRepo } from '../agents-helpers.js';

/** Generous: two cores are shared with other builds and tests. */
const WAIT = { timeout: 30_000, interval: 50 };

type Note = { at: string; owner: string; text: string };
const notesOf = (board: string, id: number) => (readTaskFile(board, id).notes ?? []) as Note[];
/** `tasks start ID --owner OWNER`, in process (a test's starting board; start has its own tests). */
const startAs = (board: string, id: number, owner: string) => new TaskStore(board).startTask(id, { owner, actor: owner });

describe('checks before done: tasks done runs the verify command (real processes)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('a failing check refuses done (exit 1, one line and the tail), leaves the task in progress with the tail in a note; --force completes it and says so', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const check = `for i in $(seq 1 60); do echo "line $i"; done; echo "2 tests failed" >&2; exit 3`;
    expect(tasks(t.root, ['create', 'Parse AST', '--verify', check]).code).toBe(0);
    await createTasks(t.board, [{ subject: 'Emit output', blockedBy: [1] }]);
    await startAs(t.board, 1, 'ann');

    const r = tasks(t.root, ['done', '1', '--owner', 'ann']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`tasks: checking #1: ${check} (in ${t.root})…`);
    expect(lines[1]).toBe(
      `tasks: the check of #1 failed (exit 3): ${check}; #1 stays in progress, with the end of the output in its notes (fix the work and run 'tasks done 1 --owner ann' again, or add --force to complete it without the check)`,
    );
    // The tail: the last 40 lines of the output, the end of it last.
    expect(lines.slice(2)).toHaveLength(40);
    expect(lines.slice(2, 4)).toEqual(['  | line 22', '  | line 23']);
    expect(lines.at(-1)).toBe('  | 2 tests failed');

    const task = readTaskFile(t.board, 1);
    expect(task).toMatchObject({ status: 'in_progress', owner: 'ann' });
    expect(readTaskFile(t.board, 2).blockedBy).toEqual([1]);
    const [note] = notesOf(t.board, 1);
    expect(note.owner).toBe('ann');
    expect(note.text.split('\n')[0]).toBe(`the check failed (exit 3): ${check}; its output ended:`);
    expect(note.text.split('\n').slice(1)).toEqual(lines.slice(2).map((l) => l.slice(4)));
    expect(readEventLog(t.board).filter((e) => e.type === 'verify.failed')).toMatchObject([{ task: 1, owner: 'ann', command: check, exitCode: 3 }]);

    const json = tasks(t.root, ['done', '1', '--owner', 'ann', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'E_VERIFY', task: 1, command: check, exitCode: 3, timedOut: false } });

    const forced = tasks(t.root, ['done', '1', '--owner', 'ann', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toBe(`check skipped (--force): ${check}; the task's notes say so\ncompleted #1: Parse AST\nunblocked #2: Emit output\n`);
    expect(readTaskFile(t.board, 1).status).toBe('completed');
    expect(notesOf(t.board, 1).at(-1)?.text).toBe(`completed without its check (forced): \`${check}\` was not run`);
  });

  it("a passing check completes the task and unblocks; the board's verify applies to a task without its own, which replaces it", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    writeFileSync(join(t.board, 'config.json'), JSON.stringify({ verify: 'test -f board-ok' }));
    await createTasks(t.board, ['Uses the board check', { subject: 'Has its own', verify: 'test -f own-ok' }, { subject: 'Waits', blockedBy: [1] }]);

    const refused = tasks(t.root, ['done', '1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('tasks: the check of #1 failed (exit 1): test -f board-ok; #1 stays pending');
    expect(readTaskFile(t.board, 1).status).toBe('pending');
    expect(tasks(t.root, ['show', '1']).stdout).toContain("  verify:      test -f board-ok (the board's)\n");

    writeFileSync(join(t.root, 'board-ok'), '');
    // #2's own check replaces the board's, which passes now.
    expect(tasks(t.root, ['done', '2']).code).toBe(1);
    const ok = tasks(t.root, ['done', '1']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^check passed in \d+\.\d s: test -f board-ok\ncompleted #1: Uses the board check\nunblocked #3: Waits\n$/);
    expect(readTaskFile(t.board, 3).blockedBy).toEqual([]);

    // Without its own check (`--verify ""` removes it), #2 has the board's, which passes.
    expect(tasks(t.root, ['update', '2', '--verify', '']).code).toBe(0);
    expect(readTaskFile(t.board, 2)).not.toHaveProperty('verify');
    const done2 = tasks(t.root, ['done', '2', '--json']);
    expect(done2.code, done2.stderr).toBe(0);
    expect(JSON.parse(done2.stdout)).toMatchObject({
      task: { id: 2, status: 'completed' },
      check: { command: 'test -f board-ok', cwd: t.root, passed: true, exitCode: 0 },
    });
  });

  it('a check that prints terminal escapes is shown sanitized: on stderr, in the note, in tasks show', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const check = String.raw`printf '\033]2;pwned\007\033[31mred\033[0m \033[2J\302\2331m bold\nnext\r\n\342\200\256evil\n'; exit 1`;
    await createTasks(t.board, [{ subject: 'Escapes', verify: check }]);
    const r = tasks(t.root, ['done', '1']);
    expect(r.code).toBe(1);
    // Nothing that acts on a terminal: no ESC, no C1 CSI, no bidi override.
    expect(r.stderr).not.toMatch(/[\u001b\u009b\u202e\u0007]/);
    expect(r.stderr).toContain('  | red  bold\n  | next\n  | \\u202eevil\n');
    const note = notesOf(t.board, 1)[0].text;
    expect(note).not.toMatch(/[\u001b\u009b\u202e\u0007\r]/);
    expect(note.endsWith('its output ended:\nred  bold\nnext\n\\u202eevil')).toBe(true);
    const shown = tasks(t.root, ['show', '1']).stdout;
    expect(shown).not.toMatch(/[\u001b\u009b\u202e\u0007]/);
    expect(shown).toContain('      red  bold\n');
  });

  it('a check that outlives verifyTimeoutSeconds is stopped, with everything it started, and counts as failed', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    writeFileSync(join(t.board, 'config.json'), JSON.stringify({ verifyTimeoutSeconds: 1 }));
    const pidFile = join(t.root, 'pid');
    await createTasks(t.board, [{ subject: 'Slow', verify: `echo started; sh -c 'echo $$ > ${pidFile}; exec sleep 60' & wait` }]);
    const r = tasks(t.root, ['done', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/tasks: the check of #1 failed \(timed out after \d+ s\)/);
    expect(r.stderr).toContain('  | started');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    // Stopped with the check's group (a zombie nobody reaped yet does not count).
    await vi.waitFor(() => expect(isRunning(pid)).toBe(false), WAIT);
    expect(readTaskFile(t.board, 1).status).toBe('pending');
  });

  it('a task released while its check runs is not completed by that check', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const started = join(t.root, 'started');
    const go = join(t.root, 'go');
    // The check says it started, then waits for the test (a poll on a file, not a sleep of the test's).
    await createTasks(t.board, [{ subject: 'Contested', verify: `touch ${started}; while [ ! -f ${go} ]; do sleep 0.05; done` }]);
    await startAs(t.board, 1, 'ann');
    const done = tasksAsync(t.root, ['done', '1', '--owner', 'ann']);
    await vi.waitFor(() => expect(existsSync(started)).toBe(true), WAIT);
    expect(tasks(t.root, ['release', '1', '--force', '--owner', 'bob']).code).toBe(0);
    writeFileSync(go, '');
    const r = await done;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('tasks: task #1 changed while its check ran (now pending); it was not completed');
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'pending', owner: '' });
  });

  it('done --result keeps a short result, shown by tasks show and exported; a result too long is refused with nothing written', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [
      { subject: 'Parse AST', verify: 'true' },
      { subject: 'Emit', blockedBy: [1] },
    ]);
    const before = readFileSync(join(t.board, 'task_1.json'), 'utf8');
    const long = tasks(t.root, ['done', '1', '--result', 'x'.repeat(2001)]);
    expect(long.code).toBe(1);
    expect(long.stderr).toBe('tasks: a result is a short summary of at most 2000 characters (this one has 2001); put the rest in a note or a file\n');
    expect(readFileSync(join(t.board, 'task_1.json'), 'utf8')).toBe(before);

    const r = tasks(t.root, ['done', '1', '--result', 'parse() returns an AST\nsee src/ast.ts']);
    expect(r.code, r.stderr).toBe(0);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', verify: 'true', result: 'parse() returns an AST\nsee src/ast.ts' });
    expect(tasks(t.root, ['show', '1']).stdout).toContain('  verify:      true\n  result:      parse() returns an AST\n               see src/ast.ts\n');
    const exported = JSON.parse(tasks(t.root, ['export']).stdout) as { tasks: Record<string, unknown>[] };
    expect(exported.tasks[0]).toMatchObject({ verify: 'true', result: 'parse() returns an AST\nsee src/ast.ts' });
    expect(exported.tasks[1]).not.toHaveProperty('verify');
  });

  it('export and import dotasks keep the check and the result; a Claude Code list, which has neither, imports as before', async () => {
    const t = tempBoard();
    const other = tempBoard();
    cleanup = () => {
      t.cleanup();
      other.cleanup();
    };
    await createTasks(t.board, [{ subject: 'Parse AST', verify: 'npm test -- parser' }, 'Plain']);
    await new TaskStore(t.board).finishTask(2, { actor: resolveOwner({ cwd: t.root, env: cleanEnv() }).owner, result: 'nothing to it' });
    writeFileSync(join(t.root, 'board.json'), tasks(t.root, ['export']).stdout);
    const r = tasks(other.root, ['import', 'dotasks', join(t.root, 'board.json')]);
    expect(r.code, r.stderr).toBe(0);
    expect(readTaskFile(other.board, 1)).toMatchObject({ subject: 'Parse AST', verify: 'npm test -- parser' });
    expect(readTaskFile(other.board, 2)).toMatchObject({ subject: 'Plain', status: 'completed', result: 'nothing to it' });

    const list = join(other.root, 'claude-list');
    mkdirSync(list);
    writeFileSync(join(list, '1.json'), JSON.stringify({ id: '1', subject: 'From Claude', description: '', status: 'pending', blocks: [], blockedBy: [] }));
    expect(tasks(other.root, ['import', 'claude', list]).code).toBe(0);
    const claude = readTaskFile(other.board, 3);
    expect(claude).toMatchObject({ subject: 'From Claude' });
    expect(Object.keys(claude)).not.toContain('verify');
    expect(Object.keys(claude)).not.toContain('result');
  });

  it('runs the check in the task worktree (claim --worktree), else at the top of the repository (real git)', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, [
      { subject: 'In a worktree', verify: 'pwd > "$TASKS_DIR/../where-1"; git rev-parse --abbrev-ref HEAD >> "$TASKS_DIR/../where-1"' },
      { subject: 'In the repository', verify: 'pwd > "$TASKS_DIR/../where-2"' },
    ]);
    const claim = tasks(r.repo, ['claim', '1', '--worktree', '--owner', 'agent-1']);
    expect(claim.code, claim.stderr).toBe(0);
    const worktree = readTaskFile(r.board, 1).metadata as { worktree: string };
    // From the worktree, done acts as its claimant.
    expect(tasks(worktree.worktree, ['done', '1']).code).toBe(0);
    expect(readFileSync(join(r.repo, 'where-1'), 'utf8')).toBe(`${worktree.worktree}\ntask/1\n`);
    expect(tasks(r.repo, ['done', '2']).code).toBe(0);
    expect(readFileSync(join(r.repo, 'where-2'), 'utf8')).toBe(`${r.repo}\n`);
  });
});

describe('checks before done and results in a worker (real processes, real git)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  /** A worker's --json events. */
  const eventsOf = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });

  it('a worker whose check fails leaves its task in progress with the tail in a note, and its dependents blocked', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, [
      { subject: 'Write the parser', verify: 'echo "FAIL parser.test.ts"; exit 1' },
      { subject: 'Use the parser', blockedBy: [1] },
    ]);
    const w = startTasks(r.repo, ['worker', '--worktree', '--owner', 'w1', '--json', '--', 'git commit -q --allow-empty -m "work on $TASK_ID"']);
    const done = await w.done;
    // It gave up on the task: exit 1, the task still its own, in progress.
    expect(done.code, done.stderr).toBe(1);
    const events = eventsOf(done.stdout);
    expect(events.filter((e) => e.type === 'task.verify_failed')).toMatchObject([
      { task: 1, command: 'echo "FAIL parser.test.ts"; exit 1', exitCode: 1, timedOut: false, retry: true },
      { task: 1, exitCode: 1, retry: false },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'worker.stopped', reason: 'verify_failed', completed: [], gaveUp: [1] });
    expect(done.stderr).toContain('the check kept failing on #1, which stays in progress for it');
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'in_progress', owner: 'w1' });
    const notes = notesOf(r.board, 1);
    expect(notes.map((n) => n.text)).toEqual([
      'the check failed (exit 1): echo "FAIL parser.test.ts"; exit 1; its output ended:\nFAIL parser.test.ts',
      'the check failed (exit 1): echo "FAIL parser.test.ts"; exit 1; its output ended:\nFAIL parser.test.ts',
    ]);
    expect(readTaskFile(r.board, 2)).toMatchObject({ status: 'pending', blockedBy: [1] });
    expect(tasks(r.repo, ['ready']).stdout).not.toContain('#2');
    // The work is on the task's branch, run twice: the first run, and the one after the failing check.
    expect(
      git(r.repo, ['log', '--format=%s', 'task/1'])
        .split('\n')
        .filter((l) => l.startsWith('work on')),
    ).toEqual(['work on 1', 'work on 1']);
  });

  it('the same worker with a passing check completes its task, with the result its command wrote, and unblocks; the dependent sees it in TASK_UPSTREAM', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ verify: 'git log -1 --format=%s | grep -q "work on"' }));
    await createTasks(r.board, ['Write the parser', 'Write the lexer', { subject: 'Use them', blockedBy: [1, 2] }]);
    const seen = join(r.root, 'upstream.jsonl');
    const command = [
      'git commit -q --allow-empty -m "work on $TASK_ID"',
      `[ "$TASK_ID" = 2 ] || printf 'done #%s: %s\\n' "$TASK_ID" "$TASK_SUBJECT" > "$TASK_RESULT_FILE"`,
      `printf '%s\\n' "$TASK_UPSTREAM" >> ${seen}`,
    ].join('; ');
    const w = startTasks(r.repo, ['worker', '--worktree', '--owner', 'w1', '--json', '--', command]);
    const done = await w.done;
    expect(done.code, done.stderr).toBe(0);
    const completed = eventsOf(done.stdout).filter((e) => e.type === 'task.completed');
    expect(completed.map((e) => [e.task, e.verify])).toEqual([
      [1, 'git log -1 --format=%s | grep -q "work on"'],
      [2, 'git log -1 --format=%s | grep -q "work on"'],
      [3, 'git log -1 --format=%s | grep -q "work on"'],
    ]);
    expect(completed[0]).toMatchObject({ unblocked: [], result: true });
    expect(completed[1]).toMatchObject({ unblocked: [3] });
    expect(completed[1]).not.toHaveProperty('result');
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'completed', result: 'done #1: Write the parser' });
    expect(readTaskFile(r.board, 2)).not.toHaveProperty('result');
    const upstream = readFileSync(seen, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(upstream).toEqual([
      [],
      [],
      [
        { id: 1, subject: 'Write the parser', result: 'done #1: Write the parser' },
        { id: 2, subject: 'Write the lexer', result: null },
      ],
    ]);
    // Every result file was the command's alone, and is gone.
    expect(readEventLog(r.board).filter((e) => e.type === 'verify.failed')).toEqual([]);
  });
});
