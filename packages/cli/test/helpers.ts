import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TaskStore, resolveOwner, type CreateTaskInput } from '@dotasks/core';

/** The built `tasks` bin. */
export const TASKS_BIN = fileURLToPath(new URL('../bin/tasks.js', import.meta.url));

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * An environment without the caller's TASKS_* settings, plus `extra`. Also
 * without NODE_EXTRA_CA_CERTS: Node reads and parses the certificates it names
 * at every start (35 ms of a 105 ms `tasks create` on the 2-core machine, whose
 * environment names the system's bundle), and `tasks` opens no TLS connection.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (key.startsWith('TASKS_') || key === 'NODE_EXTRA_CA_CERTS') delete env[key];
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
    // A whole large board's listing is megabytes.
    maxBuffer: 1 << 28,
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
  // What `tasks init` does, in process (its own tests run the command): ~200 tests start from a board.
  if (options.init !== false) TaskStore.init(board);
  return { root, board, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * Makes tasks on `board` in process, one after the other, through the core
 * call `tasks create` makes, as the owner a command run beside the board
 * acts as: for a test whose subject is not creation (a `tasks create` each
 * costs a Node start; create's own tests run the command). Returns their ids.
 */
export async function createTasks(board: string, items: (string | CreateTaskInput)[]): Promise<number[]> {
  const store = new TaskStore(board);
  const actor = resolveOwner({ cwd: dirname(board), env: cleanEnv() }).owner;
  const ids: number[] = [];
  for (const item of items) ids.push((await store.createTask(typeof item === 'string' ? { subject: item } : item, { actor })).task.id);
  return ids;
}

/** Reads and parses `.tasks/task_N.json`. */
export function readTaskFile(board: string, id: number): Record<string, unknown> {
  return JSON.parse(readFileSync(join(board, `task_${id}.json`), 'utf8')) as Record<string, unknown>;
}

/**
 * What a `tasks` run loads, whichever of Node's loaders loads it (the entry
 * requires the everyday commands, which module hooks do not see): the files
 * it opened, traced by strace, and the built-in modules it loaded
 * (process.moduleLoadList, written by a preload when it exits).
 */
export function traceLoads(cwd: string, args: string[], input = ''): RunResult & { files: string[]; builtins: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'dotasks-trace-'));
  try {
    const trace = join(dir, 'strace.txt');
    const builtinsFile = join(dir, 'builtins.txt');
    const preload = join(dir, 'preload.cjs');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(builtinsFile)}, process.moduleLoadList.join('\\n')));\n`,
    );
    const r = spawnSync(
      'strace',
      ['-f', '-qq', '-e', 'trace=openat,open', '-e', 'signal=none', '-o', trace, process.execPath, '-r', preload, TASKS_BIN, ...args],
      {
        cwd,
        env: cleanEnv(),
        encoding: 'utf8',
        input,
        timeout: 60_000,
      },
    );
    if (r.error) throw r.error;
    // `123 openat(AT_FDCWD, "/path", O_RDONLY|O_CLOEXEC) = 21`: the files opened, not those only looked for. With
    // several threads a call can be split (`… <unfinished ...>`, its result on a later line): that one counts too.
    const files = readFileSync(trace, 'utf8')
      .split('\n')
      .filter((line) => !/= -1 E/.test(line))
      .map((line) => /open(?:at)?\((?:[^,"]*, )?"([^"]*)"/.exec(line)?.[1])
      .filter((path): path is string => path !== undefined);
    const builtins = existsSync(builtinsFile)
      ? readFileSync(builtinsFile, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('NativeModule '))
          .map((l) => l.slice('NativeModule '.length))
      : [];
    return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr, files, builtins };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
