import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TasksError } from '../errors.js';
import { parseEvents } from '../events/events.js';
import { setFaultHook, systemError } from '../fs/fsio.js';
import { journalDir } from './journal.js';
import { readLease } from '../runtime/leases.js';
import type { TaskStore } from '../store.js';
import { tempBoard } from '../../test/helpers/temp-board.js';

/**
 * The one writer (transaction.ts), in process: a change of several files is
 * whole or not at all whatever rename fails, a lock lost before the commit
 * point costs nothing, and the board refuses what it could not read back.
 */

let root = '';
afterEach(() => {
  setFaultHook(undefined);
  root = '';
});

function board(): TaskStore {
  const made = tempBoard('dotasks-tx-');
  root = made.root;
  return made.store;
}

/** Every file of the board folder (runtime records included) with its bytes, except the event log and locks. */
function snapshotFiles(store: TaskStore): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, prefix: string) => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      if (name.name.endsWith('.lock') || name.name === 'events.jsonl') continue;
      if (name.isDirectory()) walk(join(dir, name.name), `${prefix}${name.name}/`);
      else out[`${prefix}${name.name}`] = readFileSync(join(dir, name.name), 'utf8');
    }
  };
  walk(store.dir, '');
  return out;
}

function events(store: TaskStore) {
  return parseEvents(readFileSync(join(store.runtimeDir, 'events.jsonl'), 'utf8'));
}

/** #1 blocks #2, #3 and #4; #1 is claimed by ann. */
async function hubBoard(): Promise<TaskStore> {
  const store = board();
  await store.createTask({ subject: 'hub' });
  for (let i = 0; i < 3; i++) await store.createTask({ subject: `dependent ${i + 1}`, blockedBy: [1] });
  await store.claimTask(1, { owner: 'ann', lease: { ttlSeconds: 600 } });
  return store;
}

/** Fails the n-th call of `call` (counting from 1) with `code`. */
function failNth(call: string, n: number, code = 'EIO'): () => number {
  let seen = 0;
  setFaultHook((c, path) => {
    if (c !== call) return;
    seen++;
    if (seen === n) throw systemError(code, c, path);
  });
  return () => seen;
}

