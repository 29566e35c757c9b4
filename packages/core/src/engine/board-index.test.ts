import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';

// Counts the task files read (by the index, the claim view and the transaction alike).
// A test may also give the first read of a file other bytes (`firstRead`): what a pass made a moment earlier saw.
const reads = vi.hoisted(() => ({ paths: [] as string[], firstRead: new Map<string, string>() }));
vi.mock('../format/task-file.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../format/task-file.js')>();
  return {
    ...original,
    readTaskFile: (path: string) => {
      reads.paths.push(path);
      const read = original.readTaskFile(path);
      const earlier = reads.firstRead.get(path);
      if (read === undefined || earlier === undefined) return read;
      reads.firstRead.delete(path);
      return { ...read, text: earlier };
    },
  };
});
// Counts the locks taken.
const locks = vi.hoisted(() => ({ taken: 0 }));
vi.mock('../fs/locks.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../fs/locks.js')>();
  return {
    ...original,
    acquireLock: (...args: Parameters<typeof original.acquireLock>) => {
      locks.taken++;
      return original.acquireLock(...args);
    },
  };
});

import { BOARD_INDEX_FILE } from './index-file.js';
import { FINAL_TRUST_MS, REFRESH_TURN_MS, turnHeld } from './index-trust.js';
import { CorruptTaskError } from '../errors.js';
import { createRecord, parseTask, serializeTask, type Task } from '../format/format.js';
import { TaskStore } from '../store.js';
import { tempBoard } from '../../test/helpers/temp-board.js';
import { settleClock } from '../../test/helpers/settle-clock.js';

const fixtures = fileURLToPath(new URL('../../test/fixtures/', import.meta.url));

let root = '';

function newBoard(): TaskStore {
  const made = tempBoard('dotasks-index-');
  root = made.root;
  return made.store;
}

function makeTask(id: number, fields: Partial<Task> = {}): Task {
  return { id, subject: `Task ${id}`, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: createRecord(), ...fields };
}

/** The tasks of the board read straight from the files, as loadBoard did before the index. */
function readWithoutIndex(dir: string): Task[] {
  const tasks: Task[] = [];
  for (const name of readdirSync(dir)) {
    if (!/^task_[1-9][0-9]*\.json$/.test(name)) continue;
    try {
      tasks.push(parseTask(readFileSync(join(dir, name), 'utf8'), join(dir, name)));
    } catch {
      // bad files are problems, not tasks
    }
  }
  return tasks.sort((a, b) => a.id - b.id);
}

/** Waits until the file system's clock has moved past every entry of the board (settle-clock.ts). */
function settle(dir: string): Promise<void> {
  return settleClock(root, dir);
}

/** A whole second in the past, exactly representable, for mtimes that must not change. */
function fixedMtime(): number {
  return Math.floor(Date.now() / 1000) - 60;
}

/** Sets a completed task back to pending by hand, in place. */
function reopen(store: TaskStore, id: number): void {
  writeFileSync(store.taskPath(id), readFileSync(store.taskPath(id), 'utf8').replace('"completed"', '"pending"'));
}

function startReading(): string[] {
  reads.paths.length = 0;
  return reads.paths;
}

