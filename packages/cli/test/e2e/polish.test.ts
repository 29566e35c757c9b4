import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cpSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createTasks, tasks, tempBoard } from '../helpers.js';

let cleanup = () => {};
afterEach(() => cleanup());

/** Two tasks, the second waiting for the first, made in process (create's own tests run the command). */
async function board() {
  const t = tempBoard();
  cleanup = t.cleanup;
  await createTasks(t.board, ['Parse AST', { subject: 'Emit: output', blockedBy: [1] }]);
  return t;
}

const ESC = '\u001b[';

/**
 * A board of 3,000 tasks, whose listing is more than twice a pipe's 64 KiB: written once for the file (2.5 s of
 * CPU), each test gets a copy of its own.
 */
let pipeTemplate: ReturnType<typeof tempBoard> | undefined;
afterAll(() => pipeTemplate?.cleanup());
async function pipeFillingBoard() {
  if (!pipeTemplate) {
    const { TaskStore } = await import('@dotasks/core');
    pipeTemplate = tempBoard();
    await new TaskStore(pipeTemplate.board).batchWrite(
      Array.from({ length: 3000 }, (_, i) => ({ subject: `Task ${i + 1}, long enough that 3,000 of them fill a pipe` })),
    );
  }
  const t = tempBoard({ init: false });
  cleanup = t.cleanup;
  cpSync(pipeTemplate.board, t.board, { recursive: true });
  return t;
}

describe('everyday polish', () => {
  it('--version prints our own version', async () => {
    const t = await board();
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string };
    expect(tasks(t.root, ['--version']).stdout).toBe(`${pkg.version}\n`);
  });

  it('colour only when asked for by the terminal; NO_COLOR wins; --json never', async () => {
    const t = await board();
    expect(tasks(t.root, ['list']).stdout).not.toContain(ESC); // not a terminal (and NO_COLOR from the helper)
    const forced = tasks(t.root, ['list'], { FORCE_COLOR: '1', NO_COLOR: '' });
    expect(forced.stdout).toContain(`${ESC}1m${ESC}36m[ ] #1: Parse AST`);
    expect(forced.stdout).toContain(`${ESC}2m[ ] #2: Emit: output (blocked by: #1)`);
    expect(tasks(t.root, ['list'], { FORCE_COLOR: '1', NO_COLOR: '1' }).stdout).not.toContain(ESC);
    expect(tasks(t.root, ['list', '--json'], { FORCE_COLOR: '1', NO_COLOR: '' }).stdout).not.toContain(ESC);
  });

  it('completion prints a bash script and completes task ids', async () => {
    const t = await board();
    expect(tasks(t.root, ['completion']).stdout).toContain('complete -o bashdefault -o default -F _tasks_yargs_completions tasks');
    expect(tasks(t.root, ['--get-yargs-completions', 'done', '']).stdout.split('\n')).toEqual(expect.arrayContaining(['1', '2']));
    expect(tasks(t.root, ['--get-yargs-completions', 'show', ''], { SHELL: '/bin/zsh' }).stdout).toContain('2:Emit\\: output');
    expect(tasks(t.root, ['--get-yargs-completions', 'cre']).stdout).toContain('create');
  });

  it('every command has an example in its help', async () => {
    const t = await board();
    const help = tasks(t.root, ['--help']).stdout;
    const commands = [...help.matchAll(/^ {2}tasks ([a-z-]+)/gm)].map((m) => m[1]).filter((c) => c !== 'completion');
    expect(commands.length).toBeGreaterThan(30);
    // One command's help from a real process; every command's from the same command line in process (42 processes cost 12 s).
    expect(tasks(t.root, ['claim', '--help']).stdout).toContain('Examples:');
    const { buildCli } = await import('../../src/cli.js');
    const helpOf = (argv: string[]) =>
      new Promise<string>((resolve, reject) => {
        void buildCli(argv)
          .exitProcess(false)
          .parse(argv, {}, (error, _args, output) => (error ? reject(error) : resolve(output)));
      });
    for (const command of commands) expect(await helpOf([command, '--help']), command).toContain('Examples:');
  });

  it('first-time mistakes get messages that say what to do', async () => {
    const t = await board();
    expect(tasks(t.root, ['show', '9']).stderr).toContain("(the board has #1…#2; see 'tasks list')");
    expect(tasks(t.root, ['start', 'Parse AST']).stderr).toContain('looks like a subject');
    const outside = tempBoard({ init: false });
    try {
      expect(tasks(outside.root, ['ready']).stderr).toContain("run 'tasks init'");
    } finally {
      outside.cleanup();
    }
  });
});

