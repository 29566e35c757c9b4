import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TaskStore, parseTask, findCycle, type Task } from '../src/internal.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

function runNode(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Without NODE_EXTRA_CA_CERTS, as the CLI's tests run tasks (cleanEnv): Node parses the bundle it names at every start, and no fixture opens TLS.
    const { NODE_EXTRA_CA_CERTS: _certs, ...inherited } = process.env;
    const child = spawn(process.execPath, args, { env: { ...inherited, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

let root = '';
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = '';
});

function newBoard(): string {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-core-')));
  const dir = join(root, '.tasks');
  TaskStore.init(dir);
  return dir;
}

function readAll(dir: string): Task[] {
  return readdirSync(dir)
    .filter((n) => /^task_\d+\.json$/.test(n))
    .map((n) => parseTask(readFileSync(join(dir, n), 'utf8'), join(dir, n)));
}

describe('concurrency with real processes (library)', () => {
  it('8 processes creating 50 tasks each get 400 distinct ids 1..400 and 400 valid files', async () => {
    const dir = newBoard();
    const results = await Promise.all(Array.from({ length: 8 }, (_, p) => runNode([join(fixtures, 'create-many.mjs'), dir, '50', `p${p}`])));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const ids = results.flatMap((r) => JSON.parse(r.stdout) as number[]);
    expect(new Set(ids).size).toBe(400);
    expect(Math.min(...ids)).toBe(1);
    expect(Math.max(...ids)).toBe(400);
    const tasks = readAll(dir);
    expect(tasks.map((t) => t.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    expect(readFileSync(join(dir, '.highwatermark'), 'utf8')).toBe('400\n');
    // Every subject made it to disk exactly once.
    expect(new Set(tasks.map((t) => t.subject)).size).toBe(400);
    expect(readdirSync(dir).filter((n) => n.endsWith('.lock') || n.startsWith('.tmp-'))).toEqual([]);
  });

  it('a SIGKILLed lock holder: the next mutation succeeds once the lock is stale', async () => {
    const dir = newBoard();
    const holder = spawn(process.execPath, [join(fixtures, 'hold-lock.mjs'), join(dir, '.board.lock'), '2000']);
    await new Promise<void>((resolve, reject) => {
      holder.stdout.on('data', (d) => String(d).includes('locked') && resolve());
      holder.on('error', reject);
      holder.on('exit', () => reject(new Error('holder exited early')));
    });
    holder.removeAllListeners('exit');
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    expect(existsSync(join(dir, '.board.lock'))).toBe(true);
    const store = new TaskStore(dir, { lock: { staleMs: 2000, timeoutMs: 30_000 } });
    const { task } = await store.createTask({ subject: 'after the crash' });
    expect(task.id).toBe(1);
    expect(existsSync(join(dir, '.board.lock'))).toBe(false);
  });

  it('concurrent edge additions in one process never leave a cycle', async () => {
    const dir = newBoard();
    const store = new TaskStore(dir);
    for (let i = 0; i < 6; i++) await store.createTask({ subject: `t${i + 1}` });
    // Every ordered pair at once: the board lock serialises them; cycles are refused.
    const pairs: [number, number][] = [];
    for (let a = 1; a <= 6; a++) for (let b = 1; b <= 6; b++) if (a !== b) pairs.push([a, b]);
    const outcomes = await Promise.allSettled(pairs.map(([a, b]) => store.addDependency(a, b)));
    expect(outcomes.some((o) => o.status === 'rejected')).toBe(true);
    const tasks = new Map(readAll(dir).map((t) => [t.id, t]));
    for (const t of tasks.values()) {
      for (const d of t.blocks) {
        // both sides, and no path back
        expect(tasks.get(d)!.blockedBy).toContain(t.id);
        const lookup = (id: number) => {
          if (id === t.id) return { ...t, blocks: t.blocks.filter((x) => x !== d) };
          return tasks.get(id);
        };
        expect(findCycle(t.id, d, lookup)).toBeUndefined();
      }
    }
  });
});

describe('a compromised lock', () => {
  it('is recorded, never crashes the process, and fails the write with E_COMPROMISED', async () => {
    const { acquireLock } = await import('../src/internal.js');
    const dir = newBoard();
    const lockPath = join(dir, 'task_1.json.lock');
    const { lock, release } = await acquireLock(lockPath, { staleMs: 2000, timeoutMs: 5000 });
    rmSync(lockPath, { recursive: true });
    const { vi } = await import('vitest');
    await vi.waitFor(() => expect(lock.compromised).toBeDefined(), { timeout: 20_000, interval: 50 });
    expect(() => lock.assertHeld()).toThrow(expect.objectContaining({ code: 'E_COMPROMISED' }));
    await release();
  });
});

describe('claims made by hand', () => {
  it('are adopted so the single-in-progress rule sees them', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = newBoard();
    const store = new TaskStore(dir);
    await store.createTask({ subject: 'one' });
    await store.createTask({ subject: 'two' });
    const text = readFileSync(join(dir, 'task_1.json'), 'utf8').replace('"pending"', '"in_progress"').replace('"owner": ""', '"owner": "ann"');
    writeFileSync(join(dir, 'task_1.json'), text);
    expect(await store.adoptUntrackedClaims()).toEqual([1]);
    expect(await store.adoptUntrackedClaims()).toEqual([]);
    await expect(store.claimTask(2, { owner: 'ann' })).rejects.toMatchObject({ reason: 'owner_busy' });
    await expect(store.claimTask(2, { owner: 'bob' })).resolves.toMatchObject({ task: { owner: 'bob' } });
  });
});

describe('doctor --fix racing claims', () => {
  it('never mistakes a claim in flight for one made by hand, nor overwrites its lease', async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = newBoard();
    const store = new TaskStore(dir);
    // The board in one transaction: the race is between the claims and doctor.
    await store.batchWrite(Array.from({ length: 150 }, (_, i) => ({ subject: `t${i + 1}` })));
    const stop = join(root, 'stop');
    const doctor = runNode([join(fixtures, 'doctor-loop.mjs'), dir, stop]);
    for (let i = 1; i <= 150; i++) await store.claimTask(i, { owner: `agent-${i}`, lease: { ttlSeconds: 600, pid: process.pid } });
    writeFileSync(stop, '');
    const result = await doctor;
    expect(result.code, result.stderr).toBe(0);
    const { rounds, changes } = JSON.parse(result.stdout) as { rounds: number; changes: string[] };
    expect(rounds).toBeGreaterThan(0);
    expect(changes).not.toContain('untracked_claim');
    const { listLeases } = await import('../src/internal.js');
    const leases = listLeases(store.runtimeDir);
    expect(leases).toHaveLength(150);
    for (const lease of leases) expect(lease).toMatchObject({ pid: process.pid, expiresAt: expect.any(String) });
  });
});
