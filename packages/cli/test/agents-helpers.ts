import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskStore } from '@dotasks/core';
import { TASKS_BIN, cleanEnv, type RunResult } from './helpers.js';

/** One line of `.tasks/.runtime/events.jsonl`. */
export interface LoggedEvent {
  seq: number;
  at: string;
  type: string;
  task?: number;
  owner?: string;
  previousOwner?: string;
  [key: string]: unknown;
}

/** The event log of a board, parsed. */
export function readEventLog(board: string): LoggedEvent[] {
  const file = join(board, '.runtime', 'events.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LoggedEvent);
}

/** Every lock directory or temp file left anywhere under `dir`. */
export function leftovers(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.name.endsWith('.lock') || entry.name.startsWith('.tmp-')) out.push(path);
    else if (entry.isDirectory()) out.push(...leftovers(path));
  }
  return out;
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'dotasks test',
  GIT_AUTHOR_EMAIL: 'test@dotasks.invalid',
  GIT_COMMITTER_NAME: 'dotasks test',
  GIT_COMMITTER_EMAIL: 'test@dotasks.invalid',
};

/** Runs git in `cwd` and returns its stdout. */
export function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * A temp folder holding a git repository `repo/` with an initialised,
 * committed board; worktrees made next to it are removed by `cleanup` too.
 */
export function tempRepo(): { root: string; repo: string; board: string; cleanup: () => void } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-agents-')));
  const repo = join(root, 'repo');
  mkdirSync(repo);
  git(repo, ['init', '-q', '-b', 'main']);
  writeFileSync(join(repo, 'README.md'), '# test repo\n');
  // What `tasks init` does in a repository without a remote, in process (its own tests run the command).
  TaskStore.init(join(repo, '.tasks'));
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-q', '-m', 'init']);
  return { root, repo, board: join(repo, '.tasks'), cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** A running `tasks` process whose output is collected. */
export interface TasksProcess {
  child: ChildProcess;
  done: Promise<RunResult & { signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** Starts `tasks ...args` in the background. */
export function startTasks(cwd: string, args: string[], env: Record<string, string> = {}): TasksProcess {
  const child = spawn(process.execPath, [TASKS_BIN, ...args], { cwd, env: cleanEnv(env) });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<RunResult & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? -1, signal, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr };
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
