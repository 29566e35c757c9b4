import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTasks, readTaskFile, tasks, tempBoard } from '../helpers.js';

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

describe('init', () => {
  it('writes .gitignore and .highwatermark, and refuses to clobber a board', () => {
    const t = tempBoard({ init: false });
    cleanups.push(t.cleanup);
    expect(ok(t.root, ['init']).stdout).toContain(`created an empty board in ${t.board}`);
    expect(readFileSync(join(t.board, '.gitignore'), 'utf8')).toContain('.runtime/');
    expect(readFileSync(join(t.board, '.gitignore'), 'utf8')).toContain('*.lock');
    expect(readFileSync(join(t.board, '.highwatermark'), 'utf8')).toBe('0\n');
    ok(t.root, ['create', 'keep me']);
    const again = tasks(t.root, ['init']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^tasks: a board already exists at .*; nothing was changed\n$/);
    expect(readTaskFile(t.board, 1).subject).toBe('keep me');
  });

  it('outside any board, commands name tasks init and exit 1', () => {
    const t = tempBoard({ init: false });
    cleanups.push(t.cleanup);
    const r = tasks(t.root, ['list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no task board found .*run 'tasks init'/);
    const j = tasks(t.root, ['list', '--json']);
    expect(JSON.parse(j.stdout)).toEqual({ error: { code: 'E_NO_BOARD', message: expect.stringContaining('tasks init') } });
  });
});

describe('board discovery (docs/protocol.md, "Where the board is")', () => {
  it('inside git, a linked worktree sees the main worktree board', () => {
    const t = tempBoard({ init: false });
    cleanups.push(t.cleanup);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: t.root, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'root');
    mkdirSync(join(t.root, 'sub', 'deep'), { recursive: true });
    ok(join(t.root, 'sub', 'deep'), ['init']);
    expect(existsSync(join(t.root, '.tasks', '.highwatermark'))).toBe(true);
    git('worktree', 'add', '-q', join(t.root, 'wt-agent-1'), '-b', 'agent-1');
    ok(join(t.root, 'wt-agent-1'), ['create', 'made in a worktree']);
    expect(ok(t.root, ['list']).stdout).toContain('#1: made in a worktree');
    // The worktree's name is git's: the folder name, not the branch.
    expect(ok(join(t.root, 'wt-agent-1'), ['whoami']).stdout).toBe('wt-agent-1 (from worktree)\n');
    expect(existsSync(join(t.root, 'wt-agent-1', '.tasks'))).toBe(false);
  });

  it('--dir and TASKS_DIR name the board directory', () => {
    const t = board();
    const elsewhere = tempBoard({ init: false });
    cleanups.push(elsewhere.cleanup);
    ok(elsewhere.root, ['create', 'via --dir', '--dir', t.board]);
    ok(elsewhere.root, ['create', 'via env'], { TASKS_DIR: t.board });
    expect(ok(t.root, ['list']).stdout).toContain('#2: via env');
  });
});

describe('create, update, edges, done', () => {
  it('the classic plan: parse -> transform + emit -> test', () => {
    const t = board();
    ok(t.root, ['create', 'Parse AST']);
    ok(t.root, ['create', 'Transform AST', '--blocked-by', '#1']);
    ok(t.root, ['create', 'Emit output', '--blocked-by', 'task_1']);
    ok(t.root, ['create', 'Run tests', '--blocked-by', '2', '--blocked-by', 'task_3.json']);
    expect(readTaskFile(t.board, 1).blocks).toEqual([2, 3]);
    expect(ok(t.root, ['list']).stdout).toMatchInlineSnapshot(`
      "[ ] #1: Parse AST
      [ ] #2: Transform AST (blocked by: #1)
      [ ] #3: Emit output (blocked by: #1)
      [ ] #4: Run tests (blocked by: #2, #3)
      0/4 done · ready: #1 · 3 blocked
      "
    `);
    ok(t.root, ['start', '1', '--active-form', 'parsing'], { TASKS_OWNER: 'agent-1' });
    expect(ok(t.root, ['list']).stdout).toContain('[>] #1: Parse AST (agent-1: parsing)');
    const done = ok(t.root, ['done', '1'], { TASKS_OWNER: 'agent-1' });
    expect(done.stdout).toBe('completed #1: Parse AST\nunblocked #2: Transform AST\nunblocked #3: Emit output\n');
    expect(readTaskFile(t.board, 2).blockedBy).toEqual([]);
    expect(readTaskFile(t.board, 1).blocks).toEqual([2, 3]);
    expect(ok(t.root, ['ready']).stdout).toContain('[ ] #2: Transform AST\n[ ] #3: Emit output\n');
    const json = JSON.parse(ok(t.root, ['done', '2', '--json']).stdout);
    expect(json).toMatchObject({ task: { id: 2, status: 'completed' }, unblocked: [] });
    expect(JSON.parse(ok(t.root, ['done', '3', '--json']).stdout).unblocked).toEqual([4]);
  });

  it('update changes every field, metadata, and edges on both sides', async () => {
    const t = board();
    await createTasks(t.board, ['A', 'B']);
    ok(t.root, ['create', 'C', '--meta', 'priority=1', '--meta', 'tags=["x"]']);
    ok(
      t.root,
      [
        'update',
        '3',
        '--subject',
        'C2',
        '-d',
        'details',
        '--active-form',
        'doing',
        '--assign',
        'bob',
        '--meta',
        'priority=',
        '--meta',
        'note=hi',
        '--add-blocked-by',
        '1,2',
        '--add-blocks',
        '#1',
      ].filter((a) => a !== '--add-blocks' && a !== '#1'),
    );
    expect(readTaskFile(t.board, 3)).toEqual({
      id: 3,
      subject: 'C2',
      description: 'details',
      status: 'pending',
      owner: 'bob',
      activeForm: 'doing',
      blockedBy: [1, 2],
      blocks: [],
      metadata: { tags: ['x'], note: 'hi' },
    });
    expect(readTaskFile(t.board, 1).blocks).toEqual([3]);
    ok(t.root, ['update', '3', '--remove-blocked-by', '1']);
    expect(readTaskFile(t.board, 1).blocks).toEqual([]);
    expect(readTaskFile(t.board, 3).blockedBy).toEqual([2]);
    ok(t.root, ['dep', 'rm', '3', '2']);
    ok(t.root, ['dep', 'add', '1', '3']);
    expect(readTaskFile(t.board, 3).blocks).toEqual([1]);
    expect(readTaskFile(t.board, 1).blockedBy).toEqual([3]);
    ok(t.root, ['update', '3', '--active-form', '']);
    expect(readTaskFile(t.board, 3)).not.toHaveProperty('activeForm');
  });

  it('refuses cycles with the cycle spelled out, and self-edges', async () => {
    const t = board();
    await createTasks(t.board, ['one', { subject: 'two', blockedBy: [1] }, { subject: 'three', blockedBy: [2] }]);
    const before = readdirSync(t.board).map((n) => (n.endsWith('.json') ? readFileSync(join(t.board, n), 'utf8') : n));
    const r = tasks(t.root, ['dep', 'add', '1', '3']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('tasks: refused: that edge would close a cycle #3 -> #1 -> #2 -> #3\n');
    const self = tasks(t.root, ['update', '2', '--add-blocks', '2']);
    expect(self.code).toBe(1);
    expect(self.stderr).toContain('#2 -> #2');
    const json = JSON.parse(tasks(t.root, ['dep', 'add', '1', '3', '--json']).stdout);
    expect(json.error.code).toBe('E_CYCLE');
    const after = readdirSync(t.board).map((n) => (n.endsWith('.json') ? readFileSync(join(t.board, n), 'utf8') : n));
    expect(after).toEqual(before);
  });

  it('refuses edges to missing or deleted tasks', async () => {
    const t = board();
    await createTasks(t.board, ['one', 'two']);
    const missing = tasks(t.root, ['create', 'three', '--blocked-by', '9']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('task #9: it does not exist');
    expect(existsSync(join(t.board, 'task_3.json'))).toBe(false);
    ok(t.root, ['delete', '2']);
    expect(tasks(t.root, ['dep', 'add', '1', '2']).stderr).toContain('it is deleted');
  });

  it('delete tombstones: the file stays, it no longer blocks, listings hide it', async () => {
    const t = board();
    await createTasks(t.board, ['one', { subject: 'two', blockedBy: [1] }]);
    expect(ok(t.root, ['delete', '1']).stdout).toContain('unblocked #2: two');
    expect(readTaskFile(t.board, 1).status).toBe('deleted');
    expect(ok(t.root, ['list']).stdout).not.toContain('#1');
    expect(ok(t.root, ['list', '--all']).stdout).toContain('[-] #1: one (deleted)');
    expect(ok(t.root, ['ready']).stdout).toContain('#2: two');
  });

  it('status transitions follow docs/protocol.md, "Life cycle"', async () => {
    const t = board();
    await createTasks(t.board, ['one']);
    ok(t.root, ['done', '1']);
    const back = tasks(t.root, ['update', '1', '--status', 'pending']);
    expect(back.code).toBe(1);
    expect(back.stderr).toContain('cannot go from completed to pending');
    await createTasks(t.board, ['two']);
    ok(t.root, ['update', '2', '--status', 'in_progress'], { TASKS_OWNER: 'ann' });
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'in_progress', owner: 'ann' });
    // A task another owner holds goes back to pending only with --force (compare-and-swap).
    const theirs = tasks(t.root, ['update', '2', '--status', 'pending']);
    expect(theirs.code).toBe(1);
    expect(theirs.stderr).toContain('belongs to ann');
    ok(t.root, ['update', '2', '--status', 'pending', '--force']);
    ok(t.root, ['delete', '2']);
    expect(tasks(t.root, ['start', '2']).code).toBe(1);
  });

  it('done of a blocked task, or of someone else’s, needs --force', async () => {
    const t = board();
    await createTasks(t.board, ['one', { subject: 'two', blockedBy: [1] }]);
    const blocked = tasks(t.root, ['done', '2']);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toContain('still blocked by #1');
    ok(t.root, ['start', '1'], { TASKS_OWNER: 'ann' });
    const theirs = tasks(t.root, ['done', '1'], { TASKS_OWNER: 'bob' });
    expect(theirs.code).toBe(1);
    expect(theirs.stderr).toContain('belongs to ann');
    ok(t.root, ['done', '1', '--force'], { TASKS_OWNER: 'bob' });
  });

  it('clear needs --yes, then removes every task file; ids are never handed out again', async () => {
    const t = board();
    await createTasks(t.board, ['one', 'two']);
    const refused = tasks(t.root, ['clear']);
    expect(refused.code).toBe(1);
    expect(readdirSync(t.board).filter((n) => n.startsWith('task_'))).toHaveLength(2);
    expect(ok(t.root, ['clear', '--yes']).stdout).toBe('removed 2 task files\n');
    expect(readdirSync(t.board).filter((n) => n.startsWith('task_'))).toEqual([]);
    expect(ok(t.root, ['create', 'fresh']).stdout).toBe('created #3: fresh\n');
    expect(readTaskFile(t.board, 3).subject).toBe('fresh');
  });

  it('ids are never reused after a file is removed by hand', async () => {
    const t = board();
    await createTasks(t.board, ['one', 'two']);
    execFileSync('rm', [join(t.board, 'task_2.json')]);
    ok(t.root, ['create', 'three']);
    expect(readTaskFile(t.board, 3).subject).toBe('three');
  });
});

describe('exit statuses and errors (docs/protocol.md, "Exit statuses")', () => {
  it('usage errors exit 2 with one line (messages.test.ts has each kind)', () => {
    const t = board();
    const r = tasks(t.root, ['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("tasks: unknown command 'frobnicate' (tasks --help lists the commands)\n");
    expect(tasks(t.root, ['show']).code).toBe(2);
    expect(tasks(t.root, ['update', '1', '--status', 'done']).code).toBe(2);
  });

  it('ids like ../x are refused as usage errors and nothing is touched', () => {
    const t = board();
    for (const id of ['../x', 'task_../x', '0', '1.5']) {
      const r = tasks(t.root, ['show', id]);
      expect(r.code, id).toBe(2);
      expect(r.stderr).toContain('not a task id');
    }
    const subject = tasks(t.root, ['done', 'Parse the AST']);
    expect(subject.stderr).toContain('looks like a subject');
  });

  it('a missing task exits 1 and names the nearest ids', async () => {
    const t = board();
    await createTasks(t.board, ['one', 'two']);
    const r = tasks(t.root, ['show', '7']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("tasks: task #7 not found (the board has #1…#2; see 'tasks list')\n");
  });
});

describe('bad files are reported, never skipped, never overwritten', () => {
  const cases: [string, string, RegExp][] = [
    ['malformed JSON', '{\n  "id": 2,\n  "subject": "x",\n  "status": "pending",,\n}', /task_2\.json:4:23: invalid JSON/],
    ['wrong types', '{"id": 2, "subject": ["x"], "status": "pending"}', /task_2\.json:1:11: "subject" must be a string/],
    ['unknown status', '{"id": 2, "subject": "x", "status": "doing"}', /task_2\.json:1:27: "status" must be one of/],
    ['id/file name mismatch', '{"id": 5, "subject": "x", "status": "pending"}', /task_2\.json:1:2: "id" is 5 but the file name says 2/],
    ['edge to a missing task', '{"id": 2, "subject": "x", "status": "pending", "blockedBy": ["1"]}', /"blockedBy" must hold positive integer ids, got "1"/],
  ];
  it.each(cases)('%s', async (_name, content, message) => {
    const t = board();
    await createTasks(t.board, ['good one']);
    writeFileSync(join(t.board, 'task_2.json'), content);
    ok(t.root, ['create', 'three']);
    const list = tasks(t.root, ['list']);
    expect(list.code).toBe(1);
    expect(list.stdout).toContain('[ ] #1: good one');
    expect(list.stdout).toContain('[ ] #3: three');
    expect(list.stderr).toMatch(message);
    const json = JSON.parse(tasks(t.root, ['list', '--json']).stdout);
    expect(json.problems).toHaveLength(1);
    expect(json.problems[0]).toMatchObject({ id: 2, file: join(t.board, 'task_2.json') });
    for (const args of [
      ['done', '2'],
      ['update', '2', '--subject', 'fixed?'],
      ['dep', 'add', '1', '2'],
      ['dep', 'add', '2', '1'],
      ['claim', '2'],
      ['start', '2'],
      ['delete', '2'],
    ]) {
      const r = tasks(t.root, args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr, args.join(' ')).toContain('task_2.json');
      expect(readFileSync(join(t.board, 'task_2.json'), 'utf8')).toBe(content);
    }
  });

  it('a 5 MB file is refused without being read as a task', () => {
    const t = board();
    const big = JSON.stringify({ id: 1, subject: 'big', status: 'pending', description: 'x'.repeat(5 * 1024 * 1024) });
    writeFileSync(join(t.board, 'task_1.json'), big);
    const r = tasks(t.root, ['list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/task_1\.json:1:1: file is 5\.0 MB, over the 1 MiB limit/);
    expect(tasks(t.root, ['done', '1']).code).toBe(1);
    expect(readFileSync(join(t.board, 'task_1.json'), 'utf8')).toBe(big);
  });

  it('a misnamed task file is reported', () => {
    const t = board();
    writeFileSync(join(t.board, 'task_01.json'), '{"id": 1, "subject": "x", "status": "pending"}');
    const r = tasks(t.root, ['list']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('task_01.json: not a task file name');
  });

  it('__proto__ in --meta and in files stays data (no prototype pollution)', () => {
    const t = board();
    ok(t.root, ['create', 'x', '--meta', '__proto__={"polluted":true}', '--meta', 'constructor=1']);
    const text = readFileSync(join(t.board, 'task_1.json'), 'utf8');
    expect(text).toContain('"__proto__": {\n      "polluted": true\n    }');
    const show = JSON.parse(ok(t.root, ['show', '1', '--json']).stdout);
    expect(Object.keys(show.metadata)).toContain('constructor');
    ok(t.root, ['update', '1', '--meta', 'more=2']);
    expect(readFileSync(join(t.board, 'task_1.json'), 'utf8')).toContain('"__proto__"');
  });
});

describe('files stay readable by the Python TaskManager of the one-file-per-task design, and its files by us', () => {
  it('round-trips through python3', () => {
    const t = board();
    ok(t.root, ['create', 'Parse AST', '-d', 'naïve ünïcode']);
    ok(t.root, ['create', 'Transform', '--blocked-by', '1', '--meta', 'k=v', '--priority', '1', '--label', 'ast,core']);
    ok(t.root, ['note', '2', 'mind the CRLF'], { TASKS_OWNER: 'ann' });
    const python = `
import json, sys
from pathlib import Path
class TaskManager:
    def __init__(self, tasks_dir):
        self.dir = tasks_dir
        self._next_id = self._max_id() + 1
    def _max_id(self):
        ids = [int(f.stem.split("_")[1]) for f in self.dir.glob("task_*.json")]
        return max(ids) if ids else 0
    def _load(self, task_id):
        return json.loads((self.dir / f"task_{task_id}.json").read_text())
    def _save(self, task):
        (self.dir / f"task_{task['id']}.json").write_text(json.dumps(task, indent=2))
    def create(self, subject, description=""):
        task = {"id": self._next_id, "subject": subject, "description": description,
                "status": "pending", "blockedBy": [], "blocks": [], "owner": ""}
        self._save(task)
        self._next_id += 1
    def update(self, task_id, status=None, add_blocks=None):
        task = self._load(task_id)
        if status:
            task["status"] = status
            if status == "completed":
                self._clear_dependency(task_id)
        if add_blocks:
            task["blocks"] = list(set(task["blocks"] + add_blocks))
            for b in add_blocks:
                blocked = self._load(b)
                if task_id not in blocked["blockedBy"]:
                    blocked["blockedBy"].append(task_id)
                    self._save(blocked)
        self._save(task)
    def _clear_dependency(self, completed_id):
        for f in self.dir.glob("task_*.json"):
            task = json.loads(f.read_text())
            if completed_id in task.get("blockedBy", []):
                task["blockedBy"].remove(completed_id)
                self._save(task)
tm = TaskManager(Path(sys.argv[1]))
print(tm._load(2)["metadata"]["k"], tm._load(1)["description"])
t2 = tm._load(2)
print(t2["priority"], ",".join(t2["labels"]), t2["notes"][0]["owner"], t2["notes"][0]["text"])
tm.create("Emit output")
tm.update(3, add_blocks=[2])
tm.update(1, status="completed")
`;
    const out = execFileSync('python3', ['-c', python, t.board], { encoding: 'utf8' });
    expect(out).toBe('v naïve ünïcode\n1 ast,core ann mind the CRLF\n');
    const list = ok(t.root, ['list']);
    expect(list.stdout).toContain('[x] #1: Parse AST');
    // Python rewrote #2 (a new blocker): its planning fields came through.
    expect(list.stdout).toContain('[ ] #2: Transform P1 #ast #core (blocked by: #3)');
    expect(ok(t.root, ['show', '2']).stdout).toMatch(/ann: mind the CRLF/);
    ok(t.root, ['note', '2', 'second'], { TASKS_OWNER: 'bob' });
    expect((readTaskFile(t.board, 2).notes as unknown[]).length).toBe(2);
    expect(
      execFileSync('python3', ['-c', 'import json,sys; t=json.load(open(sys.argv[1])); print(t["priority"], len(t["notes"]))', join(t.board, 'task_2.json')], {
        encoding: 'utf8',
      }),
    ).toBe('1 2\n');
    expect(list.stdout).toContain('[ ] #3: Emit output');
    // Our next write of a Python-written file is canonical again.
    ok(t.root, ['done', '3']);
    expect(readFileSync(join(t.board, 'task_3.json'), 'utf8').endsWith('\n')).toBe(true);
    expect(readTaskFile(t.board, 2).blockedBy).toEqual([]);
    ok(t.root, ['create', 'after python']);
    expect(readTaskFile(t.board, 4).subject).toBe('after python');
  });
});
