import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { createTasks, readTaskFile, tasks, tasksAsync, tempBoard } from '../helpers.js';

interface Finding {
  code: string;
  file?: string;
  line?: number;
  column?: number;
  task?: number;
  cycle?: number[];
  message: string;
  fix: string;
  fixable: boolean;
}

/** A task file as a person might write it: any key order, any formatting. */
function task(id: number, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, subject: `Task ${id}`, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], ...fields };
}

/** Canonical bytes, as tasks writes them. */
function canonical(fields: Record<string, unknown>): string {
  return JSON.stringify(fields, null, 2) + '\n';
}

const HOUR_AGO = new Date(Date.now() - 3600_000);

describe('tasks doctor', () => {
  let root = '';
  let board = '';
  let cleanup = () => {};
  afterEach(() => cleanup());

  function setup(files: Record<string, string>, highwatermark?: number): void {
    const t = tempBoard();
    root = t.root;
    board = t.board;
    cleanup = t.cleanup;
    for (const [name, text] of Object.entries(files)) writeFileSync(join(board, name), text);
    const ids = Object.keys(files).map((n) => Number(/^task_(\d+)\.json$/.exec(n)?.[1] ?? 0));
    writeFileSync(join(board, '.highwatermark'), `${highwatermark ?? Math.max(0, ...ids)}\n`);
  }

  function diagnose(): { code: number; findings: Finding[]; stdout: string } {
    const r = tasks(root, ['doctor', '--json']);
    const out = JSON.parse(r.stdout) as { ok: boolean; findings: Finding[] };
    expect(out.ok).toBe(r.code === 0);
    return { code: r.code, findings: out.findings, stdout: r.stdout };
  }

  function fix(): { code: number; stdout: string; stderr: string } {
    return tasks(root, ['doctor', '--fix']);
  }

  const file = (name: string) => readFileSync(join(board, name), 'utf8');
  const codes = (fs: Finding[]) => fs.map((f) => f.code);

  it('says a healthy board is healthy and exits 0', async () => {
    setup({});
    // Made as 'tasks create' makes them, in process (create has its own tests).
    await createTasks(board, ['Parse AST', { subject: 'Transform AST', blockedBy: [1] }]);
    const r = tasks(root, ['doctor']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('the board is healthy (2 task files)');
  });

  it('points at JSON that does not parse, and never touches the file', () => {
    const text = '{\n  "id": 1,\n  "subject": "Parse AST",\n  "blockedBy": [2,],\n}\n';
    setup({ 'task_1.json': text });
    const d = diagnose();
    expect(d.code).toBe(1);
    expect(d.findings).toMatchObject([{ code: 'invalid_json', line: 4, column: 19, fixable: false, task: 1 }]);
    expect(d.findings[0].message).toContain("trailing comma before ']'");
    const r = fix();
    expect(r.code).toBe(1);
    expect(file('task_1.json')).toBe(text);
    expect(r.stdout).toContain('task_1.json:4:19: invalid JSON');
  });

  it('recognises unresolved merge conflict markers', () => {
    const text =
      '{\n  "id": 1,\n  "subject": "Parse AST",\n<<<<<<< ours\n  "status": "completed",\n=======\n  "status": "pending",\n>>>>>>> theirs\n  "blockedBy": []\n}\n';
    setup({ 'task_1.json': text });
    const d = diagnose();
    expect(d.findings).toMatchObject([{ code: 'merge_conflict', line: 4, column: 1, fixable: false }]);
    expect(d.findings[0].fix).toContain('delete the marker lines');
    expect(fix().code).toBe(1);
    expect(file('task_1.json')).toBe(text);
  });

  it('reports every field of the wrong type or with an unknown status, each at its line', () => {
    const text = JSON.stringify({ id: 1, subject: 42, description: '', status: 'done', owner: null, blockedBy: {}, blocks: [] }, null, 2);
    setup({ 'task_1.json': text });
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.line, f.message])).toEqual([
      ['invalid_field', 3, '"subject" must be a non-empty string, got 42'],
      ['invalid_field', 5, 'unknown status "done"'],
      ['invalid_field', 7, '"blockedBy" must be an array of task ids, got {}'],
    ]);
    expect(d.findings[1].fix).toBe('set "status" to one of pending, in_progress, completed, deleted');
    expect(fix().code).toBe(1);
    expect(file('task_1.json')).toBe(text);
  });

  it('reports an id that differs from the file name, and two files with one id', () => {
    setup({
      'task_3.json': canonical(task(5)),
      'task_4.json': canonical(task(4)),
      'task_04.json': canonical(task(4, { subject: 'a copy' })),
    });
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.file?.split('/').pop(), f.line])).toEqual([
      ['bad_file_name', 'task_04.json', undefined],
      ['duplicate_id', 'task_04.json', 2],
      ['id_mismatch', 'task_3.json', 2],
    ]);
    expect(d.findings[2].message).toBe('"id" is 5 but the file name says 3');
    expect(d.findings[1].message).toBe('task_04.json and task_4.json both hold task #4');
    expect(fix().code).toBe(1);
    expect(file('task_3.json')).toBe(canonical(task(5)));
  });

  it('normalises edge ids written as strings ("2", "task_2", "#2") with their positions', () => {
    const text =
      '{\n  "id": 3,\n  "subject": "Run tests",\n  "description": "",\n  "status": "pending",\n  "owner": "",\n  "blockedBy": ["1", "task_2"],\n  "blocks": ["#4"]\n}\n';
    setup({
      'task_1.json': canonical(task(1, { blocks: [3] })),
      'task_2.json': canonical(task(2, { blocks: [3] })),
      'task_3.json': text,
      'task_4.json': canonical(task(4, { blockedBy: [3] })),
    });
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.line, f.column, f.message])).toEqual([
      ['string_id', 7, 17, '"blockedBy" holds the id "1" as a string'],
      ['string_id', 7, 22, '"blockedBy" holds the id "task_2" as a string'],
      ['string_id', 8, 14, '"blocks" holds the id "#4" as a string'],
    ]);
    // The strict parser refuses the file, and says which command fixes it.
    expect(tasks(root, ['show', '3']).stderr).toContain('tasks doctor --fix');
    const r = fix();
    expect(r.stdout).toContain('fixed .tasks/task_3.json: wrote edge ids as numbers');
    expect(r.code).toBe(0);
    expect(file('task_3.json')).toBe(canonical(task(3, { subject: 'Run tests', blockedBy: [1, 2], blocks: [4] })));
    expect(tasks(root, ['list']).stdout).toContain('[ ] #3: Run tests (blocked by: #1, #2)');
  });

  it('adds the missing side of one-sided edges, in both directions', () => {
    setup({
      'task_1.json': canonical(task(1, { blocks: [] })), // #2 says it waits for #1
      'task_2.json': canonical(task(2, { blockedBy: [1] })),
      'task_3.json': canonical(task(3, { blocks: [4] })), // #4 does not say it waits for #3
      'task_4.json': canonical(task(4)),
    });
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.task, f.message])).toEqual([
      ['one_sided_edge', 1, '#2 is blocked by #1, but #1 does not list #2 in "blocks"'],
      ['one_sided_edge', 4, '#3 lists #4 in "blocks", but #4 does not list #3 in "blockedBy"'],
    ]);
    expect(d.findings.every((f) => f.fixable)).toBe(true);
    const r = fix();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('fixed .tasks/task_1.json: added #2 to "blocks"');
    expect(r.stdout).toContain('fixed .tasks/task_4.json: added #3 to "blockedBy"');
    expect(readTaskFile(board, 1).blocks).toEqual([2]);
    expect(readTaskFile(board, 4).blockedBy).toEqual([3]);
    expect(diagnose().findings).toEqual([]);
    // Each repair is an event.
    const events = readFileSync(join(board, '.runtime', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; task: number });
    expect(events.filter((e) => e.type === 'repaired').map((e) => e.task)).toEqual([1, 4]);
  });

  it('never deletes an edge to a missing task by itself, and says which edge to remove', () => {
    setup({ 'task_2.json': canonical(task(2, { blockedBy: [9] })), 'task_3.json': canonical(task(3, { blocks: [8] })) });
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.fix])).toEqual([
      ['missing_task', 'remove the edge: tasks dep rm 2 9'],
      ['missing_task', 'remove the edge: tasks update 3 --remove-blocks 8'],
    ]);
    expect(fix().code).toBe(1);
    expect(readTaskFile(board, 2).blockedBy).toEqual([9]);
    // The suggested commands do fix it.
    expect(tasks(root, ['dep', 'rm', '2', '9']).code).toBe(0);
    expect(tasks(root, ['update', '3', '--remove-blocks', '8']).code).toBe(0);
    expect(diagnose().code).toBe(0);
  });

  it('spells out each cycle and never breaks one by itself', () => {
    setup({
      'task_1.json': canonical(task(1, { blockedBy: [3], blocks: [2] })),
      'task_2.json': canonical(task(2, { blockedBy: [1], blocks: [3] })),
      'task_3.json': canonical(task(3, { blockedBy: [2], blocks: [1] })),
      'task_4.json': canonical(task(4, { blockedBy: [4], blocks: [4] })),
    });
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.message, f.fix])).toEqual([
      ['cycle', 'cycle #1 -> #2 -> #3 -> #1: none of these tasks can ever become ready', 'remove one edge of it, e.g. tasks dep rm 1 3'],
      ['cycle', 'cycle #4 -> #4: none of these tasks can ever become ready', 'remove one edge of it, e.g. tasks dep rm 4 4'],
    ]);
    const before = file('task_1.json');
    expect(fix().code).toBe(1);
    expect(file('task_1.json')).toBe(before);
    expect(tasks(root, ['dep', 'rm', '1', '3']).code).toBe(0);
    expect(codes(diagnose().findings)).toEqual(['cycle']);
  });

  it('drops completed and deleted ids from blockedBy', () => {
    setup({
      'task_1.json': canonical(task(1, { status: 'completed', blocks: [3] })),
      'task_2.json': canonical(task(2, { status: 'deleted', blocks: [3] })),
      'task_3.json': canonical(task(3, { blockedBy: [1, 2] })),
    });
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.message])).toEqual([
      ['closed_blocker', '#3 still lists #1 in "blockedBy" though #1 is completed'],
      ['closed_blocker', '#3 still lists #2 in "blockedBy" though #2 is deleted'],
    ]);
    expect(fix().code).toBe(0);
    expect(readTaskFile(board, 3).blockedBy).toEqual([]);
    // The completed task keeps its blocks as history.
    expect(readTaskFile(board, 1).blocks).toEqual([3]);
  });

  it('rewrites non-canonical files (a Python TaskManager file) without changing their meaning', () => {
    // json.dumps(indent=2), the Python TaskManager's key order, no trailing newline, unsorted ids.
    const python =
      '{\n  "id": 4,\n  "subject": "Run tests",\n  "description": "",\n  "status": "pending",\n  "blockedBy": [3, 2],\n  "blocks": [],\n  "owner": ""\n}';
    setup({
      'task_2.json': canonical(task(2, { blocks: [4] })),
      'task_3.json': canonical(task(3, { blocks: [4] })),
      'task_4.json': python,
    });
    const d = diagnose();
    expect(d.findings).toMatchObject([{ code: 'non_canonical', line: 6, column: 4, fixable: true }]);
    expect(fix().stdout).toContain('fixed .tasks/task_4.json: rewrote in canonical form');
    expect(file('task_4.json')).toBe(canonical(task(4, { subject: 'Run tests', blockedBy: [2, 3] })));
    expect(diagnose().code).toBe(0);
  });

  it('raises a .highwatermark lower than the highest id, even one a text merge garbled', () => {
    setup({ 'task_5.json': canonical(task(5)) }, 3);
    expect(diagnose().findings).toMatchObject([
      { code: 'highwatermark', message: '.highwatermark is 3, lower than the highest task #5, so ids could be handed out twice' },
    ]);
    expect(fix().stdout).toContain('raised from 3 to 5');
    expect(file('.highwatermark')).toBe('5\n');
    writeFileSync(join(board, '.highwatermark'), '<<<<<<< ours\n7\n=======\n6\n>>>>>>> theirs\n');
    expect(codes(diagnose().findings)).toEqual(['highwatermark']);
    expect(fix().code).toBe(0);
    expect(file('.highwatermark')).toBe('7\n');
    // A mark after which no id can be handed out (a remote once pushed one): every create failed, and --fix must mend it.
    writeFileSync(join(board, '.highwatermark'), `${Number.MAX_SAFE_INTEGER}\n`);
    expect(tasks(root, ['create', 'eight']).code).toBe(1);
    expect(diagnose().findings).toMatchObject([
      {
        code: 'highwatermark',
        message: `.highwatermark is ${Number.MAX_SAFE_INTEGER}, after which no id can be handed out (every create fails); the highest task is #5`,
      },
    ]);
    expect(fix().stdout).toContain(`set from ${Number.MAX_SAFE_INTEGER} to 5`);
    expect(tasks(root, ['create', 'eight']).stdout).toMatch(/^created #6/);
  });

  it('removes stale locks and leftover temp files, never a fresh (held) lock or a write in flight', () => {
    setup({ 'task_1.json': canonical(task(1)) });
    const staleLock = join(board, 'task_1.json.lock');
    const freshLock = join(board, '.runtime', 'owner-0123456789abcdef.lock');
    const staleTemp = join(board, '.tmp-task_1.json.4242.deadbeef.tmp');
    const freshTemp = join(board, '.tmp-task_2.json.4243.deadbeef.tmp');
    mkdirSync(staleLock);
    mkdirSync(freshLock, { recursive: true });
    writeFileSync(staleTemp, '{"id": 1');
    writeFileSync(freshTemp, '{"id": 2');
    utimesSync(staleLock, HOUR_AGO, HOUR_AGO);
    utimesSync(staleTemp, HOUR_AGO, HOUR_AGO);
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.file])).toEqual([
      ['temp_file', staleTemp],
      ['stale_lock', staleLock],
    ]);
    const r = fix();
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^fixed \.tasks\/task_1\.json\.lock: removed stale lock \(untouched for \d+ min\)$/m);
    expect(existsSync(staleLock)).toBe(false);
    expect(existsSync(staleTemp)).toBe(false);
    expect(existsSync(freshLock)).toBe(true);
    expect(existsSync(freshTemp)).toBe(true);
  });

  it('reports expired leases: a live claim is left to tasks reap, a leftover record is removed', async () => {
    setup({ 'task_1.json': canonical(task(1)), 'task_2.json': canonical(task(2)) });
    // The claim 'tasks claim 1 --owner agent-1' makes, in process; its record is then made to look expired.
    await new TaskStore(board).claimTask(1, { owner: 'agent-1', lease: {} });
    const leases = join(board, '.runtime', 'leases');
    const expire = (id: number, owner: string) =>
      writeFileSync(
        join(leases, `task_${id}.json`),
        JSON.stringify({ task: id, owner, host: 'elsewhere', claimedAt: HOUR_AGO.toISOString(), expiresAt: HOUR_AGO.toISOString() }),
      );
    expire(1, 'agent-1');
    expire(2, 'agent-2'); // #2 is not claimed by anyone: a leftover record
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.task, f.fixable])).toEqual([
      ['expired_lease', 1, false],
      ['expired_lease', 2, true],
    ]);
    expect(d.findings[0].fix).toContain('tasks reap');
    expect(fix().code).toBe(1);
    expect(existsSync(join(leases, 'task_2.json'))).toBe(false);
    expect(readTaskFile(board, 1).owner).toBe('agent-1');
    expect(tasks(root, ['reap']).code).toBe(0);
    expect(diagnose().code).toBe(0);
  });

  it('records claims made by hand, so single-in-progress sees them', () => {
    setup({ 'task_1.json': canonical(task(1, { status: 'in_progress', owner: 'ann' })), 'task_2.json': canonical(task(2)) });
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.task, f.fixable])).toEqual([['untracked_claim', 1, true]]);
    // Before the fix ann could start a second task; after it she cannot.
    expect(fix().stdout).toContain('recorded the claim of #1 by ann');
    expect(diagnose().code).toBe(0);
    const second = tasks(root, ['claim', '2', '--owner', 'ann']);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('ann already has task #1 in progress');
    expect(file('task_1.json')).toBe(canonical(task(1, { status: 'in_progress', owner: 'ann' })));
  });

  it('says when the merge driver is not registered in a clone', () => {
    setup({});
    execFileSync('git', ['init', '-q'], { cwd: root });
    writeFileSync(join(board, '.gitattributes'), 'task_*.json merge=dotasks\n.highwatermark merge=dotasks\n');
    const d = diagnose();
    expect(d.findings).toMatchObject([{ code: 'merge_driver', fix: 'register it: tasks init --git', fixable: false }]);
    expect(tasks(root, ['init', '--git']).code).toBe(0);
    expect(diagnose().code).toBe(0);
  });

  it('checks a 10,000-task chain, and spells the cycle that closes it, without deep recursion', () => {
    const n = 10_000;
    const files: Record<string, string> = {};
    for (let id = 1; id <= n; id++) files[`task_${id}.json`] = canonical(task(id, { blockedBy: id > 1 ? [id - 1] : [], blocks: id < n ? [id + 1] : [] }));
    setup(files);
    expect(tasks(root, ['doctor']).stdout).toContain(`the board is healthy (${n} task files)`);
    // #1 now waits for #10000 too, both sides written: every task of the chain lies on one cycle.
    writeFileSync(join(board, 'task_1.json'), canonical(task(1, { blockedBy: [n], blocks: [2] })));
    writeFileSync(join(board, `task_${n}.json`), canonical(task(n, { blockedBy: [n - 1], blocks: [1] })));
    const d = diagnose();
    expect(d.findings.map((f) => [f.code, f.task, f.cycle?.length, f.fix])).toEqual([['cycle', 1, n + 1, `remove one edge of it, e.g. tasks dep rm 1 ${n}`]]);
    expect(d.findings[0].cycle).toEqual([...Array.from({ length: n }, (_, i) => i + 1), 1]);
  });

  it('never loses an edit made while --fix repairs the same files', async () => {
    const files: Record<string, string> = {};
    // #2..#12 each wait for the task before, but no blocker lists its dependent: 11 files to repair.
    for (let id = 1; id <= 12; id++) files[`task_${id}.json`] = canonical(task(id, { blockedBy: id > 1 ? [id - 1] : [] }));
    setup(files);
    const runs = [tasksAsync(root, ['doctor', '--fix'])];
    for (let id = 1; id <= 12; id++) runs.push(tasksAsync(root, ['update', String(id), '--description', `edited ${id}`]));
    const results = await Promise.all(runs);
    expect(results.slice(1).map((r) => r.code)).toEqual(Array(12).fill(0));
    expect(results[0].code).toBe(0);
    for (let id = 1; id <= 12; id++) {
      const t = readTaskFile(board, id);
      expect(t.description).toBe(`edited ${id}`);
      expect(t.blocks).toEqual(id < 12 ? [id + 1] : []);
    }
    expect(diagnose().code).toBe(0);
  });
});
