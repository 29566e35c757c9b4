import { afterEach, describe, expect, it, vi } from 'vitest';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCli } from '../../src/cli.js';
import { COMMAND_LIST } from '../../src/command-table.js';
import { parseFast } from '../../src/fast-path.js';
import { cleanEnv, collectOutput, TASKS_BIN, tasks, tempBoard } from '../helpers.js';

// What a person meets when something goes wrong: one line that says what and what to do (README, "Exit statuses").

let cleanup = () => {};
afterEach(() => cleanup());

function board(): ReturnType<typeof tempBoard> {
  const t = tempBoard();
  cleanup = t.cleanup;
  return t;
}

/** The lines a run printed on stderr. */
const lines = (stderr: string): string[] => stderr.split('\n').filter((l) => l !== '');

describe('usage errors are one line, with a suggestion', () => {
  it('a mistyped command names the nearest one', () => {
    const t = board();
    const r = tasks(t.root, ['lsit']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual(["tasks: unknown command 'lsit'; did you mean 'list'? (tasks --help lists the commands)"]);
  });

  it('a word that is no command and like none says so', () => {
    const t = board();
    const r = tasks(t.root, ['frobnicate']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: unknown command 'frobnicate' (tasks --help lists the commands)"]);
  });

  it('no command at all: one line too', () => {
    const t = board();
    const r = tasks(t.root, []);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: name a command, e.g. 'tasks list' (tasks --help lists the commands)"]);
  });

  it('a mistyped flag names the nearest flag of that command', () => {
    const t = board();
    const r = tasks(t.root, ['list', '--stauts', 'x']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: unknown flag --stauts for 'tasks list'; did you mean --status? (tasks list --help lists its flags)"]);
  });

  it('a missing argument is named in our words', () => {
    const t = board();
    const r = tasks(t.root, ['create']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: 'tasks create' needs <subject> (one-line title): tasks create <subject> (tasks create --help for more)"]);
  });

  it('a value outside the choices lists them', () => {
    const t = board();
    const r = tasks(t.root, ['update', '1', '--status', 'done']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([
      "tasks: --status of 'tasks update' takes pending, in_progress, completed or deleted, got 'done' (tasks update --help for more)",
    ]);
  });

  it('a filter flag with no value refuses instead of listing the whole board, wherever it stands', async () => {
    const t = board();
    const r = tasks(t.root, ['list', '--status', '--all']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(lines(r.stderr)).toEqual(['tasks: --status needs a value: tasks list --status VALUE (tasks list --help for more)']);
    expect(await refusal(['ready', '--label', '--', 'x'])).toBe('tasks: --label needs a value: tasks ready --label VALUE (tasks ready --help for more)');
    expect(await refusal(['list', '--owner'])).toBe('tasks: --owner needs a value: tasks list --owner VALUE (tasks list --help for more)');
  });

  it('a flag another command spells differently is found by its last words', async () => {
    expect(await refusal(['update', '1', '--blocked-by', '3'])).toBe(
      "tasks: unknown flag --blocked-by for 'tasks update'; did you mean --add-blocked-by? (tasks update --help lists its flags)",
    );
    expect(await refusal(['update', '1', '--blocks', '3'])).toBe(
      "tasks: unknown flag --blocks for 'tasks update'; did you mean --add-blocks? (tasks update --help lists its flags)",
    );
  });

  it('a word too many is named', () => {
    const t = board();
    const r = tasks(t.root, ['show', '1', '2']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual(["tasks: unexpected '2': tasks show <id> (tasks show --help for more)"]);
  });

  // Every command of the table: a missing required argument and an unknown flag, each one line on stderr, exit 2.
  for (const spec of COMMAND_LIST) {
    const required = (spec.positionals ?? []).filter((p) => !p.optional && !p.variadic);
    if (required.length > 0)
      it(`tasks ${spec.name} without its arguments`, async () => {
        const line = await refusal([spec.name]);
        expect(line).toMatch(new RegExp(`^tasks: 'tasks ${spec.name}' needs <${required[0].name}>`));
        expect(line).toContain(`(tasks ${spec.name} --help for more)`);
      });
    it(`tasks ${spec.name} with an unknown flag`, async () => {
      const words = required.map((p) => p.choices?.[0] ?? '1');
      expect(await refusal([spec.name, ...words, '--frobnicate'])).toBe(
        `tasks: unknown flag --frobnicate for 'tasks ${spec.name}' (tasks ${spec.name} --help lists its flags)`,
      );
    });
    // A flag that takes a value, typed without one: refused, never read as "no filter" or as "" (a global one for a command without its own).
    const valued = Object.keys(spec.options ?? {}).find((name) => spec.options![name].type !== 'boolean') ?? 'dir';
    it(`tasks ${spec.name} with --${valued} and no value`, async () => {
      const words = required.map((p) => p.choices?.[0] ?? '1');
      expect(await refusal([spec.name, ...words, `--${valued}`])).toBe(
        `tasks: --${valued} needs a value: tasks ${spec.name} --${valued} VALUE (tasks ${spec.name} --help for more)`,
      );
    });
    const own = Object.keys(spec.options ?? {}).find((name) => name.length >= 4);
    if (own)
      it(`tasks ${spec.name} with --${own} mistyped`, async () => {
        const typo = own.slice(0, 1) + own.slice(2); // a letter left out
        const words = required.map((p) => p.choices?.[0] ?? '1');
        expect(await refusal([spec.name, ...words, `--${typo}`])).toBe(
          `tasks: unknown flag --${typo} for 'tasks ${spec.name}'; did you mean --${own}? (tasks ${spec.name} --help lists its flags)`,
        );
      });
  }
});

/**
 * The commands whose cases of the table above run as real processes, one per
 * route argv takes through the entry: create is run by the bundle, import by
 * the fast path of the ES modules, logs by yargs alone. A refusal of the
 * table leaves each route at the same place (the fast path's parse gives up,
 * bin/tasks.js loads dist/main.js, and cli.ts's yargs refuses with
 * usage.ts's line, printed by printUsageError with exit 2), so the cases of
 * the other commands check that line in process, from the same buildCli and
 * argv (a process per case cost the table's 95 cases 10 s of CPU).
 */
const REAL_PROCESS = new Set(['create', 'import', 'logs']);

/** The one line `tasks ...argv` refuses with: from a real process (which must exit 2 with it alone), or from cli.ts in process. */
async function refusal(argv: string[]): Promise<string> {
  if (REAL_PROCESS.has(argv[0])) {
    const t = board();
    const r = tasks(t.root, argv);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    const [line, ...rest] = lines(r.stderr);
    expect(rest, r.stderr).toEqual([]);
    return line;
  }
  // The route of the real processes: the fast path leaves argv to yargs.
  expect(parseFast(argv)).toBeUndefined();
  let refused: string | undefined;
  const cli = buildCli(argv, {
    dispatch: (spec) => {
      throw new Error(`tasks ${argv.join(' ')} ran ${spec.name} instead of refusing`);
    },
    fail: (line) => {
      refused = line;
      throw new Error(line);
    },
  }).exitProcess(false);
  try {
    await cli.parseAsync();
  } catch (error) {
    if (refused === undefined) throw error;
  }
  expect(refused, `tasks ${argv.join(' ')} was not refused as a usage error`).toBeDefined();
  return `tasks: ${refused}`;
}

describe('a command waiting for a live lock says who holds it', () => {
  // Takes a lock as a transaction does (with the holder's mark), says so, and lets go when told on stdin.
  const HOLDER = `
    const { acquireLock } = await import(process.argv[1]);
    const { release } = await acquireLock(process.argv[2], { staleMs: 10000, timeoutMs: 10000 }, { mark: true });
    process.stdout.write('locked\\n');
    process.stdin.once('data', async () => { await release(); process.exit(0); });
  `;
  const coreInternal = fileURLToPath(new URL('../../../core/dist/internal.js', import.meta.url));

  it('after a second, once, naming the pid; then the command does its work', async () => {
    const t = board();
    expect(tasks(t.root, ['create', 'one']).code).toBe(0);
    const holder = spawn(process.execPath, ['--input-type=module', '-e', HOLDER, coreInternal, join(t.board, 'task_1.json.lock')], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let held = '';
    holder.stdout.on('data', (d) => (held += d));
    cleanup = ((previous) => () => {
      holder.kill();
      previous();
    })(cleanup);
    await vi.waitFor(() => expect(held).toBe('locked\n'), { timeout: 10_000, interval: 20 });

    const started = Date.now();
    const child = spawn(process.execPath, [TASKS_BIN, 'update', '1', '--subject', 'renamed'], { cwd: t.root, env: cleanEnv() });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const done = collectOutput(child);
    await vi.waitFor(() => expect(stderr).toContain('waiting'), { timeout: 10_000, interval: 20 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(lines(stderr)).toEqual([`tasks: waiting for the lock on task #1, held by pid ${holder.pid}…`]);
    holder.stdin.write('go\n');
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('updated #1: renamed\n');
    expect(lines(r.stderr)).toHaveLength(1);
  });
});

/** Runs git quietly in `cwd`, returning its output. */
function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('a command that refuses has written nothing', () => {
  it('tasks init --git outside git: exit 1, one line, and no board', () => {
    const t = tempBoard({ init: false });
    cleanup = t.cleanup;
    const r = tasks(t.root, ['init', '--git']);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/is not inside a git repository; run 'git init' first, or use 'tasks init' without --git$/)]);
    expect(existsSync(t.board)).toBe(false);
  });

  it('tasks sync --retire in a repository with no commit: exit 1, and neither the board branch nor the board changed', () => {
    const t = tempBoard({ init: false });
    cleanup = t.cleanup;
    const remote = join(t.root, 'remote.git');
    const repo = join(t.root, 'repo');
    git(t.root, ['init', '-q', '--bare', remote]);
    mkdirSync(repo);
    git(repo, ['init', '-q', '-b', 'main']);
    git(repo, ['remote', 'add', 'origin', remote]);
    expect(tasks(repo, ['init']).code).toBe(0);
    expect(tasks(repo, ['create', 'one']).code).toBe(0);
    expect(tasks(repo, ['sync', '--adopt']).code).toBe(0);
    const before = { branch: git(remote, ['rev-parse', 'tasks']), config: readFileSync(join(repo, '.tasks', 'config.json'), 'utf8') };
    const r = tasks(repo, ['sync', '--retire']);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual(['tasks: the repository has no commit yet; commit once, then run this again']);
    expect({ branch: git(remote, ['rev-parse', 'tasks']), config: readFileSync(join(repo, '.tasks', 'config.json'), 'utf8') }).toEqual(before);
    expect(tasks(repo, ['sync']).code).toBe(0);
  });
});

describe('exit statuses: 2 is for the words typed, 1 for a state of the world', () => {
  it('tasks sync outside git, and with no origin, exit 1', () => {
    const t = board();
    const outside = tasks(t.root, ['sync']);
    expect(outside.code).toBe(1);
    expect(lines(outside.stderr)).toEqual([expect.stringMatching(/is not in a git repository; sync needs one with a remote$/)]);
    git(t.root, ['init', '-q', '-b', 'main']);
    const noRemote = tasks(t.root, ['sync']);
    expect(noRemote.code).toBe(1);
    expect(lines(noRemote.stderr)).toEqual(["tasks: no git remote named 'origin'; add one (git remote add origin URL) or pass --remote"]);
  });

  it('claim --worktree with a base that is no commit exits 1', () => {
    const t = board();
    git(t.root, ['init', '-q', '-b', 'main']);
    git(t.root, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'first']);
    expect(tasks(t.root, ['create', 'one']).code).toBe(0);
    const r = tasks(t.root, ['claim', '1', '--worktree', '--base', 'nosuch', '--owner', 'ann']);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual(['tasks: --base "nosuch" is not a commit; name a branch, tag or commit']);
  });
});

/** The commands a message quotes for pasting: `'tasks done 1 --owner ann'` → ['done', '1', '--owner', 'ann']. */
function quotedCommands(message: string): string[][] {
  return [...message.matchAll(/'tasks ([^']+)'/g)].map((m) => [...m[1].matchAll(/"([^"]*)"|(\S+)/g)].map((w) => w[1] ?? w[2]));
}

describe('hints work when pasted', () => {
  it('owner_busy names the owner, and the board given with --dir; each hint runs as printed', () => {
    const t = board();
    const elsewhere = join(t.root, 'elsewhere');
    mkdirSync(elsewhere);
    const dir = ['--dir', t.board];
    for (const subject of ['one', 'two', 'three']) expect(tasks(elsewhere, ['create', subject, ...dir]).code).toBe(0);
    expect(tasks(elsewhere, ['claim', '1', '--owner', 'agent-1', ...dir]).code).toBe(0);
    const busy = tasks(elsewhere, ['claim', '2', '--owner', 'agent-1', ...dir]);
    expect(busy.code).toBe(1);
    const hints = quotedCommands(busy.stderr);
    expect(hints).toEqual([
      ['done', '1', '--owner', 'agent-1', '--dir', t.board],
      ['release', '1', '--owner', 'agent-1', '--dir', t.board],
    ]);
    // Pasted as printed, from where the command ran, by someone whose default owner is another.
    const done = tasks(elsewhere, hints[0], { TASKS_OWNER: 'someone-else' });
    expect(done.code, done.stderr).toBe(0);
    expect(tasks(elsewhere, ['claim', '2', '--owner', 'agent-1', ...dir]).code).toBe(0);
    const again = quotedCommands(tasks(elsewhere, ['claim', '3', '--owner', 'agent-1', ...dir]).stderr);
    const release = tasks(elsewhere, again[1], { TASKS_OWNER: 'someone-else' });
    expect(release.code, release.stderr).toBe(0);
  });

  it('an owner with a space in its name is quoted, and the hint still runs', () => {
    const t = board();
    expect(tasks(t.root, ['create', 'one']).code).toBe(0);
    expect(tasks(t.root, ['create', 'two']).code).toBe(0);
    expect(tasks(t.root, ['claim', '1'], { TASKS_OWNER: 'Ann Lee' }).code).toBe(0);
    const busy = tasks(t.root, ['claim', '2'], { TASKS_OWNER: 'Ann Lee' });
    expect(busy.stderr).toContain(`'tasks done 1 --owner "Ann Lee"'`);
    expect(tasks(t.root, quotedCommands(busy.stderr)[0]).code).toBe(0);
  });
});

describe('lines that say each thing once, and say what they count', () => {
  it('a cycle refusal says "a task cannot wait for itself" only for a self-edge', () => {
    const t = board();
    for (const subject of ['one', 'two', 'three']) expect(tasks(t.root, ['create', subject]).code).toBe(0);
    expect(tasks(t.root, ['dep', 'add', '2', '1']).code).toBe(0);
    expect(tasks(t.root, ['dep', 'add', '3', '2']).code).toBe(0);
    const three = tasks(t.root, ['dep', 'add', '1', '3']);
    expect(three.code).toBe(1);
    expect(lines(three.stderr)).toEqual(['tasks: refused: that edge would close a cycle #3 -> #1 -> #2 -> #3']);
    const self = tasks(t.root, ['dep', 'add', '1', '1']);
    expect(self.code).toBe(1);
    expect(lines(self.stderr)).toEqual(['tasks: refused: that edge would close a cycle #1 -> #1 (a task cannot wait for itself)']);
  });

  it('doctor places an invalid field at its own line and column, as update does', () => {
    const t = board();
    expect(tasks(t.root, ['create', 'one']).code).toBe(0);
    const file = join(t.board, 'task_1.json');
    const task = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...task, priority: 9 }, null, 2) + '\n');
    const update = tasks(t.root, ['update', '1', '--subject', 'x']);
    const at = /task_1\.json:(\d+:\d+):/.exec(update.stderr)?.[1];
    expect(at).toBe('9:3');
    const doctor = tasks(t.root, ['doctor']);
    expect(doctor.stdout).toContain(`task_1.json:${at}: "priority" must be an integer from 0 (highest) to 4, got 9`);
  });

  it('a filtered list counts the tasks it shows, of how many on the board', () => {
    const t = board();
    expect(tasks(t.root, ['create', 'one', '--label', 'ui']).code).toBe(0);
    expect(tasks(t.root, ['create', 'two']).code).toBe(0);
    expect(tasks(t.root, ['create', 'three', '--label', 'ui', '--blocked-by', '1']).code).toBe(0);
    expect(tasks(t.root, ['create', 'four']).code).toBe(0);
    expect(tasks(t.root, ['list', '--label', 'ui']).stdout.split('\n').at(-2)).toBe('2 of 4 tasks on the board · 0/2 done · ready: #1 · 1 blocked');
    expect(tasks(t.root, ['list']).stdout.split('\n').at(-2)).toBe('0/4 done · ready: #1, #2, #4 · 1 blocked');
  });

  it('"ready:" is in the order claim --next takes them, under list as under ready', () => {
    const t = board();
    expect(tasks(t.root, ['create', 'one']).code).toBe(0);
    expect(tasks(t.root, ['create', 'two', '--priority', '0']).code).toBe(0);
    expect(tasks(t.root, ['create', 'three', '--priority', '1']).code).toBe(0);
    const summary = (args: string[]) => tasks(t.root, args).stdout.split('\n').at(-2);
    expect(summary(['list'])).toBe('0/3 done · ready: #2, #3, #1');
    expect(summary(['ready'])).toBe('3 of 3 tasks on the board · 0/3 done · ready: #2, #3, #1');
    expect(tasks(t.root, ['claim', '--next', '--owner', 'ann']).stdout).toMatch(/^claimed #2:/);
  });
});

describe("the watcher's lines", () => {
  it('a cycle made by hand is reported once, saying once that nothing was written', async () => {
    const t = board();
    expect(tasks(t.root, ['create', 'one']).code).toBe(0);
    expect(tasks(t.root, ['create', 'two', '--blocked-by', '1']).code).toBe(0);
    expect(tasks(t.root, ['create', 'three', '--blocked-by', '2']).code).toBe(0);
    const watcher = spawn(process.execPath, [TASKS_BIN, 'watch'], { cwd: t.root, env: cleanEnv() });
    cleanup = ((previous) => () => {
      watcher.kill();
      previous();
    })(cleanup);
    let out = '';
    watcher.stdout.on('data', (d) => (out += d));
    watcher.stderr.on('data', (d) => (out += d));
    await vi.waitFor(() => expect(out).toContain('watching'), { timeout: 30_000, interval: 50 });
    const file = join(t.board, 'task_1.json');
    const task = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...task, blockedBy: [3] }, null, 2) + '\n');
    await vi.waitFor(() => expect(out).toContain(' invalid '), { timeout: 30_000, interval: 50 });
    const line = lines(out).find((l) => l.includes(' invalid '))!;
    expect(line).toMatch(/ invalid task_1\.json.*closes the cycle #1 -> #2 -> #3 -> #1; nothing was written \(remove one edge of the cycle\)$/);
    expect(line.match(/nothing (was )?written/g)).toHaveLength(1);
  });
});

describe('the entry parses argv once', () => {
  // Counts node:util parseArgs calls (the fast path's parser) through a preload, written when the process exits.
  function parses(cwd: string, args: string[]): { code: number; calls: number } {
    const dir = mkdtempSync(join(tmpdir(), 'dotasks-parses-'));
    try {
      const count = join(dir, 'count');
      const preload = join(dir, 'preload.cjs');
      writeFileSync(
        preload,
        `const util = require('node:util'); const parse = util.parseArgs; let calls = 0;
         util.parseArgs = (...a) => { calls++; return parse(...a); };
         process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(count)}, String(calls)));`,
      );
      const r = spawnSync(process.execPath, ['--require', preload, TASKS_BIN, ...args], { cwd, env: cleanEnv(), encoding: 'utf8' });
      return { code: r.status ?? -1, calls: Number(readFileSync(count, 'utf8')) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('tasks sync (a fast command the bundle does not run) is parsed by the bundle only', () => {
    const t = board();
    expect(parses(t.root, ['sync'])).toEqual({ code: 1, calls: 1 });
    expect(parses(t.root, ['list'])).toEqual({ code: 0, calls: 1 });
  });
});
