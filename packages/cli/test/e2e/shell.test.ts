import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore, resolveOwner } from '@dotasks/core';
import { TASKS_BIN, cleanEnv, createTasks, tasks, tempBoard } from '../helpers.js';

let cleanup = () => {};
afterEach(() => cleanup());

/** The owner a command run beside the board acts as. */
const actorAt = (root: string) => resolveOwner({ cwd: root, env: cleanEnv() }).owner;

/** #1 completed, #2 open, #3 deleted: made in process, through the calls create, done and delete make. */
async function board() {
  const t = tempBoard();
  cleanup = t.cleanup;
  await createTasks(t.board, ['Parse AST', { subject: 'Emit: output', blockedBy: [1] }, 'Dropped']);
  const store = new TaskStore(t.board);
  await store.finishTask(1, { actor: actorAt(t.root) });
  await store.deleteTask(3, { actor: actorAt(t.root) });
  return t;
}

const hasTmux = spawnSync('tmux', ['-V']).status === 0;

describe('shell completion', () => {
  it.skipIf(!hasTmux)('a real bash offers the task ids after `tasks show ` and completes `tasks done ` to the one open task', async () => {
    const t = await board();
    // A `tasks` on PATH, as an installed bin would be.
    const bin = join(t.root, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'tasks'), `#!/bin/sh\nexec "${process.execPath}" "${TASKS_BIN}" "$@"\n`);
    chmodSync(join(bin, 'tasks'), 0o755);
    const script = join(bin, 'tasks-completion.bash');
    const generated = tasks(t.root, ['completion', '--shell', 'bash']);
    expect(generated.code, generated.stderr).toBe(0);
    writeFileSync(script, generated.stdout);

    // A tmux server of our own (its own socket), so nothing else's sessions are touched.
    const socket = `dotasks-test-${process.pid}-${Date.now()}`;
    const env = cleanEnv({ PATH: `${bin}:${process.env.PATH ?? ''}`, PS1: '$ ', HOME: t.root, HISTFILE: '', TERM: 'xterm' });
    const tmux = (...args: string[]) => {
      const r = spawnSync('tmux', ['-L', socket, ...args], { env, encoding: 'utf8', cwd: t.root });
      if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    const screen = () => tmux('capture-pane', '-p', '-t', 'X');
    tmux('new-session', '-d', '-s', 'X', '-x', '200', '-y', '50', '-c', t.root, 'bash --norc --noprofile');
    try {
      tmux('send-keys', '-t', 'X', `PS1='$ '; source '${script}'; echo sourced`, 'Enter');
      await vi.waitFor(() => expect(screen()).toMatch(/^sourced$/m), { timeout: 20_000, interval: 100 });

      tmux('send-keys', '-t', 'X', 'tasks show ', 'Tab', 'Tab');
      // bash lists both candidates (completed #1, open #2; never the deleted #3) under the line being typed (capture-pane drops trailing blanks).
      await vi.waitFor(() => expect(screen()).toMatch(/^\$ tasks show\n1 +2$/m), { timeout: 20_000, interval: 100 });

      tmux('send-keys', '-t', 'X', 'C-u', 'tasks done ', 'Tab');
      await vi.waitFor(() => expect(screen()).toMatch(/^\$ tasks done 2$/m), { timeout: 20_000, interval: 100 });
    } finally {
      spawnSync('tmux', ['-L', socket, 'kill-server'], { env });
    }
  });

  it('zsh and fish get the subjects beside the ids; bash the ids alone; commands and flags from the same table', async () => {
    const t = await board();
    const ask = (shell: string, ...words: string[]) => tasks(t.root, ['--get-yargs-completions', ...words], { TASKS_COMPLETION_SHELL: shell }).stdout;
    expect(ask('bash', 'show', '')).toBe('1\n2\n');
    expect(ask('zsh', 'show', '')).toBe('1:Parse AST\n2:Emit\\: output\n');
    expect(ask('fish', 'done', '')).toBe('2\tEmit: output\n');
    // The scripts written by yargs passed the program first; they still work.
    expect(ask('bash', 'tasks', 'done', '')).toBe('2\n');
    expect(ask('bash', 'dep', 'add', '2', '')).toBe('2\n');
    expect(ask('bash', 'dep', '')).toBe('add\nrm\n');
    expect(ask('bash', 'graph', '--format', '')).toBe('text\nmermaid\ndot\n');
    expect(ask('bash', 'heartbeat', '--le')).toBe('--lease\n');
    expect(ask('bash', 'rea')).toBe('ready\nreap\n');
    expect(ask('fish', 'rea')).toContain('ready\tlist the tasks that can be started now\n');
  });

  it('completion --help prints help; each shell gets its script, by --shell or from SHELL', async () => {
    const t = await board();
    const help = tasks(t.root, ['completion', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--shell');
    expect(help.stdout).toContain('Examples:');
    expect(tasks(t.root, ['completion', '--shell', 'zsh']).stdout).toContain('compdef _tasks tasks');
    expect(tasks(t.root, ['completion'], { SHELL: '/usr/bin/fish' }).stdout).toContain("complete -c tasks -f -a '(__tasks_complete)'");
    expect(tasks(t.root, ['completion'], { SHELL: '/bin/bash' }).stdout).toContain('complete -o bashdefault -o default -F _tasks_yargs_completions tasks');
    expect(tasks(t.root, ['completion', '--shell', 'tcsh']).code).toBe(2);
  });
});

describe('a read command given --owner filters by it', () => {
  it('list, ls and ready show only that owner’s tasks, as --filter-owner does', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [{ subject: 'Mine', owner: 'ann' }, { subject: 'Theirs', owner: 'bob' }, 'Nobody’s']);
    for (const command of ['list', 'ls']) {
      const r = tasks(t.root, [command, '--owner', 'ann']);
      expect(r.stdout).toContain('#1: Mine');
      expect(r.stdout).not.toContain('Theirs');
      expect(r.stdout).not.toContain('Nobody');
    }
    expect(tasks(t.root, ['ready', '--owner', 'ann']).stdout).toContain('(no tasks match)'); // an assigned task is not ready
    expect(tasks(t.root, ['list', '--owner', 'ann', '--filter-owner', 'bob']).stdout).toContain('#2: Theirs');
    expect(tasks(t.root, ['ready', '--status', 'pending', '-a', '--filter-owner', 'bob']).code).toBe(0);
  });
});

