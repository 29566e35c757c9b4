import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TASKS_BIN, cleanEnv, collectOutput, readTaskFile, tasks, tempBoard, type RunResult } from '../helpers.js';

/** Backlog.md and beads projects as those tools leave them (packages/core/test/fixtures/imports). */
const FIXTURES = fileURLToPath(new URL('../../../core/test/fixtures/imports/', import.meta.url));

/** JSON text of an object nested `depth` deep (JSON.stringify itself overflows the stack long before 20,000). */
function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** The error a failed `--json` run printed. */
function jsonError(r: RunResult): { code: string; message: string } {
  return (JSON.parse(r.stdout) as { error: { code: string; message: string } }).error;
}

function taskFiles(board: string): string[] {
  return readdirSync(board).filter((n) => /^task_\d+\.json$/.test(n));
}

/** A Claude Code task list folder with tasks 1 and 2 (2 waits for 1). */
function claudeList(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '1.json'), JSON.stringify({ id: '1', subject: 'Schema', description: '', status: 'pending', blocks: ['2'], blockedBy: [] }));
  writeFileSync(join(dir, '2.json'), JSON.stringify({ id: '2', subject: 'API', description: '', status: 'pending', blocks: [], blockedBy: ['1'] }));
  return dir;
}

describe('tasks import: hostile and repeated input', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());
  function board(): { root: string; board: string } {
    const t = tempBoard();
    cleanup = t.cleanup;
    return t;
  }

  /** Expects a refusal: exit 1, one clear line with E_INVALID, and no task written. */
  function expectRefused(t: { root: string; board: string }, args: string[]): string {
    const r = tasks(t.root, [...args, '--json']);
    expect(r.code).toBe(1);
    const error = jsonError(r);
    expect(error.code).toBe('E_INVALID');
    expect(error.message).not.toMatch(/unexpected error|\n/);
    expect(r.stderr).toBe(`tasks: ${error.message}\n`);
    expect(taskFiles(t.board)).toEqual([]);
    return error.message;
  }

  describe('bounded input', () => {
    it('metadata nested 20,000 deep: one line naming the file and the task, nothing written', () => {
      const t = board();
      const file = join(t.root, 'deep.json');
      writeFileSync(file, `{"tasks":[{"id":1,"subject":"fine","status":"pending"},{"id":2,"subject":"deep","status":"pending","metadata":${nested(20_000)}}]}`);
      const message = expectRefused(t, ['import', 'dotasks', file]);
      expect(message).toBe(`${file}: tasks[1]: "metadata" nests deeper than 100 levels (at metadata.a.a.a…); nothing was imported`);
      // The board still answers.
      expect(tasks(t.root, ['list']).code).toBe(0);
    });

    it('a YAML alias bomb in a Backlog.md task: one line naming the file, nothing written', () => {
      const t = board();
      const folder = join(t.root, 'backlog', 'tasks');
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'task-1 - Fine.md'), '---\nid: task-1\ntitle: Fine\nstatus: To Do\n---\n');
      const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
      for (const name of 'bcdefgh')
        levels.push(
          `${name}: &${name} [${Array(9)
            .fill(`*${String.fromCharCode(name.charCodeAt(0) - 1)}`)
            .join(', ')}]`,
        );
      const bomb = join(folder, 'task-2 - Bomb.md');
      writeFileSync(bomb, `---\nid: task-2\ntitle: Bomb\nstatus: To Do\n${levels.join('\n')}\n---\n`);
      const message = expectRefused(t, ['import', 'backlog', t.root]);
      expect(message).toBe(
        `${bomb}: invalid YAML front matter: its aliases (*name) expand too far (the limit is 10); write the values out; nothing was imported`,
      );
    });

    it('a named pipe 3.json in a Claude task folder: refused at once, naming the entry (it hung the import)', { timeout: 30_000 }, async () => {
      const t = board();
      const list = claudeList(join(t.root, 'list'));
      const fifo = join(list, '3.json');
      const made = spawnSync('mkfifo', [fifo]);
      expect(made.status).toBe(0);
      const child = spawn(process.execPath, [TASKS_BIN, 'import', 'claude', list, '--json'], { cwd: t.root, env: cleanEnv() });
      // The old code blocked in open(2) until a writer came: bound the wait, and kill it for good if it hangs.
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const r = await collectOutput(child).finally(() => clearTimeout(timer));
      expect(r.code).toBe(1);
      const error = jsonError(r);
      expect(error).toEqual({
        code: 'E_INVALID',
        message: `${fifo} is a named pipe: an import reads regular files only; move it out of the folder; nothing was imported`,
      });
      expect(taskFiles(t.board)).toEqual([]);
    });

    it('a symlink 4.json to a file outside: refused naming the entry, its content never read or quoted', () => {
      const t = board();
      const list = claudeList(join(t.root, 'list'));
      const secret = join(t.root, 'secret.txt');
      writeFileSync(secret, 'SECRET-TOKEN-3f9a: not JSON at all\n');
      symlinkSync(secret, join(list, '4.json'));
      const message = expectRefused(t, ['import', 'claude', list]);
      expect(message).toBe(
        `${join(list, '4.json')} is a symbolic link: an import never reads through a link in the folder; put the file itself there or move the link out; nothing was imported`,
      );
      // A link to a valid task is refused the same way (the old code imported what it pointed to).
      writeFileSync(secret, JSON.stringify({ id: '4', subject: 'From outside', status: 'pending' }));
      const again = tasks(t.root, ['import', 'claude', list]);
      expect(again.code).toBe(1);
      expect(again.stderr).not.toContain('SECRET');
      expect(taskFiles(t.board)).toEqual([]);
    });

    it('a folder 2.json: the error names the entry', () => {
      const t = board();
      const list = join(t.root, 'list');
      mkdirSync(join(list, '2.json'), { recursive: true });
      writeFileSync(join(list, '1.json'), JSON.stringify({ id: '1', subject: 'Schema', status: 'pending' }));
      const message = expectRefused(t, ['import', 'claude', list]);
      expect(message).toBe(`${join(list, '2.json')} is a folder: an import reads regular files only; move it out of the folder; nothing was imported`);
    });

    it('a Backlog.md task file over 1 MiB is refused before it is read', () => {
      const t = board();
      const folder = join(t.root, 'backlog', 'tasks');
      mkdirSync(folder, { recursive: true });
      const big = join(folder, 'task-1 - Big.md');
      writeFileSync(big, `---\nid: task-1\ntitle: Big\nstatus: To Do\n---\n${'x'.repeat(1024 * 1024 + 1)}\n`);
      const message = expectRefused(t, ['import', 'backlog', t.root]);
      expect(message).toBe(`${big} is 1.0 MB, over the 1 MiB an import reads from one task file; nothing was imported`);
    });
  });

  describe('the same limits as create', () => {
    it('import dotasks refuses a priority of 99 (every reader refused the task it wrote)', () => {
      const t = board();
      const file = join(t.root, 'export.json');
      writeFileSync(file, JSON.stringify({ tasks: [{ id: 7, subject: 'Urgent', status: 'pending', priority: 99 }] }));
      const message = expectRefused(t, ['import', 'dotasks', file]);
      expect(message).toBe(`${file}: 7 (Urgent): a priority is an integer from 0 (highest) to 4 (default 2), got 99; nothing was imported`);
      expect(tasks(t.root, ['list']).stderr).toBe('');
    });

    it('import store refuses a 5,000-character subject, as create and update do', () => {
      const t = board();
      const file = join(t.root, 'tasks.json');
      writeFileSync(file, JSON.stringify({ next_id: 2, tasks: [{ id: 'task_1', subject: 's'.repeat(5000), status: 'pending' }] }));
      const message = expectRefused(t, ['import', 'store', file]);
      expect(message).toBe(
        `${file}: task_1 (${'s'.repeat(60)}…): a subject is a one-line title of at most 500 characters (this one has 5000); put the rest in the description; nothing was imported`,
      );
      expect(tasks(t.root, ['create', 's'.repeat(5000)]).stderr).toContain('a subject is a one-line title of at most 500 characters (this one has 5000)');
    });

    it('paths, labels and notes get the checks of create, update and note', () => {
      const t = board();
      const file = join(t.root, 'export.json');
      const write = (task: Record<string, unknown>) => writeFileSync(file, JSON.stringify({ tasks: [{ id: 1, subject: 'One', status: 'pending', ...task }] }));
      write({ paths: ['src/**', 'two\nlines'] });
      expect(expectRefused(t, ['import', 'dotasks', file])).toContain('1 (One): not a path glob: "two\\nlines"');
      write({ labels: ['l'.repeat(101)] });
      expect(expectRefused(t, ['import', 'dotasks', file])).toContain(
        '1 (One): a label is a non-empty word or short phrase on one line (at most 100 characters)',
      );
      write({ notes: [{ at: '2025-01-01T00:00:00.000Z', owner: 'ann', text: '  ' }] });
      expect(expectRefused(t, ['import', 'dotasks', file])).toContain('1 (One): a note needs text');
    });

    it('warns about a task in progress while blocked by open tasks, and two in progress for one owner', () => {
      const t = board();
      expect(tasks(t.root, ['create', 'Already here', '--status', 'in_progress', '--assign', 'bob']).code).toBe(0);
      const file = join(t.root, 'tasks.json');
      writeFileSync(
        file,
        JSON.stringify({
          next_id: 4,
          tasks: [
            { id: 'task_1', subject: 'Open blocker', status: 'pending' },
            { id: 'task_2', subject: 'Started too early', status: 'in_progress', owner: 'ann', blocked_by: ['task_1'] },
            { id: 'task_3', subject: 'Also ann', status: 'in_progress', owner: 'ann' },
            { id: 'task_4', subject: 'Bob again', status: 'in_progress', owner: 'bob' },
          ],
        }),
      );
      const r = tasks(t.root, ['import', 'store', file]);
      expect(r.code).toBe(0);
      expect(r.stderr).toMatchInlineSnapshot(`
        "warning: task_2 -> #3 (Started too early): in progress while blocked by #2, which is open; it was imported as the source has it ('tasks release 3', or finish #2 first)
        warning: ann has 2 tasks in progress (#3, #4) and the board allows one per owner (singleInProgress); 'tasks release' all but one
        warning: bob has 2 tasks in progress (#1, #5) and the board allows one per owner (singleInProgress); 'tasks release' all but one
        "
      `);
      expect(taskFiles(t.board)).toHaveLength(5);
    });
  });

  describe('imports are idempotent', () => {
    it('the same beads file twice: unchanged, not doubled; a changed file updates and creates only what is new', () => {
      const t = board();
      const file = join(t.root, 'issues.jsonl');
      cpSync(join(FIXTURES, 'beads-project', '.beads', 'issues.jsonl'), file);
      const first = tasks(t.root, ['import', 'beads', file, '--json']);
      expect(first.code).toBe(0);
      expect((JSON.parse(first.stdout) as { summary: unknown }).summary).toEqual({ created: 5, updated: 0, unchanged: 0 });
      const before = taskFiles(t.board).map((n) => readFileSync(join(t.board, n), 'utf8'));

      const second = tasks(t.root, ['import', 'beads', 'issues.jsonl']);
      expect(second.code).toBe(0);
      expect(second.stdout).toMatchInlineSnapshot(`
        "imported 5 tasks from issues.jsonl (5 unchanged):
          bd-7f3a -> #1 (unchanged): Payments
          bd-7f3a.1 -> #2 (unchanged): Add the Stripe client
          bd-7f3a.2 -> #3 (unchanged): Webhook handler
          bd-9d02 -> #4 (unchanged): Document the payment settings
          bd-c41e -> #5 (unchanged): Refund flow (blocked by #3)
        "
      `);
      expect(taskFiles(t.board).map((n) => readFileSync(join(t.board, n), 'utf8'))).toEqual(before);

      // In beads meanwhile: one issue renamed and closed, one new issue that waits for an old one.
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      const edited = lines.map((line) => {
        const issue = JSON.parse(line) as Record<string, unknown>;
        if (issue.id === 'bd-9d02') Object.assign(issue, { title: 'Document the payment settings, v2', status: 'closed' });
        return JSON.stringify(issue);
      });
      edited.push(
        JSON.stringify({ id: 'bd-e5f6', title: 'Receipts', status: 'open', dependencies: [{ issue_id: 'bd-e5f6', depends_on_id: 'bd-c41e', type: 'blocks' }] }),
      );
      writeFileSync(file, edited.join('\n') + '\n');
      const third = tasks(t.root, ['import', 'beads', file, '--json']);
      expect(third.code).toBe(0);
      const json = JSON.parse(third.stdout) as { summary: unknown; mapping: unknown[]; warnings: string[] };
      expect(json.summary).toEqual({ created: 1, updated: 2, unchanged: 3 });
      expect(json.mapping).toContainEqual({ from: 'bd-9d02', to: 4, subject: 'Document the payment settings, v2', action: 'updated' });
      expect(json.mapping).toContainEqual({ from: 'bd-e5f6', to: 6, subject: 'Receipts', action: 'created' });
      // Where a task stands on the board is the board's: a re-import refreshes what it says.
      expect(json.warnings).toEqual([
        "bd-9d02 -> #4: the source has it completed, the board pending; a re-import leaves status, owner and edges as the board has them ('tasks done 4' to follow the source)",
      ]);
      expect(readTaskFile(t.board, 4)).toMatchObject({ subject: 'Document the payment settings, v2', status: 'pending' });
      expect(readTaskFile(t.board, 6)).toMatchObject({ blockedBy: [5], metadata: { importedFrom: { tool: 'beads', id: 'bd-e5f6', source: 'issues.jsonl' } } });
      expect(readTaskFile(t.board, 5)).toMatchObject({ blocks: [6] });
      expect(taskFiles(t.board)).toHaveLength(6);
      expect(tasks(t.root, ['doctor']).code).toBe(0);
    });

    it('every importer: a second import of the same source writes nothing new', () => {
      const t = board();
      const claude = claudeList(join(t.root, 'claude'));
      const store = join(t.root, 'tasks.json');
      writeFileSync(store, JSON.stringify({ next_id: 2, tasks: [{ id: 'task_1', subject: 'Stored', status: 'pending' }] }));
      cpSync(join(FIXTURES, 'backlog-project'), join(t.root, 'shop'), { recursive: true });
      const exported = join(t.root, 'export.json');
      writeFileSync(exported, JSON.stringify({ tasks: [{ id: 1, subject: 'Exported', status: 'pending', labels: ['x'] }] }));
      const sources: [string, string][] = [
        ['claude', claude],
        ['store', store],
        ['backlog', join(t.root, 'shop')],
        ['beads', join(FIXTURES, 'beads-project')],
        ['dotasks', exported],
      ];
      for (const [kind, source] of sources) expect(tasks(t.root, ['import', kind, source]).code).toBe(0);
      const count = taskFiles(t.board).length;
      expect(count).toBe(2 + 1 + 5 + 5 + 1);
      for (const [kind, source] of sources) {
        const r = tasks(t.root, ['import', kind, source, '--json']);
        expect(r.code).toBe(0);
        const summary = (JSON.parse(r.stdout) as { summary: { created: number; updated: number } }).summary;
        expect([kind, summary.created, summary.updated]).toEqual([kind, 0, 0]);
      }
      expect(taskFiles(t.board)).toHaveLength(count);
      // The same Claude list given another way (relative, with a trailing slash) is the same source.
      expect(JSON.parse(tasks(t.root, ['import', 'claude', 'claude/', '--json']).stdout)).toMatchObject({ summary: { created: 0 } });
      // Another list with the same ids is another source: its tasks are new.
      const other = claudeList(join(t.root, 'claude-other'));
      expect(JSON.parse(tasks(t.root, ['import', 'claude', other, '--json']).stdout)).toMatchObject({ summary: { created: 2 } });
      expect(existsSync(join(t.board, `task_${count + 2}.json`))).toBe(true);
    });
  });
});