describe('the board index (loadBoard)', () => {
  it('reads nothing that did not change, and sees a task edited in place with the same size and the same mtime', async () => {
    const store = newBoard();
    await store.createTask({ subject: 'Alpha' });
    await store.createTask({ subject: 'Beta' });
    const path = store.taskPath(1);
    const mtime = fixedMtime();
    utimesSync(path, mtime, mtime);
    await settle(store.dir);
    store.loadBoard(); // writes the index
    const read = startReading();
    expect(store.loadBoard().tasks.map((t) => t.subject)).toEqual(['Alpha', 'Beta']);
    expect(read).toEqual([]);

    const before = statSync(path);
    writeFileSync(path, readFileSync(path, 'utf8').replace('Alpha', 'Alphb')); // the same inode, the same size
    utimesSync(path, mtime, mtime);
    const after = statSync(path);
    expect([after.ino, after.size, after.mtimeMs]).toEqual([before.ino, before.size, before.mtimeMs]);
    expect(store.loadBoard().tasks.map((t) => t.subject)).toEqual(['Alphb', 'Beta']);
    expect(read).toEqual([path]);
    expect(store.loadBoard().tasks).toStrictEqual(readWithoutIndex(store.dir));
  });

  // On file systems with coarse timestamps an edit right after a read can keep every part of the
  // identity; Linux 6.13+ (multigrain timestamps) gives a change after a stat a new ctime, so there
  // this only checks that the answer is right, elsewhere it checks the racy rule itself.
  it('does not trust a file that changed in the clock tick in which it was read (racy git)', () => {
    const store = newBoard();
    const path = store.taskPath(1);
    let sameTick = 0;
    for (let attempt = 0; attempt < 100 && sameTick < 10; attempt++) {
      writeFileSync(path, serializeTask(makeTask(1, { subject: 'aaaa' })));
      store.loadBoard();
      const before = statSync(path);
      writeFileSync(path, serializeTask(makeTask(1, { subject: 'bbbb' }))); // in place, the same size
      const after = statSync(path);
      // With coarse timestamps the edit often lands in the same tick: nothing in the identity changes.
      if ([after.ino, after.size, after.mtimeMs, after.ctimeMs].join() === [before.ino, before.size, before.mtimeMs, before.ctimeMs].join()) sameTick++;
      expect(store.loadBoard().tasks[0].subject, `attempt ${attempt}`).toBe('bbbb');
    }
  });

  it('sees a file replaced by a new one (a rename over it, or removed and written again) with the same size and mtime', async () => {
    const store = newBoard();
    await store.createTask({ subject: 'One' });
    await store.createTask({ subject: 'Two' });
    const mtime = fixedMtime();
    for (const id of [1, 2]) utimesSync(store.taskPath(id), mtime, mtime);
    await settle(store.dir);
    store.loadBoard();

    // As git checkout does: a new file renamed into place.
    const temp = join(store.dir, 'incoming.tmp');
    writeFileSync(temp, readFileSync(store.taskPath(1), 'utf8').replace('One', 'Uno'));
    utimesSync(temp, mtime, mtime);
    const inode = statSync(store.taskPath(1)).ino;
    renameSync(temp, store.taskPath(1));
    expect(statSync(store.taskPath(1)).ino).not.toBe(inode);
    // Removed and written again: the file system may even hand out the same inode number.
    const text = readFileSync(store.taskPath(2), 'utf8').replace('Two', 'Dos');
    unlinkSync(store.taskPath(2));
    writeFileSync(store.taskPath(2), text);
    utimesSync(store.taskPath(2), mtime, mtime);

    expect(store.loadBoard().tasks.map((t) => t.subject)).toEqual(['Uno', 'Dos']);
  });

  it('sees files added and removed, also when the folder was trusted', async () => {
    const store = newBoard();
    for (const subject of ['One', 'Two', 'Three']) await store.createTask({ subject });
    await settle(store.dir);
    store.loadBoard();
    const read = startReading();
    expect(store.loadBoard().tasks).toHaveLength(3);
    expect(read).toEqual([]); // the folder did not change: not even listed again

    writeFileSync(store.taskPath(7), serializeTask(makeTask(7, { subject: 'Seven, by hand' })));
    unlinkSync(store.taskPath(2));
    expect(store.loadBoard().tasks.map((t) => t.id)).toEqual([1, 3, 7]);
    expect(read).toEqual([store.taskPath(7)]);
    expect(store.loadBoard().tasks).toStrictEqual(readWithoutIndex(store.dir));
  });

  it('ignores a damaged, truncated, empty or foreign index and writes a good one', async () => {
    const store = newBoard();
    for (const subject of ['Alpha', 'Beta', 'Gamma']) await store.createTask({ subject });
    await store.completeTask(2);
    await settle(store.dir);
    const good = store.loadBoard();
    const index = join(store.runtimeDir, BOARD_INDEX_FILE);
    const bytes = readFileSync(index);
    const damages: Record<string, (b: Buffer) => Buffer | string> = {
      truncated: (b) => b.subarray(0, b.length >> 1),
      'cut at its last byte': (b) => b.subarray(0, b.length - 1),
      empty: () => '',
      'a subject changed, still valid JSON': (b) => b.toString().replace('Alpha', 'Omega'),
      'another version': (b) => b.toString().replace('"version":3', '"version":9'),
      'not an index at all': () => 'hello\n',
    };
    for (const [what, damage] of Object.entries(damages)) {
      writeFileSync(index, damage(bytes));
      const read = startReading();
      expect(store.loadBoard(), what).toStrictEqual(good);
      expect(read, what).toHaveLength(3); // every file read: the index was not used
      startReading();
      expect(store.loadBoard(), what).toStrictEqual(good);
      expect(read, what).toEqual([]); // rewritten, and used again
    }
    // Claims do not trust a damaged index either.
    writeFileSync(index, bytes.toString().replace('"status":"pending"', '"status":"deleted"'));
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(1);
    // A folder where the index should be: no index, same board.
    rmSync(index);
    mkdirSync(index);
    expect(store.loadBoard().tasks).toStrictEqual(good.tasks.map((t) => (t.id === 1 ? { ...t, status: 'in_progress', owner: 'a' } : t)));
  });

  it('still reports every bad task file with its position, and a folder named like a task', async () => {
    const store = newBoard();
    await store.createTask({ subject: 'Good' });
    await store.createTask({ subject: 'Turns bad' });
    const broken = join(store.dir, 'task_5.json');
    const brokenText = '{\n  "id": 5,\n  "subject": \n}\n';
    writeFileSync(broken, brokenText);
    writeFileSync(join(store.dir, 'task_05.json'), serializeTask(makeTask(5)));
    mkdirSync(join(store.dir, 'task_9.json'));
    await settle(store.dir);
    const expected = (path: string, text: string, id: number) => {
      try {
        parseTask(text, path);
      } catch (error) {
        const e = error as CorruptTaskError;
        return { file: path, id, line: e.line, column: e.column, message: String(e.details.problem) };
      }
      throw new Error('expected a bad file');
    };
    const problems = [
      { file: join(store.dir, 'task_05.json'), message: 'not a task file name (expected task_N.json, N without leading zeros)' },
      expected(broken, brokenText, 5),
      {
        file: store.taskPath(9),
        id: 9,
        line: 1,
        column: 1,
        message: 'not a regular file (a folder or a device has this name); move it out of the board folder',
      },
    ];
    const first = store.loadBoard();
    expect(first.problems).toEqual(problems);
    expect(first.problems[1]).toMatchObject({ line: 4, column: 1 });
    const read = startReading();
    expect(store.loadBoard()).toStrictEqual(first);
    expect(read.sort()).toEqual([broken, store.taskPath(9)]); // bad files are looked at every time

    // A good file broken in place, and a bad one mended.
    const text2 = readFileSync(store.taskPath(2), 'utf8');
    writeFileSync(store.taskPath(2), text2.replace('"subject": "Turns bad"', '"subject": 42'));
    writeFileSync(broken, serializeTask(makeTask(5, { subject: 'Mended' })));
    const third = store.loadBoard();
    expect(third.tasks.map((t) => [t.id, t.subject])).toEqual([
      [1, 'Good'],
      [5, 'Mended'],
    ]);
    expect(third.problems.map((p) => [p.file, p.line, p.column])).toEqual([
      [join(store.dir, 'task_05.json'), undefined, undefined],
      [store.taskPath(2), 3, 3],
      [store.taskPath(9), 1, 1],
    ]);
  });

  it('two processes rewriting the index all the time never make a reader see a wrong board', async () => {
    const store = newBoard();
    const count = 100;
    for (let id = 1; id <= count; id++) writeFileSync(store.taskPath(id), serializeTask(makeTask(id, { status: id % 3 ? 'pending' : 'completed' })));
    const stop = join(root, 'stop');
    const writers = [0, 1].map(
      () =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
          const child = spawn(process.execPath, [join(fixtures, 'index-writer.mjs'), store.dir, stop]);
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d) => (stdout += d));
          child.stderr.on('data', (d) => (stderr += d));
          child.on('error', reject);
          child.on('close', (code) => resolve({ code, stdout, stderr }));
        }),
    );
    const mtime = fixedMtime();
    let next = count + 1;
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    try {
      let truth = readWithoutIndex(store.dir);
      for (let round = 0; round < 100; round++) {
        const ids = truth.map((t) => t.id);
        const id = ids[random(ids.length)];
        const path = store.taskPath(id);
        const text = readFileSync(path, 'utf8');
        switch (round % 5) {
          case 0: {
            // In place, the same size, the mtime put back.
            const flipped = text.includes('"Task ') ? text.replace('"Task ', '"Tusk ') : text.replace('"Tusk ', '"Task ');
            writeFileSync(path, flipped);
            utimesSync(path, mtime, mtime);
            break;
          }
          case 1:
            // A status change in place.
            writeFileSync(path, text.includes('"completed"') ? text.replace('"completed"', '"pending"') : text.replace('"pending"', '"completed"'));
            break;
          case 2:
            // Replaced by rename, the same size and mtime.
            writeFileSync(`${path}.new`, text.replace('"Task ', '"Tosk '));
            utimesSync(`${path}.new`, mtime, mtime);
            renameSync(`${path}.new`, path);
            break;
          case 3:
            writeFileSync(store.taskPath(next), serializeTask(makeTask(next++)));
            break;
          default:
            unlinkSync(path);
        }
        const seen = store.loadBoard();
        truth = readWithoutIndex(store.dir);
        // As text: a deep comparison of 100 tasks a round is slow, and JSON shows every field.
        expect(JSON.stringify(seen.tasks), `round ${round}`).toBe(JSON.stringify(truth));
        expect(seen.problems).toEqual([]);
      }
    } finally {
      writeFileSync(stop, '');
    }
    for (const result of await Promise.all(writers)) {
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).passes).toBeGreaterThan(0);
    }
  });
});