describe('a change of several files is whole or not at all', () => {
  it('a rename failing at any point of a completion leaves every file as it was, no event, no journal', async () => {
    // Count the renames of one completion first.
    const probe = await hubBoard();
    const renames = failNth('rename', Number.POSITIVE_INFINITY);
    await probe.completeTask(1, { actor: 'ann' });
    const total = renames();
    setFaultHook(undefined);
    rmSync(root, { recursive: true, force: true });
    expect(total).toBe(5); // the journal and 4 task files; the claim record's removal is an unlink

    for (let n = 1; n <= total; n++) {
      const store = await hubBoard();
      const before = snapshotFiles(store);
      const logged = events(store).length;
      failNth('rename', n);
      const error = await store.completeTask(1, { actor: 'ann' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      setFaultHook(undefined);
      expect(error, `rename ${n} of ${total}`).toBeInstanceOf(TasksError);
      expect((error as TasksError).code).toBe('E_IO');
      expect((error as TasksError).message).toMatch(/EIO.*nothing was changed$/);
      expect(snapshotFiles(store), `rename ${n} of ${total}`).toEqual(before);
      expect(events(store)).toHaveLength(logged);
      expect(existsSync(join(journalDir(store.runtimeDir), 'board.json'))).toBe(false);
      // And the same change goes through afterwards.
      const done = await store.completeTask(1, { actor: 'ann' });
      expect(done.unblocked).toEqual([2, 3, 4]);
      expect(store.getTask(2).blockedBy).toEqual([]);
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('removing the claim record failing undoes the completion too', async () => {
    const store = await hubBoard();
    const before = snapshotFiles(store);
    failNth('unlink', 1);
    await expect(store.completeTask(1, { actor: 'ann' })).rejects.toMatchObject({ code: 'E_IO', message: expect.stringMatching(/nothing was changed$/) });
    setFaultHook(undefined);
    expect(snapshotFiles(store)).toEqual(before);
  });

  it('when undoing fails too, the journal stays and the next command finishes the change, events once', async () => {
    const store = await hubBoard();
    // The 3rd rename fails (a task file), then every rename after it fails: the undo cannot run.
    let seen = 0;
    setFaultHook((call, path) => {
      if (call === 'rename' && ++seen >= 3) throw systemError('EIO', call, path);
    });
    const error = (await store.completeTask(1, { actor: 'ann' }).catch((e: unknown) => e)) as TasksError;
    setFaultHook(undefined);
    expect(error).toMatchObject({ code: 'E_IO' });
    expect(error.message).toMatch(/half applied and the next command that takes these locks completes it/);
    expect(existsSync(join(journalDir(store.runtimeDir), 'board.json'))).toBe(true);
    expect(events(store).filter((e) => e.type === 'completed')).toHaveLength(0);

    // Any command that takes the board lock finishes it first.
    await store.createTask({ subject: 'next' });
    expect(existsSync(join(journalDir(store.runtimeDir), 'board.json'))).toBe(false);
    expect(store.getTask(1).status).toBe('completed');
    for (const id of [2, 3, 4]) expect(store.getTask(id).blockedBy).toEqual([]);
    expect(readLease(store.runtimeDir, 1)).toBeUndefined();
    const log = events(store);
    expect(log.filter((e) => e.type === 'completed')).toHaveLength(1);
    expect(log.filter((e) => e.type === 'unblocked').map((e) => e.task)).toEqual([2, 3, 4]);
    const recovered = log.find((e) => e.type === 'recovered');
    expect(recovered).toMatchObject({ recoveredTx: log.find((e) => e.type === 'completed')!.tx });
    // A second look finds nothing more to do.
    await store.createTask({ subject: 'after' });
    expect(events(store).filter((e) => e.type === 'completed')).toHaveLength(1);
  });

  it('a create whose event log cannot be written creates nothing (a retry does not make it twice)', async () => {
    const store = board();
    failNth('append', 1, 'ENOSPC');
    await expect(store.createTask({ subject: 'once' })).rejects.toMatchObject({ code: 'E_IO', message: expect.stringMatching(/ENOSPC.*nothing was changed/) });
    setFaultHook(undefined);
    expect(store.listIds()).toEqual([]);
    expect(readFileSync(join(store.dir, '.highwatermark'), 'utf8')).toBe('0\n');
    expect((await store.createTask({ subject: 'once' })).task.id).toBe(1);
    expect(store.listIds()).toEqual([1]);
  });

  it('a runtime folder that cannot be written fails a create before any task file is written', async () => {
    const store = board();
    // The journal goes to .runtime/journal: make it a file, so nothing can be created in it.
    writeFileSync(join(store.runtimeDir, 'journal'), 'not a folder');
    await expect(store.createTask({ subject: 'x', blockedBy: [] })).rejects.toBeInstanceOf(Error);
    expect(store.listIds()).toEqual([]);
  });
});

describe('a torn event line', () => {
  it('is ended before the next append: no event is glued to it and seq goes on from the last whole one', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    appendFileSync(join(store.runtimeDir, 'events.jsonl'), '{"seq":2,"at":"2026-01-01T00:00:00.000Z","type":"comp');
    await store.createTask({ subject: 'two' });
    const lines = readFileSync(join(store.runtimeDir, 'events.jsonl'), 'utf8').split('\n');
    expect(lines[1]).toBe('{"seq":2,"at":"2026-01-01T00:00:00.000Z","type":"comp');
    const log = events(store);
    expect(log.map((e) => [e.seq, e.type, e.task])).toEqual([
      [1, 'created', 1],
      [2, 'created', 2],
    ]);
  });
});

describe('the high-water mark', () => {
  const cases: [string, string][] = [
    ['garbage', 'twelve\n'],
    ['git conflict markers', '<<<<<<< HEAD\n7\n=======\n9\n>>>>>>> theirs\n'],
    ['two numbers', '4 5\n'],
    ['a number above 2^53', '9007199254740993\n'],
  ];
  for (const [what, text] of cases) {
    it(`holding ${what} stops id allocation with the file and the fix named`, async () => {
      const store = board();
      await store.createTask({ subject: 'one' });
      writeFileSync(join(store.dir, '.highwatermark'), text);
      const error = (await store.createTask({ subject: 'two' }).catch((e: unknown) => e)) as TasksError;
      expect(error).toMatchObject({ code: 'E_CORRUPT' });
      expect(error.message).toContain(join(store.dir, '.highwatermark'));
      expect(error.message).toContain('tasks doctor --fix');
      expect(store.listIds()).toEqual([1]);
    });
  }

  /** A task file as a person or another clone would have put it there, not through this board. */
  const byHand = (store: TaskStore, id: number) => {
    const text = `${JSON.stringify({ id, subject: `by hand ${id}`, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [] }, null, 2)}\n`;
    writeFileSync(join(store.dir, `task_${id}.json`), text);
    return text;
  };

  it('files just past the mark (a pull that did not raise it, tasks made by hand, a folder): the next id is above them all, none is overwritten', async () => {
    const store = board();
    for (const s of ['one', 'two', 'three']) await store.createTask({ subject: s });
    const four = byHand(store, 4);
    const six = byHand(store, 6);
    mkdirSync(join(store.dir, 'task_9.json'));
    expect((await store.createTask({ subject: 'next' })).task.id).toBe(10);
    expect(readFileSync(join(store.dir, 'task_4.json'), 'utf8')).toBe(four);
    expect(readFileSync(join(store.dir, 'task_6.json'), 'utf8')).toBe(six);
    // A batch hands out ids one after the other, each above them too.
    const batch = await store.batchWrite([{ subject: 'a' }, { subject: 'b' }]);
    expect(batch.tasks.map((t) => t.id)).toEqual([11, 12]);
    expect(readFileSync(join(store.dir, '.highwatermark'), 'utf8')).toBe('12\n');
  });

  it('a batch that reaches a file past the mark steps above it instead of failing on it', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    const far = byHand(store, 150);
    const batch = await store.batchWrite(Array.from({ length: 160 }, (_, i) => ({ subject: `t${i}` })));
    const ids = batch.tasks.map((t) => t.id);
    expect(new Set(ids).size).toBe(160);
    expect(ids).not.toContain(150);
    expect(readFileSync(join(store.dir, 'task_150.json'), 'utf8')).toBe(far);
  });

  it('without a mark, ids go on above every file present, never into a gap someone removed by hand', async () => {
    const store = board();
    for (let i = 0; i < 3; i++) await store.createTask({ subject: `t${i}` });
    const far = byHand(store, 400);
    rmSync(join(store.dir, '.highwatermark'));
    for (const id of [1, 2, 3]) rmSync(join(store.dir, `task_${id}.json`));
    expect((await store.createTask({ subject: 'next' })).task.id).toBe(401);
    expect(readFileSync(join(store.dir, 'task_400.json'), 'utf8')).toBe(far);
    expect(readFileSync(join(store.dir, '.highwatermark'), 'utf8')).toBe('401\n');
  });

  it('a file far past the mark is not looked for (the folder is not listed), and is never overwritten: ids step above it once they near it', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    const far = byHand(store, 5000);
    expect((await store.createTask({ subject: 'two' })).task.id).toBe(2);
    writeFileSync(join(store.dir, '.highwatermark'), '4990\n');
    expect((await store.createTask({ subject: 'near it' })).task.id).toBe(5001);
    expect(readFileSync(join(store.dir, 'task_5000.json'), 'utf8')).toBe(far);
  });

  it('at the largest safe integer refuses to hand out an id above it', async () => {
    const store = board();
    writeFileSync(join(store.dir, '.highwatermark'), `${Number.MAX_SAFE_INTEGER}\n`);
    await expect(store.createTask({ subject: 'x' })).rejects.toMatchObject({ code: 'E_INVALID', message: expect.stringMatching(/no more ids/) });
    expect(store.listIds()).toEqual([]);
  });
});

describe('nothing is written that the board could not read back', () => {
  it('metadata nested 20,000 deep is refused by create, update and release before anything copies it (it overflowed the stack)', async () => {
    const store = board();
    const deep = JSON.parse('{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)) as Record<string, unknown>;
    const refusal = { code: 'E_INVALID', message: expect.stringMatching(/^metadata nests deeper than 100 levels \(at metadata\.a\.a\.a…\)/) };
    await expect(store.createTask({ subject: 'deep', metadata: deep })).rejects.toMatchObject(refusal);
    expect(store.listIds()).toEqual([]);
    await store.createTask({ subject: 'flat' });
    await expect(store.updateTask(1, { metadata: deep })).rejects.toMatchObject(refusal);
    await store.claimTask(1, { owner: 'ann' });
    await expect(store.releaseTask(1, { actor: 'ann', metadata: deep })).rejects.toMatchObject(refusal);
    expect(store.getTask(1)).toMatchObject({ status: 'in_progress', owner: 'ann' });
    expect(store.getTask(1)).not.toHaveProperty('metadata');
    // 100 levels are fine.
    const ok = JSON.parse('{"a":'.repeat(100) + '1' + '}'.repeat(100)) as Record<string, unknown>;
    await store.updateTask(1, { metadata: ok });
    expect(store.getTask(1).metadata).toEqual(ok);
  });

  it('a task its readers would refuse is not written, whichever command built it', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    const before = snapshotFiles(store);
    await expect(
      store.transact({ tasks: [1] }, (tx) => {
        const task = tx.edit(1);
        task.priority = 99;
        tx.put(task);
      }),
    ).rejects.toMatchObject({
      code: 'E_INVALID',
      message: 'task #1 would be refused by every reader: "priority" must be an integer from 0 (highest) to 4, got 99; nothing was written',
    });
    expect(snapshotFiles(store)).toEqual(before);
  });

  it('a description that would make the file larger than 1 MiB is refused, and nothing is written', async () => {
    const store = board();
    await expect(store.createTask({ subject: 'big', description: 'x'.repeat(2 * 1024 * 1024) })).rejects.toMatchObject({
      code: 'E_INVALID',
      message: expect.stringMatching(/over the 1 MiB limit/),
    });
    expect(store.listIds()).toEqual([]);
    await store.createTask({ subject: 'small' });
    await expect(store.updateTask(1, { description: 'y'.repeat(2 * 1024 * 1024) })).rejects.toMatchObject({ code: 'E_INVALID' });
    expect(store.getTask(1).description).toBe('');
  });

  it('a 2 MB subject is refused with the limit named', async () => {
    const store = board();
    await expect(store.createTask({ subject: 's'.repeat(2 * 1024 * 1024) })).rejects.toMatchObject({
      code: 'E_INVALID',
      message: expect.stringMatching(/at most 500 characters/),
    });
    expect(store.listIds()).toEqual([]);
  });

  it('a folder named task_N.json is reported by loadBoard and never read or counted as a task', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    mkdirSync(join(store.dir, 'task_14.json'));
    const snapshot = store.loadBoard();
    expect(snapshot.tasks.map((t) => t.id)).toEqual([1]);
    expect(snapshot.problems).toEqual([expect.objectContaining({ id: 14, message: expect.stringMatching(/not a regular file/) })]);
    // Ids stay above it, and clear leaves it alone.
    expect((await store.createTask({ subject: 'two' })).task.id).toBe(15);
    expect((await store.clearBoard({ confirm: true })).removed).toEqual([1, 15]);
    expect(existsSync(join(store.dir, 'task_14.json'))).toBe(true);
  });
});

describe('compare-and-swap on status and owner', () => {
  it('re-sending in_progress for one’s own task keeps its lease as it is', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    await store.claimTask(1, { owner: 'agent-1', lease: { ttlSeconds: 600, pid: process.pid } });
    const lease = readLease(store.runtimeDir, 1);
    expect(lease).toMatchObject({ pid: process.pid, expiresAt: expect.any(String) });
    await store.updateTask(1, { status: 'in_progress', activeForm: 'still at it' }, { actor: 'agent-1' });
    await store.batchWrite([{ id: 1, status: 'in_progress', subject: 'one, renamed' }], { actor: 'agent-1' });
    expect(readLease(store.runtimeDir, 1)).toEqual(lease);
    // So reap still releases it once it expires.
    const reaped = await store.reap({ now: Date.parse(lease!.expiresAt!) + 1 });
    expect(reaped.map((r) => r.task)).toEqual([1]);
  });

  it('starting a task another owner claimed a moment ago is a lost race, unless forced', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    await store.claimTask(1, { owner: 'bob' });
    await expect(store.updateTask(1, { status: 'in_progress' }, { actor: 'ann' })).rejects.toMatchObject({ code: 'E_CLAIMED', reason: 'already_claimed' });
    expect(store.getTask(1).owner).toBe('bob');
    await expect(store.updateTask(1, { status: 'pending' }, { actor: 'ann' })).rejects.toMatchObject({ code: 'E_NOT_OWNER' });
    await expect(store.updateTask(1, { owner: 'ann' }, { actor: 'carl' })).rejects.toMatchObject({ code: 'E_CLAIMED' });
    const taken = await store.updateTask(1, { status: 'in_progress' }, { actor: 'ann', force: true });
    expect(taken.task).toMatchObject({ status: 'in_progress', owner: 'ann' });
    expect(readLease(store.runtimeDir, 1)).toMatchObject({ owner: 'ann', expiresAt: null });
    expect(events(store).at(-1)).toMatchObject({ type: 'started', owner: 'ann', previousOwner: 'bob' });
    // The holder may hand it over.
    await store.updateTask(1, { owner: 'dan' }, { actor: 'ann' });
    expect(readLease(store.runtimeDir, 1)).toMatchObject({ owner: 'dan' });
  });
});