describe('a shell that behaves', () => {
  it('a closed pipe (| head -1) ends list, export, graph and events quietly with their usual status', async () => {
    const { spawnSync } = await import('node:child_process');
    const { TASKS_BIN, cleanEnv } = await import('../helpers.js');
    const t = await pipeFillingBoard();
    for (const args of [['list'], ['list', '--json'], ['export'], ['export', '--format', 'markdown'], ['graph'], ['events']]) {
      const r = spawnSync('bash', ['-c', `"${process.execPath}" "${TASKS_BIN}" ${args.join(' ')} | head -1 >/dev/null; exit \${PIPESTATUS[0]}`], {
        cwd: t.root,
        env: cleanEnv(),
        encoding: 'utf8',
      });
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.status, args.join(' ')).toBe(0);
    }
  });
});

describe('output through a pipe that does not block', () => {
  it('a full non-blocking pipe (a parent that shares one) still gets the whole listing, in order', async () => {
    const { spawnSync } = await import('node:child_process');
    const { TASKS_BIN, cleanEnv } = await import('../helpers.js');
    const t = await pipeFillingBoard();
    const expected = spawnSync(process.execPath, [TASKS_BIN, 'list'], { cwd: t.root, env: cleanEnv(), encoding: 'utf8', maxBuffer: 1 << 26 }).stdout;
    expect(expected.length).toBeGreaterThan(150_000); // more than twice a pipe's 64 KiB
    // python: a pipe whose write end is O_NONBLOCK, read only once the child has filled it.
    const py = [
      'import fcntl, os, subprocess, sys, time',
      'r, w = os.pipe()',
      'fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)',
      'p = subprocess.Popen(sys.argv[1:], stdout=w)',
      'os.close(w)',
      'time.sleep(0.3)',
      'data = b""',
      'while True:',
      '    chunk = os.read(r, 65536)',
      '    if not chunk: break',
      '    data += chunk',
      'sys.stdout.buffer.write(data)',
      'sys.exit(p.wait())',
    ].join('\n');
    const r = spawnSync('python3', ['-c', py, process.execPath, TASKS_BIN, 'list'], { cwd: t.root, env: cleanEnv(), encoding: 'utf8', maxBuffer: 1 << 26 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout === expected, `got ${r.stdout.length} of ${expected.length} characters`).toBe(true);
  });
});

describe('file system errors say what and where in one line', () => {
  it('init --dir on or under a file, a merge driver given a missing file, a board folder that is a file', async () => {
    const { writeFileSync, mkdirSync } = await import('node:fs');
    const { join } = await import('node:path');
    const t = tempBoard({ init: false });
    cleanup = t.cleanup;
    writeFileSync(join(t.root, 'afile'), 'x');
    const cases: [string[], RegExp][] = [
      [['init', '--dir', 'afile'], /^tasks: .*afile exists and is not a folder; choose another --dir$/],
      [['init', '--dir', 'afile/sub'], /^tasks: cannot stat .*afile\/sub: a part of that path is a file, not a folder \(ENOTDIR\)$/],
      [
        ['merge-driver', join(t.root, 'nope-base'), join(t.root, 'nope-ours'), join(t.root, 'nope-theirs'), 'task_1.json'],
        /^tasks: cannot open .*nope-\w+: no such file or folder \(ENOENT\)$/,
      ],
      [['list', '--dir', 'afile'], /^tasks: no task board found/],
    ];
    for (const [args, expected] of cases) {
      const r = tasks(t.root, args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim(), args.join(' ')).toMatch(expected);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).not.toContain('unexpected error');
    }
    mkdirSync(join(t.root, 'board', '.runtime'), { recursive: true });
    writeFileSync(join(t.root, 'board', '.highwatermark'), '0\n');
    mkdirSync(join(t.root, 'board', 'task_1.json'));
    const show = tasks(t.root, ['show', '1', '--dir', 'board']);
    expect(show.stderr).toMatch(/^tasks: .*task_1\.json:1:1: not a regular file/);
  });
});

describe('a task file saved with a byte order mark (Notepad)', () => {
  it('is read as it is; doctor calls it non-canonical and --fix drops the mark', async () => {
    const { readFileSync: read, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const t = await board();
    const file = join(t.board, 'task_1.json');
    writeFileSync(file, '\uFEFF' + read(file, 'utf8').replace('Parse AST', 'Parse the AST'));
    const list = tasks(t.root, ['list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('#1: Parse the AST');
    expect(tasks(t.root, ['doctor']).stdout).toContain('not in canonical form');
    expect(tasks(t.root, ['doctor', '--fix']).code).toBe(0);
    expect(read(file, 'utf8').charCodeAt(0)).toBe('{'.charCodeAt(0));
    expect(tasks(t.root, ['done', '1']).code).toBe(0);
  });
});
