import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { readTaskFile, tasks, tasksAsync, tempBoard, traceLoads } from '../helpers.js';
import { columnsOf as columnsOfTitles, hasTmux, tmuxBoards } from '../tmux-board.js';

/**
 * `tasks board` through a real pseudo-terminal: tmux runs it on its own
 * server (-L), the test types with send-keys and reads the screen with
 * capture-pane, polling until what it expects is there.
 */

const SOCKET = `dotasks-board-${process.pid}`;
const boards = tmuxBoards(SOCKET, { width: 120, height: 40 });
const { tmux, screenWhere } = boards;
const startBoard = (name: string, board: string, owner: string, width?: number) => boards.start(name, board, owner, { width });

const TITLES = ['Ready', 'Blocked', 'In progress', 'Done'] as const;

/** The columns of a board that uses review (docs/protocol.md, "Review"). */
const REVIEW_TITLES = ['Ready', 'Blocked', 'In progress', 'Review', 'Done'] as const;

/** The text of each column (of a board without review unless `titles` says otherwise). */
function columnsOf<T extends string = (typeof TITLES)[number]>(
  text: string,
  titles: readonly T[] = TITLES as readonly string[] as readonly T[],
): Record<T, string> {
  return columnsOfTitles(text, titles);
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
    boards.killServer();
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
        expect(s).toMatch(/1\/4 done · 1 in progress · 1 ready · 1 blocked/);
      }),
    );
    expect(cols.Ready).toContain('#3 Emit output');
    expect(cols.Blocked).toContain('#4 Run tests');
    expect(cols.Blocked).toContain('waits for #2, #3');
    expect(cols['In progress']).toContain('#2 Transform AST');
    expect(cols['In progress']).toContain('agent-1: transforming');
    expect(cols['In progress']).toMatch(/lease 1[45]:\d\d left/);
    expect(cols.Done).toContain('#1 Parse AST');

    // Another process completes #3: the board shows it within a second or so, without a key pressed.
    const r = await tasksAsync(t.root, ['done', '3', '--owner', 'ann']);
    expect(r.code).toBe(0);
    const written = Date.now();
    const after = await screenWhere('b1', (s) => expect(columnsOf(s).Done).toContain('#3 Emit output'), 2_000);
    const seenAfterMs = Date.now() - written;
    expect(seenAfterMs).toBeLessThan(2_000);
    cols = columnsOf(after);
    expect(cols.Blocked).toContain('waits for #2');
    expect(cols.Blocked).not.toContain('#3');
    await screenWhere('b1', (s) => expect(s).toContain('completed #3 by ann'));

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
    // Soft links (docs/protocol.md, "Links"): #4 related to #3 and found while on #2.
    await new TaskStore(t.board).updateTask(4, { addRelated: [3], addDiscoveredFrom: [2] });
    startBoard('b2', t.board, 'ann');
    await screenWhere('b2', (s) => expect(s).toContain('Ready (1)'));

    // Enter shows a task in full: #4 with its open blockers, then #2 with its description and what it blocks.
    tmux('send-keys', '-t', 'b2', 'Right');
    await screenWhere('b2', (s) => expect(columnsOf(s).Blocked).toContain('› #4'));
    tmux('send-keys', '-t', 'b2', 'Enter');
    const blocked = await screenWhere('b2', (s) => expect(s).toContain('blocked by: #2 Transform AST (in progress), #3 Emit output (pending)'));
    expect(blocked).toContain('waiting for #2, #3');
    expect(blocked).toContain('(no description)');
    expect(blocked).toMatch(/│related: #3 +│/);
    expect(blocked).toMatch(/│found while on #2 +│/);
    tmux('send-keys', '-t', 'b2', 'Escape');
    await screenWhere('b2', (s) => expect(s).toContain('Done (1)'));
    tmux('send-keys', '-t', 'b2', 'Right');
    await screenWhere('b2', (s) => expect(columnsOf(s)['In progress']).toContain('› #2'));
    tmux('send-keys', '-t', 'b2', 'Enter');
    const detail = await screenWhere('b2', (s) => expect(s).toContain('Rewrite the tree into the target shape.'));
    expect(detail).toContain('status: in progress · owner: agent-1');
    expect(detail).toContain('now: transforming');
    expect(detail).toContain('blocks: #4 Run tests (pending)');
    expect(detail).toMatch(/│found here: #4 +│/);
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

  it('a board that uses review has a Review lane: a approves the selected task, x asks for a note and sends it back, its own is refused', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    writeFileSync(join(t.board, 'config.json'), JSON.stringify({ review: true }));
    const store = new TaskStore(t.board);
    for (const [id, owner] of ['alice', 'carol', 'bob'].entries()) {
      await store.createTask({ subject: `Work of ${owner}` });
      await store.startTask(id + 1, { owner, actor: owner });
      await store.completeTask(id + 1, { actor: owner });
    }
    await store.createTask({ subject: 'After alice', blockedBy: [1] });
    startBoard('b5', t.board, 'bob');
    const first = await screenWhere('b5', (s) => expect(s).toContain('Review (3)'));
    const cols = columnsOf(first, REVIEW_TITLES);
    expect(cols.Review).toMatch(/#1 Work of alice[\s\S]*alice's work[\s\S]*#2 Work of carol[\s\S]*#3 Work of bob/);
    expect(cols['In progress']).toContain('(none)');
    expect(first).toContain('0/4 done · 0 in progress · 3 in review · 0 ready · 1 blocked');
    expect(first).toContain('a approve · x reject');

    // To the Review lane (Ready, Blocked, In progress, Review), then a: #1 is approved as bob, and #4 unblocks.
    for (let i = 0; i < 3; i++) tmux('send-keys', '-t', 'b5', 'Right');
    await screenWhere('b5', (s) => expect(columnsOf(s, REVIEW_TITLES).Review).toContain('› #1 Work of alice'));
    tmux('send-keys', '-t', 'b5', 'a');
    await vi.waitFor(() => expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', review: { state: 'approved', by: 'bob' } }), {
      timeout: 10_000,
      interval: 20,
    });
    await screenWhere('b5', (s) => {
      expect(s).toContain("approved #1: Work of alice (alice's work); it is completed · unblocked #4: After alice");
      expect(columnsOf(s, REVIEW_TITLES).Ready).toContain('#4 After alice');
    });

    // x on #2: a line for what to fix; Enter sends it back to carol with the note.
    await screenWhere('b5', (s) => expect(columnsOf(s, REVIEW_TITLES).Review).toContain('› #2 Work of carol'));
    tmux('send-keys', '-t', 'b5', 'x');
    await screenWhere('b5', (s) => expect(s).toContain('reject #2, what to fix: '));
    tmux('send-keys', '-t', 'b5', '-l', 'add a test for a and x');
    tmux('send-keys', '-t', 'b5', 'Enter');
    await vi.waitFor(() => expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'pending', owner: 'carol', review: { state: 'rejected', by: 'bob' } }), {
      timeout: 10_000,
      interval: 20,
    });
    expect((readTaskFile(t.board, 2).notes as { text: string }[]).map((n) => n.text)).toEqual(['sent back in review: add a test for a and x']);
    await screenWhere('b5', (s) => expect(s).toContain('sent #2: Work of carol back to carol'));

    // #3 is bob's own: a is refused on the status line, and nothing changes.
    await screenWhere('b5', (s) => expect(columnsOf(s, REVIEW_TITLES).Review).toContain('› #3 Work of bob'));
    tmux('send-keys', '-t', 'b5', 'a');
    await screenWhere('b5', (s) => expect(s).toContain("tasks: task #3 is bob's own work: someone other than bob approves or rejects it"));
    expect(readTaskFile(t.board, 3)).toMatchObject({ status: 'in_progress', review: { state: 'waiting' } });
    tmux('send-keys', '-t', 'b5', 'q');
    await screenWhere('b5', (s) => expect(s).toContain('board exited 0'));
  });

  it('stands children under their parent with its progress, says whose a child elsewhere is, and shows the chain and children in full', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const store = new TaskStore(t.board);
    await store.createTask({ subject: 'Release epic' });
    await store.createTask({ subject: 'Story', parent: 1 });
    await store.createTask({ subject: 'Write code', parent: 2 });
    await store.createTask({ subject: 'Docs', parent: 1 });
    await store.createTask({ subject: 'Unrelated' });
    await store.completeTask(4, { actor: 'ann' });
    startBoard('b7', t.board, 'ann');
    const screen = await screenWhere('b7', (s) => expect(s).toContain('Blocked (2)'));
    // The footer counts what the columns show: the two parents waiting for their children are blocked.
    expect(screen).toContain('1/5 done · 0 in progress · 2 ready · 2 blocked');
    const cols = columnsOf(screen);
    // In Blocked the epic, then its story right under it, indented; each parent with its progress.
    expect(cols.Blocked).toMatch(
      /#1 Release epic \(1\/2 done\)[^\n]*\n[^\n]* {4}waits for #2[^\n]*\n[^\n]* {2}└ #2 Story \(0\/1 done\)[^\n]*\n[^\n]* {6}waits for #3/,
    );
    // A child whose parent is in another column says whose it is.
    expect(cols.Ready).toMatch(/#3 Write code[^\n]*\n[^\n]*↑ #2 Story/);
    expect(cols.Ready).toContain('#5 Unrelated');
    expect(cols.Ready).not.toMatch(/#5 Unrelated[^\n]*\n[^\n]*↑/);
    expect(cols.Done).toMatch(/#4 Docs[^\n]*\n[^\n]*↑ #1 Release epic/);

    // Enter on the story: its chain of parents and its children with their status.
    tmux('send-keys', '-t', 'b7', 'Right');
    await screenWhere('b7', (s) => expect(columnsOf(s).Blocked).toContain('› #1 Release epic'));
    tmux('send-keys', '-t', 'b7', 'Down');
    await screenWhere('b7', (s) => expect(columnsOf(s).Blocked).toContain('› └ #2 Story'));
    tmux('send-keys', '-t', 'b7', 'Enter');
    const detail = await screenWhere('b7', (s) => expect(s).toContain('parent: #1 Release epic (pending)'));
    expect(detail).toMatch(/│children: 0\/1 done +│/);
    expect(detail).toMatch(/│  #3 Write code \(pending\) +│/);
    tmux('send-keys', '-t', 'b7', 'q');
    await screenWhere('b7', (s) => expect(s).toContain('board exited 0'));
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
    const p0 = await screenWhere('b3', (s) => expect(s).toContain('Ready (1)'));
    expect(columnsOf(p0).Ready).toContain('#1 Urgent fix');
    expect(p0).toContain('P0 only');
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
    // Typed ahead in one read (a paste, a fast typist): the keys after n are the note's text, not board keys ('l' moves right).
    tmux('send-keys', '-t', 'b3', '-l', 'nlater, still on #1');
    await screenWhere('b3', (s) => expect(s).toContain('note #1: later, still on #1'));
    tmux('send-keys', '-t', 'b3', 'Enter');
    await vi.waitFor(
      () =>
        expect((readTaskFile(t.board, 1).notes as { text: string }[]).map((n) => n.text)).toEqual([
          'seen on CI, q and p are just text here',
          'later, still on #1',
        ]),
      {
        timeout: 10_000,
        interval: 20,
      },
    );
    // The detail view lists the notes.
    tmux('send-keys', '-t', 'b3', 'Enter');
    await screenWhere('b3', (s) => {
      expect(s).toContain('notes (2):');
      expect(s).toMatch(/- \d{4}-\d\d-\d\dT\S+ ann: seen on CI/);
    });
    tmux('send-keys', '-t', 'b3', 'q');
    await screenWhere('b3', (s) => expect(s).toContain('board exited 0'));
  });

  it('a task cannot retitle the pane, write the clipboard or move the cursor: its escape sequences are shown escaped', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const store = new TaskStore(t.board);
    await store.createTask({ subject: 'Hostile', description: 'desc \u001b]2;PWNED-DESC\u0007 \u001b[2J end of desc' });
    await store.claimTask(1, { owner: 'mallory' });
    await store.addNote(1, 'note \u001b]2;PWNED-NOTE\u0007 \u001b]52;c;UFdORUQtTk9URQ==\u0007 \u001b[1;1H end of note', { actor: 'mallory' });
    // Owner, subject and activeForm written into the file by hand, as a foreign tool or a person could.
    const file = join(t.board, 'task_1.json');
    const task = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(
      file,
      JSON.stringify({
        ...task,
        subject: 'Title \u001b]2;PWNED\u0007 here',
        owner: 'mal\u001b]52;c;UFdORUQ=\u0007lory',
        activeForm: 'csi \u001b[31mred\u001b[0m \u009b2J tail',
      }) + '\n',
    );
    // A server of our own with the clipboard open to applications (`set-clipboard on` makes OSC 52 a paste buffer).
    tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'base', '-x', '40', '-y', '5', 'sleep 600');
    tmux('set-option', '-g', 'set-clipboard', 'on');
    tmux('set-option', '-g', 'allow-rename', 'on');
    startBoard('b4', t.board, 'ann', 200);
    const untouched = () => {
      expect(tmux('display-message', '-p', '-t', 'b4', '#{pane_title}')).not.toContain('PWNED');
      expect(tmux('list-buffers')).toBe('');
    };
    // The end of the subject is drawn, so every byte before it has reached tmux.
    await screenWhere('b4', (s) => expect(columnsOf(s)['In progress']).toContain('here'));
    untouched();
    // Enter on #1 shows the description and the note as well.
    tmux('send-keys', '-t', 'b4', 'Right');
    tmux('send-keys', '-t', 'b4', 'Right');
    await screenWhere('b4', (s) => expect(columnsOf(s)['In progress']).toContain('› #1'));
    tmux('send-keys', '-t', 'b4', 'Enter');
    const detail = await screenWhere('b4', (s) => {
      expect(s).toContain('end of desc');
      expect(s).toContain('end of note');
    });
    untouched();
    // What the task holds is visible, escaped.
    expect(detail).toContain('#1 Title \\x1b]2;PWNED\\x07 here');
    expect(detail).toContain('owner: mal\\x1b]52;c;UFdORUQ=\\x07lory');
    expect(detail).toContain('now: csi \\x1b[31mred\\x1b[0m \\u009b2J tail');
    expect(detail).toContain('desc \\x1b]2;PWNED-DESC\\x07 \\x1b[2J end of desc');
    expect(detail).toContain('note \\x1b]2;PWNED-NOTE\\x07 \\x1b]52;c;UFdORUQtTk9URQ==\\x07 \\x1b[1;1H end of note');
    tmux('send-keys', '-t', 'b4', 'q');
    await screenWhere('b4', (s) => expect(s).toContain('board exited 0'));
  });

  it('lines up its columns whatever the subjects hold: CJK, emoji sequences, combining and zero-width marks, RTL and bidi overrides', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const store = new TaskStore(t.board);
    const subjects = [
      'plain ascii ok',
      '漢字のタスク ok',
      'family 👨‍👩‍👧‍👦 ok',
      'flags 🇯🇵🇫🇷 ok',
      'thumbs 👍🏽👋🏿 ok',
      'heart ❤️ ok',
      'cafe\u0301 nai\u0308ve ok',
      'zero\u200bwidth\u2060join ok',
      'عربي שלום ok',
      'rtl \u202eevil\u202c ok',
      'isolate \u2067iso\u2069 ok',
    ];
    for (const subject of subjects) await store.createTask({ subject });
    startBoard('b5', t.board, 'ann', 200);
    // Each subject is on the screen whole, in the Ready column (polled: tmux may show a frame it is still drawing).
    const text = await screenWhere('b5', (s) => {
      expect(s).toContain(`Ready (${subjects.length})`);
      const lines = s.split('\n');
      for (const [i, subject] of subjects.entries()) {
        const row = lines.findIndex((r) => r.includes(`#${i + 1} `));
        expect(row, subject).toBeGreaterThan(0);
        expect(lines[row], subject).toMatch(/ ok\s*┃/);
      }
    });
    const rows = text.split('\n');
    const ready = columnsOf(text).Ready;
    expect(ready).toContain('rtl \\u202eevil\\u202c ok'); // the override shown, not obeyed
    expect(ready).toContain('isolate \\u2067iso\\u2069 ok');
    expect(ready).toContain('zero\\u200bwidth\\u2060join');
    // Where tmux put each row's borders, in screen cells (copy mode's cursor, not a count of characters).
    const cellOf = (row: number, how: 'jump-to-border' | 'end-of-line') => {
      tmux('copy-mode', '-t', 'b5');
      tmux('send-keys', '-t', 'b5', '-X', 'history-top');
      if (row > 0) tmux('send-keys', '-t', 'b5', '-X', '-N', String(row), 'cursor-down');
      tmux('send-keys', '-t', 'b5', '-X', 'start-of-line');
      if (how === 'end-of-line') tmux('send-keys', '-t', 'b5', '-X', 'end-of-line');
      else tmux('send-keys', '-t', 'b5', '-X', 'jump-forward', '┃');
      const [x, y] = tmux('display-message', '-p', '-t', 'b5', '#{copy_cursor_x} #{copy_cursor_y}').trim().split(' ').map(Number);
      tmux('send-keys', '-t', 'b5', '-X', 'cancel');
      expect(y).toBe(row);
      return x;
    };
    const columnWidth = 200 / 4;
    const cardRows = subjects.map((_, i) => rows.findIndex((r) => r.includes(`#${i + 1} `)));
    const borders = cardRows.map((row) => [subjects[cardRows.indexOf(row)], cellOf(row, 'jump-to-border'), cellOf(row, 'end-of-line')]);
    // The right border of Ready one cell before the next column, and every row ending at the screen's edge (copy mode's end of line is the cell after it).
    expect(borders).toEqual(subjects.map((s) => [s, columnWidth - 1, 200]));
    tmux('send-keys', '-t', 'b5', 'q');
    await screenWhere('b5', (s) => expect(s).toContain('board exited 0'));
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
    const everyday = [loaded('list'), loaded('done', '3')];
    for (const files of [viaYargs, everyday[0], loaded('board'), everyday[1]]) {
      expect(files.filter((f) => /\/node_modules\/(ink|react)\/|@dotasks\/terminal-board|\/packages\/terminal-board\/dist\//.test(f))).toEqual([]);
    }
    // The sanitizer is on their path, the width function and its Unicode tables are not.
    for (const files of everyday) expect(files.filter((f) => /\/node_modules\/(string-width|get-east-asian-width)\//.test(f))).toEqual([]);
  });
});