describe('a text put, then a task put', () => {
  it('writes the task put last (a sync brings a task in as text, then releases its claim)', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    const text = readFileSync(store.taskPath(1), 'utf8').replace('"pending"', '"in_progress"').replace('"owner": ""', '"owner": "gone"');
    await store.transact({ tasks: [1] }, (tx) => {
      tx.putText(1, text);
      const task = tx.edit(1);
      expect(task).toMatchObject({ status: 'in_progress', owner: 'gone' });
      task.status = 'pending';
      task.owner = '';
      tx.put(task);
    });
    expect(store.getTask(1)).toMatchObject({ status: 'pending', owner: '' });
  });
});

describe('a change a power cut stopped half way', () => {
  /** Completes #1 of the hub board, keeping a copy of its journal as the writer had it just before removing it. */
  async function completedWithJournal(store: TaskStore): Promise<string> {
    const journal = join(journalDir(store.runtimeDir), 'board.json');
    let copy = '';
    setFaultHook((call, path) => {
      if (call === 'unlink' && path === journal && existsSync(journal)) copy = readFileSync(journal, 'utf8');
    });
    await store.completeTask(1, { actor: 'ann' });
    setFaultHook(undefined);
    expect(copy).not.toBe('');
    return copy;
  }

  it('a torn append of its events: recovery logs exactly the events that did not land, once', async () => {
    const store = await hubBoard();
    const journal = await completedWithJournal(store);
    const log = join(store.runtimeDir, 'events.jsonl');
    const lines = readFileSync(log, 'utf8').split('\n');
    const tx = (JSON.parse(journal) as { tx: string }).tx;
    const first = lines.findIndex((l) => l.includes(`"tx":"${tx}"`));
    // The power cut: the change's first event whole, its second torn half way, the rest never written; the journal stays.
    writeFileSync(log, [...lines.slice(0, first + 1), lines[first + 1].slice(0, 20)].join('\n'));
    mkdirSync(journalDir(store.runtimeDir), { recursive: true });
    writeFileSync(join(journalDir(store.runtimeDir), 'board.json'), journal);
    await store.createTask({ subject: 'next' });
    const after = events(store).filter((e) => e.tx === tx && e.type !== 'recovered');
    expect(after.map((e) => `${e.type} ${e.task}`)).toEqual(['completed 1', 'unblocked 2', 'unblocked 3', 'unblocked 4']);
    await store.createTask({ subject: 'after' });
    expect(events(store).filter((e) => e.tx === tx && e.type !== 'recovered')).toHaveLength(4);
  });

  it('recovery makes the folders it renames into again (.runtime/leases/ lost with the power, or removed by a person)', async () => {
    const store = board();
    await store.createTask({ subject: 'one' });
    // A claim whose first rename after its commit point (the claim record) fails, and whose undo cannot remove
    // its journal either: the journal stays, for the next holder of the lock to finish.
    setFaultHook((call, path) => {
      if (call === 'rename' && path.includes(join('.runtime', 'leases'))) throw systemError('EIO', call, path);
      if (call === 'unlink' && path.includes(join('.runtime', 'journal'))) throw systemError('EIO', call, path);
    });
    await store.claimTask(1, { owner: 'ann' }).catch(() => undefined);
    setFaultHook(undefined);
    const journals = existsSync(journalDir(store.runtimeDir)) ? readdirSync(journalDir(store.runtimeDir)) : [];
    expect(journals.length).toBeGreaterThan(0);
    rmSync(join(store.runtimeDir, 'leases'), { recursive: true, force: true });
    // The next claim of that task finishes ann's committed claim first (its record renamed into a folder made
    // again), and then finds it taken: a lost race, not an I/O error.
    await expect(store.claimTask(1, { owner: 'bob' })).rejects.toMatchObject({ reason: 'already_claimed' });
    expect(readdirSync(journalDir(store.runtimeDir))).toEqual([]);
    expect(store.getTask(1)).toMatchObject({ status: 'in_progress', owner: 'ann' });
    expect(readLease(store.runtimeDir, 1)).toMatchObject({ owner: 'ann' });
  });
});

