import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built `tasks` bin. */
export const TASKS_BIN = fileURLToPath(new URL('../bin/tasks.js', import.meta.url));

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** An environment without the caller's TASKS_* settings, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (key.startsWith('TASKS_')) delete env[key];
  return { ...env, ...extra };
}

/** Runs `tasks ...args` synchronously in `cwd`. */
export function tasks(cwd: string, args: string[], env: Record<string, string> = {}, input?: string): RunResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, [TASKS_BIN, ...args], {
    cwd,
    env: cleanEnv(env),
    encoding: 'utf8',
    input,
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `tasks ...args` as a child process (for races); resolves when it exits. */
export function tasksAsync(cwd: string, args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return collectOutput(spawn(process.execPath, [TASKS_BIN, ...args], { cwd, env: cleanEnv(env) }));
}

/** Collects a child's output; resolves with its exit status when it closes. */
export function collectOutput(child: ChildProcess): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** A fresh temp directory (not inside any git repo) with an initialised board; `cleanup` removes it. */
export function tempBoard(options: { init?: boolean } = {}): { root: string; board: string; cleanup: () => void } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-test-')));
  const board = join(root, '.tasks');
  if (options.init !== false) {
    const r = tasks(root, ['init']);
    if (r.code !== 0) throw new Error(`tasks init failed: ${r.stderr}`);
  }
  return { root, board, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Reads and parses `.tasks/task_N.json`. */
export function readTaskFile(board: string, id: number): Record<string, unknown> {
  return JSON.parse(readFileSync(join(board, `task_${id}.json`), 'utf8')) as Record<string, unknown>;
}
