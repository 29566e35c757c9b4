import { spawn } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { TASKS_BIN, WAIT, cleanEnv, readTaskFile, tempBoard, type WatchEventLine } from './helpers.js';

// An idle watcher's periodic pass (docs/decisions.md, "An idle tasks watch"):
// on a board where nothing changed it opens no task file and stats only the
// open work and a slice of the history, where it used to make a full
// reconcile (a stat of every file) each period; and an edit in place that the
// file events never reported is still caught by it. The edit is written
// through a hard link in another folder: the same file, changed in place,
// which a watch on the board folder is not told of.
const CLOSED = 4980;
const OPEN = 20;
const N = CLOSED + OPEN;
/** What a pass looks at, at most: the open files and the sweep's next closed ones (quiet-look.ts, SWEEP_FILES). */
const PASS_STATS = OPEN + 1000;

/** Completed history, then ten pairs of open tasks, the second of each waiting for the first. */
function writeBoard(board: string): void {
  for (let id = 1; id <= N; id++) {
    const open = id > CLOSED;
    const first = open && (id - CLOSED) % 2 === 1;
    const task = {
      id,
      subject: `Step ${id}`,
      description: '',
      status: open ? 'pending' : 'completed',
      owner: '',
      blockedBy: open && !first ? [id - 1] : [],
      blocks: first ? [id + 1] : [],
    };
    writeFileSync(join(board, `task_${id}.json`), `${JSON.stringify(task, null, 2)}\n`);
  }
  writeFileSync(join(board, '.highwatermark'), `${N}\n`);
}

describe('an idle tasks watch', () => {
  const cleanups: (() => void | Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('reads no task file on its periodic pass, and still catches an edit in place the file events missed', async () => {
    const t = tempBoard();
    cleanups.push(t.cleanup);
    writeBoard(t.board);
    new TaskStore(t.board).loadBoard(); // the board index, as a first `tasks list` writes it
    const trace = join(t.root, 'watch.trace');
    const child = spawn(
      'strace',
      [
        '-f',
        '-qq',
        '-s',
        '120',
        '-e',
        'trace=openat,statx,newfstatat,stat,lstat,write',
        '-o',
        trace,
        process.execPath,
        TASKS_BIN,
        'watch',
        '--json',
        '--reconcile-interval',
        '0.3',
      ],
      { cwd: t.root, env: cleanEnv({ TASKS_DEBUG: '1' }) },
    );
    let stderr = '';
    const events: WatchEventLine[] = [];
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      for (let nl = stdout.indexOf('\n'); nl >= 0; nl = stdout.indexOf('\n')) {
        events.push(JSON.parse(stdout.slice(0, nl)) as WatchEventLine);
        stdout = stdout.slice(nl + 1);
      }
    });
    const exited = new Promise((resolve) => child.on('close', resolve));
    cleanups.push(async () => {
      // strace passes no signal on: the watcher is stopped by its pid, and strace ends with it.
      const pid = /\(pid (\d+)\)/.exec(stderr)?.[1];
      if (pid) process.kill(Number(pid), 'SIGTERM');
      else child.kill('SIGKILL');
      await exited;
    });
    await vi.waitFor(() => expect(stderr).toContain('watching'), WAIT);
    const passes = () => stderr.slice(stderr.indexOf('watching')).match(/periodic pass: nothing moved|reconciled/g)?.length ?? 0;
    await vi.waitFor(() => expect(passes()).toBeGreaterThanOrEqual(3), WAIT);

    // Passes two and three in the trace: between the first pass's line and the third's.
    const lines = readFileSync(trace, 'utf8').split('\n');
    const marks = lines.flatMap((l, i) => (/write\(2, "tasks watch: (periodic pass: nothing moved|reconciled)/.test(l) ? [i] : []));
    const start = lines.findIndex((l) => /write\(2, "tasks watch: watching/.test(l));
    const after = marks.filter((i) => i > start);
    expect(after.length).toBeGreaterThanOrEqual(3);
    const looked = lines.slice(after[0], after[2]).filter((l) => /task_[0-9]+\.json"/.test(l));
    expect(looked.filter((l) => /openat\(/.test(l))).toEqual([]);
    expect(looked.filter((l) => /(statx|newfstatat|stat|lstat)\(/.test(l)).length).toBeLessThanOrEqual(2 * PASS_STATS);

    // #4981 completed through a hard link: no file event, so only the periodic pass can see it.
    const aside = join(t.root, 'aside');
    mkdirSync(aside);
    linkSync(join(t.board, `task_${CLOSED + 1}.json`), join(aside, 'open.json'));
    const open = JSON.parse(readFileSync(join(aside, 'open.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(aside, 'open.json'), JSON.stringify({ ...open, status: 'completed' }, null, 2));
    await vi.waitFor(() => expect(readTaskFile(t.board, CLOSED + 2).blockedBy).toEqual([]), WAIT);
    await vi.waitFor(() => expect(events).toContainEqual(expect.objectContaining({ type: 'unblocked', task: CLOSED + 2, by: CLOSED + 1 })), WAIT);
    expect(events).toContainEqual(expect.objectContaining({ type: 'completed', task: CLOSED + 1, by: 'hand' }));

    // Once a pass finds nothing moved again, a completed task broken the same way is found by the sweep within a few passes.
    const idle = () => stderr.match(/periodic pass: nothing moved/g)?.length ?? 0;
    const settled = idle();
    await vi.waitFor(() => expect(idle()).toBeGreaterThan(settled), WAIT);
    linkSync(join(t.board, 'task_17.json'), join(aside, 'closed.json'));
    writeFileSync(join(aside, 'closed.json'), '{ "id": 17, "subject": "half');
    await vi.waitFor(() => expect(events).toContainEqual(expect.objectContaining({ type: 'invalid', file: 'task_17.json' })), WAIT);
  });
});