const hasScript = spawnSync('script', ['--version']).status === 0;

describe('colour', () => {
  it.skipIf(!hasScript)('list is coloured on a terminal (a real pty, through script), plain through a pipe, and never with NO_COLOR', async () => {
    const t = await board();
    const onTerminal = (env: Record<string, string>) =>
      spawnSync('script', ['-qec', `"${process.execPath}" "${TASKS_BIN}" list`, '/dev/null'], {
        cwd: t.root,
        env: cleanEnv({ NO_COLOR: '', ...env }),
        encoding: 'utf8',
      });
    const coloured = onTerminal({});
    expect(coloured.status, coloured.stderr).toBe(0);
    expect(coloured.stdout).toContain('\u001b[32m[x] #1: Parse AST');
    const noColor = onTerminal({ NO_COLOR: '1' });
    expect(noColor.stdout).toContain('[x] #1: Parse AST');
    expect(noColor.stdout).not.toContain('\u001b[');
    const piped = spawnSync(process.execPath, [TASKS_BIN, 'list'], { cwd: t.root, env: cleanEnv({ NO_COLOR: '' }), encoding: 'utf8' });
    expect(piped.stdout).toContain('[x] #1: Parse AST');
    expect(piped.stdout).not.toContain('\u001b[');
  });
});

