import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, vi } from 'vitest';
import { TASKS_BIN, cleanEnv } from '../../cli/test/helpers.js';

export { TASKS_BIN, cleanEnv, createTasks, readTaskFile, tasks, tasksAsync, tempBoard } from '../../cli/test/helpers.js';

/** Generous: two cores are shared with other developers' builds and tests. */
export const WAIT = { timeout: 45_000, interval: 40 };

export interface WatchEventLine {
  seq: number;
  type: string;
  task?: number;
  [key: string]: unknown;
}

/** A `tasks watch --json` child process and what it printed so far. */
export interface WatcherProcess {
  child: ChildProcessWithoutNullStreams;
  events: WatchEventLine[];
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits until the watcher has reconciled the board and watches. */
  ready(): Promise<void>;
  /** How many full reconciles it reported so far. */
  reconciles(): number;
  /** SIGTERM, then waits for it to exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `tasks watch --json` in `cwd`. */
export function startWatcher(cwd: string, args: string[] = [], env: Record<string, string> = {}): WatcherProcess {
  const child = spawn(process.execPath, [TASKS_BIN, 'watch', '--json', ...args], { cwd, env: cleanEnv(env) });
  const events: WatchEventLine[] = [];
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    let nl: number;
    while ((nl = stdout.indexOf('\n')) >= 0) {
      const line = stdout.slice(0, nl);
      stdout = stdout.slice(nl + 1);
      if (line.trim()) events.push(JSON.parse(line) as WatchEventLine);
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    events,
    stderr: () => stderr,
    exited,
    ready: () => vi.waitFor(() => expect(stderr).toContain('watching'), WAIT),
    reconciles: () => stderr.split('\n').filter((l) => l.includes('reconciled')).length,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Changes a task file the way a person's editor would: in place, or temp file and rename. */
export function editTask(board: string, id: number, change: (task: Record<string, unknown>) => void, how: 'in-place' | 'rename' = 'in-place'): string {
  const file = join(board, `task_${id}.json`);
  const task = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  change(task);
  // Not the canonical form on purpose: the watcher must not need it.
  const text = JSON.stringify(task, null, 2);
  if (how === 'in-place') writeFileSync(file, text);
  else {
    writeFileSync(`${file}.swp`, text);
    renameSync(`${file}.swp`, file);
  }
  return text;
}

/**
 * Moves the board folder's times (a file made and removed in it, under a name
 * the watcher ignores), as any command's write does: the next periodic pass
 * then makes a full reconcile, which an idle board does not get.
 */
export function nudgeBoard(board: string): void {
  const file = join(board, '.nudge');
  writeFileSync(file, '');
  rmSync(file);
}