describe('the board index (claimNext)', () => {
  it('claims a completed task reopened by hand, or a task file written by hand, at once when nothing else is ready', async () => {
    const store = newBoard();
    await store.createTask({ subject: 'Done long ago' });
    await store.completeTask(1);
    await settle(store.dir);
    await expect(store.claimNext({ owner: 'a' })).rejects.toMatchObject({ reason: 'nothing_ready' });
    reopen(store, 1);
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(1);
    // Not made by dotasks: .highwatermark still says 1.
    writeFileSync(store.taskPath(40), serializeTask(makeTask(40, { subject: 'Written by hand' })));
    expect((await store.claimNext({ owner: 'b' })).task.id).toBe(40);
  });

  it('claims in id order a task reopened by hand once tasks list has looked at the board', async () => {
    const store = newBoard();
    await store.createTask({ subject: 'Finished' });
    await store.completeTask(1);
    await store.createTask({ subject: 'Ready' });
    await settle(store.dir);
    store.loadBoard();
    reopen(store, 1);
    store.loadBoard(); // tasks list: an exact pass, which updates the index
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(1);
  });

  it('with later tasks ready, takes a task reopened or written by hand in id order once the trust in the index has run out', async () => {
    const store = newBoard();
    for (const subject of ['Done', 'Gone', 'Ready', 'Ready too', 'And this']) await store.createTask({ subject });
    await store.completeTask(1);
    unlinkSync(store.taskPath(2));
    await settle(store.dir);
    store.loadBoard();
    reopen(store, 1);
    writeFileSync(store.taskPath(2), serializeTask(makeTask(2, { subject: 'Written by hand' }))); // .highwatermark stays 5
    // Within FINAL_TRUST_MS the index's word is taken (documented): #1 completed, no #2, so #3 comes first.
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(3);
    // The index's mtime is when an exact pass last found it right: make that longer ago than the trust lasts.
    const then = (Date.now() - FINAL_TRUST_MS - 1000) / 1000;
    utimesSync(join(store.runtimeDir, BOARD_INDEX_FILE), then, then);
    expect((await store.claimNext({ owner: 'b' })).task.id).toBe(1);
    expect((await store.claimNext({ owner: 'c' })).task.id).toBe(2);
  });

  it('a claimant keeps the index it read only while the file keeps its identity: an index changed in place is read again', async () => {
    const store = newBoard();
    for (const subject of ['One', 'Two', 'Three']) await store.createTask({ subject });
    await settle(store.dir);
    store.loadBoard();
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(1);
    // Damage the open part in place, same size, and put the times back: only the ctime tells.
    const index = join(store.runtimeDir, BOARD_INDEX_FILE);
    const before = statSync(index);
    const text = readFileSync(index, 'latin1');
    const at = text.indexOf('Two');
    writeFileSync(index, text.slice(0, at) + 'Twp' + text.slice(at + 3), 'latin1');
    utimesSync(index, before.atime, before.mtime);
    expect(statSync(index).size).toBe(before.size);
    // The seal no longer matches: the claimant must not rank on what it kept, but make an exact pass, which writes a new index.
    expect((await store.claimNext({ owner: 'b' })).task.id).toBe(2);
    expect(statSync(index).ino).not.toBe(before.ino);
    expect(readFileSync(index, 'latin1')).not.toContain('Twp');
  });

  it('when the trust runs out, one claimant makes the exact pass; the others go on with the index meanwhile, for 2 s at most', async () => {
    const store = newBoard();
    for (const subject of ['Done', 'Done too', 'Ready', 'Ready too']) await store.createTask({ subject });
    await store.completeTask(1);
    await store.completeTask(2);
    await settle(store.dir);
    store.loadBoard();
    reopen(store, 1); // by hand: only an exact pass sees it
    const index = join(store.runtimeDir, BOARD_INDEX_FILE);
    const turn = join(store.runtimeDir, 'board-index-refresh.lock');
    const ranOut = (by: number) => {
      const then = (Date.now() - FINAL_TRUST_MS - by) / 1000;
      utimesSync(index, then, then);
    };
    // Another claimant is making the pass (its turn is fresh): this one takes the index's word, #3.
    ranOut(500);
    mkdirSync(turn);
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(3);
    // The turn left by a claimant that died is taken over once it is 2 s old: the exact pass sees #1 reopened.
    const old = (Date.now() - 3000) / 1000;
    utimesSync(turn, old, old);
    expect((await store.claimNext({ owner: 'b' })).task.id).toBe(1);
    expect(readdirSync(store.runtimeDir)).not.toContain('board-index-refresh.lock'); // given back after the pass
    // 2 s past the trust the index is not used any more: a claimant waits for the one making the pass, then
    // ranks on the index it wrote (one pass for all, not one each) ...
    reopen(store, 2);
    ranOut(2500);
    mkdirSync(turn);
    const started = Date.now();
    const waiting = store.claimNext({ owner: 'c' });
    await new Promise((done) => setTimeout(done, 100));
    store.loadBoard(); // the other claimant's pass
    rmSync(turn, { recursive: true });
    expect((await waiting).task.id).toBe(2);
    expect(Date.now() - started).toBeLessThan(1500);
    // ... and waits 2 s at most for a turn that is not given back, then takes it over and makes the pass.
    ranOut(2500);
    mkdirSync(turn);
    const stuck = Date.now();
    expect((await store.claimNext({ owner: 'd' })).task.id).toBe(4);
    expect(Date.now() - stuck).toBeLessThan(3500);
    expect(readdirSync(store.runtimeDir)).not.toContain('board-index-refresh.lock');
  });

  it('a claimant that finds the turn taken after its wait, with no index to use, waits for that pass instead of making its own', async () => {
    const store = newBoard();
    for (let i = 1; i <= 30; i++) await store.createTask({ subject: `Task ${i}` });
    rmSync(join(store.runtimeDir, BOARD_INDEX_FILE), { force: true });
    const turn = join(store.runtimeDir, 'board-index-refresh.lock');
    const reads = startReading();
    // Nobody has the turn when the claimant looks (awaitExactPass returns at once); another claimant takes it
    // before the claimant's next step, as when eight start together.
    const claiming = store.claimNext({ owner: 'a' });
    mkdirSync(turn);
    await new Promise((done) => setTimeout(done, 100));
    expect(reads).toEqual([]);
    store.loadBoard(); // the other claimant's pass, which writes the index
    rmSync(turn, { recursive: true });
    reads.length = 0;
    expect((await claiming).task.id).toBe(1);
    expect(reads.length).toBeLessThan(5);
  });

  it('a claimant that made the exact pass skips candidates claimed since without taking their locks', async () => {
    const store = newBoard();
    for (let i = 1; i <= 41; i++) await store.createTask({ subject: `Task ${i}` });
    // #1–#40 were claimed by others just after this claimant's pass read them as pending.
    for (let id = 1; id <= 40; id++) {
      reads.firstRead.set(store.taskPath(id), readFileSync(store.taskPath(id), 'utf8'));
      writeFileSync(store.taskPath(id), serializeTask(makeTask(id, { subject: `Task ${id}`, status: 'in_progress', owner: 'other' })));
    }
    rmSync(join(store.runtimeDir, BOARD_INDEX_FILE), { force: true });
    locks.taken = 0;
    expect((await store.claimNext({ owner: 'a' })).task.id).toBe(41);
    // Its own claim takes its owner lock, the task's lock and the event log's; trying each gone candidate took two more.
    expect(locks.taken).toBeLessThan(10);
    reads.firstRead.clear();
  });

  it('a turn runs out by the clock the wait keeps: whole milliseconds, as Date.now() counts them', () => {
    const store = newBoard();
    const turn = join(store.runtimeDir, 'board-index-refresh.lock');
    mkdirSync(turn, { recursive: true });
    // The file system stamps to a fraction of a millisecond (this machine: up to 0.94 ms past the Date.now()
    // read just before the mkdir, in 93% of 2,000 tries); give the turn such a stamp.
    const whole = Math.floor(statSync(turn).mtimeMs);
    utimesSync(turn, (whole + 0.6) / 1000, (whole + 0.6) / 1000);
    expect(statSync(turn).mtimeMs).toBeGreaterThan(whole);
    expect(turnHeld(turn, whole + REFRESH_TURN_MS - 1)).toBe(true);
    // A claimant that started waiting at `whole` and waited REFRESH_TURN_MS finds it run out, and takes it over.
    expect(turnHeld(turn, whole + REFRESH_TURN_MS)).toBe(false);
  });

  it('on 10,000 tasks of which 9,990 are completed, reads a handful of task files', async () => {
    const store = newBoard();
    const count = 10_000;
    for (let id = 1; id <= count; id++) {
      const done = id <= count - 10;
      writeFileSync(store.taskPath(id), serializeTask(makeTask(id, { status: done ? 'completed' : 'pending', blockedBy: done || id % 2 ? [] : [id - 5] })));
    }
    await settle(store.dir);
    store.loadBoard(); // the first reader writes the index

    const read = startReading();
    const claim = await store.claimNext({ owner: 'a' });
    expect(claim.task.id).toBe(count - 9);
    expect(read.length, read.join('\n')).toBeLessThanOrEqual(3);

    // A task made and one finished since the index was written: still a handful.
    await store.createTask({ subject: 'New' });
    await store.completeTask(count - 9, { actor: 'a' });
    startReading();
    const next = await store.claimNext({ owner: 'b' });
    expect(next.task.id).toBe(count - 8);
    expect(read.length, read.join('\n')).toBeLessThanOrEqual(6);
  });
});