describe('text from the board never reaches the terminal raw', () => {
  it('a subject with escape sequences is listed, shown and graphed without an ESC byte; --json keeps it', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [{ subject: 'placeholder', description: 'first line\nsecond' }]);
    const file = join(t.board, 'task_1.json');
    const subject = '\u001b]0;pwned\u0007\u001b[2J';
    const task = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(
      file,
      JSON.stringify({ ...task, subject: `Evil ${subject}\nsecond line \u009b6n`, owner: '', metadata: { note: '\u009b2J' } }, null, 2) + '\n',
    );
    // The color is forced on: our own escape sequences are still there, the task's are not.
    const outputs = ['list', 'show 1', 'graph', 'graph --format mermaid', 'events'].map(
      (args) => [args, tasks(t.root, args.split(' '), { FORCE_COLOR: '1', NO_COLOR: '' })] as const,
    );
    for (const [args, r] of outputs) {
      expect(r.stderr, args).toBe('');
      expect(r.stdout, args).not.toMatch(/\u001b\]|\u001b\[2J|\u0007|\u009b/);
    }
    const list = outputs[0][1].stdout;
    expect(list).toContain('#1: Evil \\x1b]0;pwned\\x07\\x1b[2J\\nsecond line \\u009b6n');
    expect(list.split('\n').filter((l) => l.includes('#1:'))).toHaveLength(1); // one line per task
    expect(outputs[1][1].stdout).toContain('  first line\n  second'); // a description keeps its lines
    expect(outputs[1][1].stdout).toContain('meta.note: "\\u009b2J"');
    const json = JSON.parse(tasks(t.root, ['list', '--json']).stdout) as { tasks: { subject: string }[] };
    expect(json.tasks[0].subject).toBe(`Evil ${subject}\nsecond line \u009b6n`);
    expect(JSON.parse(tasks(t.root, ['show', '1', '--json']).stdout).subject).toBe(`Evil ${subject}\nsecond line \u009b6n`);
  });

  it('bidi controls and invisible characters are shown escaped by list, show and search; --json keeps them', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['placeholder']);
    const file = join(t.board, 'task_1.json');
    const subject = 'pay \u202eusd001\u202c to \u2066bob\u2069 \u200fnow\u200e \u061c zero\u200bwidth e\u0301 👍🏽';
    const task = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify({ ...task, subject, owner: 'ann\u202e', description: 'line \u202eone\nline two' }, null, 2) + '\n');
    const escaped = 'pay \\u202eusd001\\u202c to \\u2066bob\\u2069 \\u200fnow\\u200e \\u061c zero\\u200bwidth e\u0301 👍🏽';
    const bidi = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u200b]/;
    for (const args of ['list', 'show 1', 'search pay']) {
      const r = tasks(t.root, args.split(' '));
      expect(r.stderr, args).toBe('');
      expect(r.stdout, args).not.toMatch(bidi);
      expect(r.stdout, args).toContain(escaped); // combining marks and emoji stay as they are
    }
    const show = tasks(t.root, ['show', '1']).stdout;
    expect(show).toContain('owner:       ann\\u202e');
    expect(show).toContain('  line \\u202eone\n  line two');
    expect(JSON.parse(tasks(t.root, ['show', '1', '--json']).stdout)).toMatchObject({ subject, owner: 'ann\u202e' });
  });

  it('export --format markdown shows the texts escaped, json keeps them', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['placeholder']);
    await new TaskStore(t.board).addNote(1, 'placeholder note', { actor: actorAt(t.root) });
    const file = join(t.board, 'task_1.json');
    const task = JSON.parse(readFileSync(file, 'utf8')) as { notes: { at: string; owner: string; text: string }[] } & Record<string, unknown>;
    writeFileSync(
      file,
      JSON.stringify(
        {
          ...task,
          status: 'in_progress',
          subject: 'Title \u001b]2;PWNED\u0007 \u202eevil',
          owner: 'mal\u001b]52;c;UFdORUQ=\u0007',
          activeForm: '\u001b[2J\u009b1;1H',
          labels: ['l\u001b[1m'],
          paths: ['src/\u001b[31m*'],
          description: 'first \u001b]2;x\u0007\n\tsecond',
          notes: [{ ...task.notes[0], owner: 'o\u001b[A', text: 'n \u001b]52;c;eA==\u0007 \u2066' }],
        },
        null,
        2,
      ) + '\n',
    );
    const r = tasks(t.root, ['export', '--format', 'markdown']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/[\u001b\u0007\u009b\u202e\u2066]/);
    expect(r.stdout).toContain('#1 Title \\\\x1b\\]2;PWNED\\\\x07 \\\\u202eevil');
    expect(r.stdout).toContain('in progress by mal\\x1b]52;c;UFdORUQ=\\x07: \\x1b[2J\\u009b1;1H');
    expect(r.stdout).toContain('  first \\x1b]2;x\\x07\n  \tsecond');
    expect(r.stdout).toContain(': n \\\\x1b\\]52;c;eA==\\\\x07 \\\\u2066');
    const json = JSON.parse(tasks(t.root, ['export']).stdout) as { tasks: { subject: string }[] };
    expect(json.tasks[0].subject).toBe('Title \u001b]2;PWNED\u0007 \u202eevil');
  });
});
