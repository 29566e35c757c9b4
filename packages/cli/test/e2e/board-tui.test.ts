import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { TASKS_BIN, cleanEnv, readTaskFile, tasks, tasksAsync, tempBoard, traceLoads } from '../helpers.js';

/**
 * `tasks board` through a real pseudo-terminal: tmux runs it on its own
 * server (-L), the test types with send-keys and reads the screen with
 * capture-pane, polling until what it expects is there.
 */

const hasTmux = spawnSync('tmux', ['-V']).status === 0;
const SOCKET = `dotasks-board-${process.pid}`;
const WIDTH = 120;
const HEIGHT = 40;

function tmux(...args: string[]): string {
  const r = spawnSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8', env: cleanEnv() });
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** Starts `tasks board` in a tmux session; after it exits the pane says `board exited N`. */
function startBoard(name: string, board: string, owner: string): void {
  const command = `${quote(process.execPath)} ${quote(TASKS_BIN)} board --dir ${quote(board)}; echo "board exited $?"; sleep 600`;
  tmux('new-session', '-d', '-s', name, '-x', String(WIDTH), '-y', String(HEIGHT), '-e', `TASKS_OWNER=${owner}`, '-e', 'NO_COLOR=1', command);
}

const screen = (name: string) => tmux('capture-pane', '-p', '-t', name);

/** Waits until the screen passes `check` (which throws until then); returns that screen. */
async function screenWhere(name: string, check: (text: string) => void, timeout = 10_000): Promise<string> {
  return vi.waitFor(
    () => {
      const text = screen(name);
      check(text);
      return text;
    },
    { timeout, interval: 20 },
  );
}

const TITLES = ['Ready', 'Blocked', 'In progress', 'Done'] as const;

/** The text of each column, found by slicing the screen where the column titles are. */
function columnsOf(text: string): Record<(typeof TITLES)[number], string> {
  const lines = text.split('\n');
  const titleLine = lines.find((l) => l.includes('Ready (')) ?? '';
  const starts = TITLES.map((t) => titleLine.indexOf(`${t} (`) - 1);
  const out = {} as Record<(typeof TITLES)[number], string>;
  TITLES.forEach((title, i) => {
    const end = i + 1 < starts.length ? starts[i + 1] : undefined;
    out[title] = lines.map((l) => l.slice(starts[i], end)).join('\n');
  });
  return out;
}

/** The example board of docs/protocol.md, "Output": #1 done, #2 in progress by agent-1, #3 ready, #4 waiting for #2 and #3. */
async function exampleBoard(board: string): Promise<void> {
  const store = new TaskStore(board);
  await store.createTask({ subject: 'Parse AST' });
  await store.createTask({ subject: 'Transform AST', description: 'Rewrite the tree into the target shape.', blockedBy: [1] });
  await store.createTask({ subject: 'Emit output', blockedBy: [1] });
  await store.createTask({ subject: 'Run tests', blockedBy: [2, 3] });
  await store.completeTask(1, { actor: 'ann' });
  await store.claimTask(2, { owner: 'agent-1' });
  await store.updateTask(2, { activeForm: 'transforming' }, { actor: 'agent-1' });
}

describe.skipIf(!hasTmux)('tasks board in a terminal', () => {
  let cleanup = () => {};
  afterEach(() => {
    spawnSync('tmux', ['-L', SOCKET, 'kill-server'], { env: cleanEnv() });
    cleanup();
  });

  it('shows the columns, follows other processes, writes with its keys and quits', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await exampleBoard(t.board);
    startBoard('b1', t.board, 'agent-1');

    let cols = columnsOf(
      await screenWhere('b1', (s) => {
        expect(s).toContain('Ready (1)');
        expect(s).toContain('In progress (1)');
      }),
    );
    expect(cols.Ready).toContain('#3 Emit output');
    expect(cols.Blocked).toContain('#4 Run tests');
    expect(cols.Blocked).toContain('waits for #2, #3');
    expect(cols['In progress']).toContain('#2 Transform AST');
    expect(cols['In progress']).toContain('agent-1: transforming');
    expect(cols['In progress']).toMatch(/lease 1[45]:\d\d left/);
    expect(cols.Done).toContain('#1 Parse AST');
    expect(screen('b1')).toMatch(/1\/4 done · 1 in progress · 1 ready · 1 blocked/);

    // Another process completes #3: the board shows it within a second or so, without a key pressed.
    const r = await tasksAsync(t.root, ['done', '3', '--owner', 'ann']);
    expect(r.code).toBe(0);
    const written = Date.now();
    cols = columnsOf(await screenWhere('b1', (s) => expect(columnsOf(s).Done).toContain('#3 Emit output'), 2_000));
    const seenAfterMs = Date.now() - written;
    expect(seenAfterMs).toBeLessThan(2_000);
    expect(cols.Blocked).toContain('waits for #2');
    expect(cols.Blocked).not.toContain('#3');
    expect(screen('b1')).toContain('completed #3 by ann');

    // Select #2 in In progress and press d: it is completed on disk, and #4 moves to Ready.
    tmux('send-keys', '-t', 'b1', 'l');
    await screenWhere('b1', (s) => expect(columnsOf(s).Blocked).toContain('› #4 Run tests'));
    tmux('send-keys', '-t', 'b1', 'l');
    await screenWhere('b1', (s) => expect(columnsOf(s)['In progress']).toContain('› #2 Transform AST'));
    tmux('send-keys', '-t', 'b1', 'd');
    await vi.waitFor(() => expect(readTaskFile(t.board, 2).status).toBe('completed'), { timeout: 10_000, interval: 20 });
    cols = columnsOf(
      await screenWhere('b1', (s) => {
        expect(columnsOf(s).Ready).toContain('#4 Run tests');
        expect(s).toContain('completed #2: Transform AST · unblocked #4: Run tests');
      }),
    );
    expect(cols.Done).toMatch(/#2 Transform AST[\s\S]*#3 Emit output[\s\S]*#1 Parse AST/); // latest first
    expect(cols['In progress']).toContain('(none)');

    // A file edited by hand (no event, no dotasks process) shows as well.
    const file = join(t.board, 'task_4.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"Run tests"', '"Run all tests"'));
    const edited = Date.now();
    await screenWhere('b1', (s) => expect(columnsOf(s).Ready).toContain('#4 Run all tests'), 2_000);
    expect(Date.now() - edited).toBeLessThan(2_000);

    tmux('send-keys', '-t', 'b1', 'q');
    await screenWhere('b1', (s) => expect(s).toContain('board exited 0'));
  });

  it('shows a task in full, searches, follows a resize', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await exampleBoard(t.board);
    startBoard('b2', t.board, 'ann');
    await screenWhere('b2', (s) => expect(s).toContain('Ready (1)'));

    // Enter shows a task in full: #4 with its open blockers, then #2 with its description and what it blocks.
    tmux('send-keys', '-t', 'b2', 'Right');
    await screenWhere('b2', (s) => expect(columnsOf(s).Blocked).toContain('› #4'));
    tmux('send-keys', '-t', 'b2', 'Enter');
    const blocked = await screenWhere('b2', (s) => expect(s).toContain('blocked by: #2 Transform AST (in progress), #3 Emit output (pending)'));
    expect(blocked).toContain('waiting for #2, #3');
    expect(blocked).toContain('(no description)');
    tmux('send-keys', '-t', 'b2', 'Escape');
    await screenWhere('b2', (s) => expect(s).toContain('Done (1)'));
    tmux('send-keys', '-t', 'b2', 'Right');
    await screenWhere('b2', (s) => expect(columnsOf(s)['In progress']).toContain('› #2'));
    tmux('send-keys', '-t', 'b2', 'Enter');
    const detail = await screenWhere('b2', (s) => expect(s).toContain('Rewrite the tree into the target shape.'));
    expect(detail).toContain('status: in progress · owner: agent-1');
    expect(detail).toContain('now: transforming');
    expect(detail).toContain('blocks: #4 Run tests (pending)');
    expect(detail).toMatch(/lease: 1[45]:\d\d left/);
    tmux('send-keys', '-t', 'b2', 'Escape');
    await screenWhere('b2', (s) => expect(s).toContain('Done (1)'));

    // `/` filters the cards by text in subject or description.
    tmux('send-keys', '-t', 'b2', '/');
    await screenWhere('b2', (s) => expect(s).toContain('search: '));
    tmux('send-keys', '-t', 'b2', '-l', 'TARGET');
    tmux('send-keys', '-t', 'b2', 'Enter');
    const filtered = columnsOf(await screenWhere('b2', (s) => expect(s).toContain('Ready (0)')));
    expect(filtered['In progress']).toContain('#2 Transform AST');
    expect(filtered.Blocked).toContain('(none)');
    expect(filtered.Done).toContain('(none)');
    tmux('send-keys', '-t', 'b2', 'Escape');
    await screenWhere('b2', (s) => expect(s).toContain('Ready (1)'));

    // Narrower and shorter: every line fits, the columns are still there.
    tmux('resize-window', '-t', 'b2', '-x', '80', '-y', '20');
    const small = await screenWhere('b2', (s) => {
      expect(s.split('\n').every((line) => line.length <= 80)).toBe(true);
      expect(s.split('\n').filter((line) => line.includes('┐')).length).toBeGreaterThan(0);
      expect(s).toMatch(/Ready \(1\)\s*[│┃]/);
    });
    expect(columnsOf(small).Done).toContain('#1 Parse AST');
    expect(small).toContain('1/4 done');

    // Ctrl-C quits too.
    tmux('send-keys', '-t', 'b2', 'C-c');
    await screenWhere('b2', (s) => expect(s).toContain('board exited'));
  });

  it('p cycles a priority filter; n adds a note to the selected task through the store', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const store = new TaskStore(t.board);
    await store.createTask({ subject: 'Urgent fix', priority: 0, labels: ['bug'] });
    await store.createTask({ subject: 'Normal work' });
    await store.createTask({ subject: 'Someday', priority: 4 });
    startBoard('b3', t.board, 'ann');
    let cols = columnsOf(await screenWhere('b3', (s) => expect(s).toContain('Ready (3)')));
    expect(cols.Ready).toContain('#1 Urgent fix P0 #bug');
    expect(cols.Ready).toContain('#3 Someday P4');

    // p: all → P0 → P1 → P2 (absent counts as 2) … → P4 → all.
    tmux('send-keys', '-t', 'b3', 'p');
    cols = columnsOf(await screenWhere('b3', (s) => expect(s).toContain('Ready (1)')));
    expect(cols.Ready).toContain('#1 Urgent fix');
    expect(screen('b3')).toContain('P0 only');
    tmux('send-keys', '-t', 'b3', 'p');
    await screenWhere('b3', (s) => expect(s).toContain('Ready (0)'));
    tmux('send-keys', '-t', 'b3', 'p');
    cols = columnsOf(await screenWhere('b3', (s) => expect(s).toContain('Ready (1)')));
    expect(cols.Ready).toContain('#2 Normal work');
    for (let i = 0; i < 3; i++) tmux('send-keys', '-t', 'b3', 'p');
    await screenWhere('b3', (s) => {
      expect(s).toContain('Ready (3)');
      expect(s).toContain('showing every priority');
    });

    // n: a one-line input for the selected task (#1); Enter saves it into the file, as the acting owner.
    tmux('send-keys', '-t', 'b3', 'n');
    await screenWhere('b3', (s) => expect(s).toContain('note #1: '));
    tmux('send-keys', '-t', 'b3', '-l', 'seen on CI, q and p are just text here');
    await screenWhere('b3', (s) => expect(s).toContain('note #1: seen on CI, q and p are just text here'));
    tmux('send-keys', '-t', 'b3', 'Enter');
    await vi.waitFor(() => expect(readTaskFile(t.board, 1).notes).toMatchObject([{ owner: 'ann', text: 'seen on CI, q and p are just text here' }]), {
      timeout: 10_000,
      interval: 20,
    });
    await screenWhere('b3', (s) => expect(s).toContain('noted on #1: Urgent fix'));
    // Esc drops a note without writing.
    tmux('send-keys', '-t', 'b3', 'n');
    await screenWhere('b3', (s) => expect(s).toContain('note #1: '));
    tmux('send-keys', '-t', 'b3', '-l', 'never mind');
    tmux('send-keys', '-t', 'b3', 'Escape');
    await screenWhere('b3', (s) => expect(s).toContain('note dropped'));
    expect(readTaskFile(t.board, 1).notes).toHaveLength(1);
    // The detail view lists the note.
    tmux('send-keys', '-t', 'b3', 'Enter');
    await screenWhere('b3', (s) => {
      expect(s).toContain('notes (1):');
      expect(s).toMatch(/- \d{4}-\d\d-\d\dT\S+ ann: seen on CI/);
    });
    tmux('send-keys', '-t', 'b3', 'q');
    await screenWhere('b3', (s) => expect(s).toContain('board exited 0'));
  });

  it('prints what tasks list prints when stdout is not a terminal, and no other command loads Ink or React', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await exampleBoard(t.board);
    const board = tasks(t.root, ['board']);
    expect(board.code).toBe(0);
    expect(board.stdout).toBe(tasks(t.root, ['list']).stdout);
    expect(board.stdout).toMatchInlineSnapshot(`
      "[x] #1: Parse AST
      [>] #2: Transform AST (agent-1: transforming)
      [ ] #3: Emit output
      [ ] #4: Run tests (blocked by: #2, #3)
      1/4 done · 1 in progress · ready: #3 · 1 blocked
      "
    `);

    // What each command loads, whichever loader loads it: the files it opens.
    const loaded = (...args: string[]) => {
      const r = traceLoads(t.root, args);
      expect(r.code, r.stderr).toBe(0);
      return r.files;
    };
    const viaYargs = loaded('events');
    expect(viaYargs.some((f) => f.includes('/node_modules/yargs/'))).toBe(true); // the trace sees the packages that load
    for (const files of [viaYargs, loaded('list'), loaded('board'), loaded('done', '3')]) {
      expect(files.filter((f) => /\/node_modules\/(ink|react)\/|@dotasks\/board|\/packages\/board\/dist\//.test(f))).toEqual([]);
    }
  });
});