describe('notes near the size limit', () => {
  it("a failed run's note always fits: the oldest notes fold into one that counts them, and the task is released", async () => {
    const store = board();
    await store.createTask({ subject: 'noisy' });
    // About 1 MiB of notes already (by hand, as a long-lived task's history would grow).
    const task = JSON.parse(readFileSync(store.taskPath(1), 'utf8'));
    task.notes = Array.from({ length: 255 }, (_, i) => ({
      at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      owner: 'w',
      text: `run ${i}: ${'x'.repeat(4000)}`,
    }));
    writeFileSync(store.taskPath(1), JSON.stringify(task, null, 2) + '\n');
    await store.claimTask(1, { owner: 'w' });
    const released = await store.releaseTask(1, { actor: 'w', heldBy: 'w', reason: 'failed', note: `the last run failed: ${'y'.repeat(20_000)}` });
    expect(released.task).toMatchObject({ status: 'pending', owner: '' });
    const size = readFileSync(store.taskPath(1)).length;
    expect(size).toBeLessThanOrEqual(1024 * 1024);
    const notes = store.getTask(1).notes!;
    expect(notes.at(-1)!.text).toMatch(/^the last run failed/);
    expect(notes[0]).toMatchObject({ owner: 'tasks', text: expect.stringMatching(/^\d+ earlier notes were folded to keep this task under 1 MiB/) });
    // And again: the count goes on from the fold before.
    const folded = Number(/^(\d+)/.exec(notes[0].text)![1]);
    await store.addNote(1, 'z'.repeat(20_000), { actor: 'w' });
    expect(Number(/^(\d+)/.exec(store.getTask(1).notes![0].text)![1])).toBeGreaterThan(folded);
  });
});
