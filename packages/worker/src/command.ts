/**
 * A command run for a task, in a process group of its own so that stopping
 * it stops everything it started: the worker's command on a claimed task,
 * and the reviewer's on a task in review (review-worker.ts) both run here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { killGroup, type Task } from '@dotasks/core/internal';
import type { CommandLoopOptions } from './worker-events.js';

/** How much of the command's output is kept, for `metadata.lastError` and a review's note. */
const TAIL_CHARS = 4000;

/** How the command ended. */
export interface CommandExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A task's command while it runs. */
export interface RunningCommand {
  readonly exited: Promise<CommandExit>;
  readonly pid: number | undefined;
  /** The end of its output. */
  tail(): string;
  /** Stops the whole group: SIGTERM, then SIGKILL for what is left after the grace time; resolves when none of it runs. */
  kill(): Promise<void>;
}

/** Where and how a command runs. */
export interface SpawnOptions {
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /** Between SIGTERM and SIGKILL, ms (default 3000). */
  killGraceMs?: number;
  /** Its stdout and stderr as they come. */
  onOutput?: (chunk: Buffer) => void;
}

/** Starts `command` (argv, or one string run by the shell) in a process group of its own, stdin closed. */
export function spawnCommand(command: string[], options: SpawnOptions): RunningCommand {
  const [file, ...args] = command;
  const child: ChildProcess =
    command.length === 1
      ? spawn(file, { shell: true, cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(file, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const onData = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_CHARS);
    options.onOutput?.(chunk);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = commandExited(child, (message) => (tail += `\n${message}`));
  let killing: Promise<void> | undefined;
  return {
    exited,
    pid: child.pid,
    tail: () => tail.trimEnd(),
    kill(): Promise<void> {
      if (child.pid === undefined) return Promise.resolve();
      killing ??= killGroup(child.pid, options.killGraceMs ?? 3000).catch(() => undefined);
      return killing;
    },
  };
}

/** Resolves with how the child ended; a command that cannot start ends as 127 with the reason in its output. */
function commandExited(child: ChildProcess, onStartError: (message: string) => void): Promise<CommandExit> {
  return new Promise<CommandExit>((resolve) => {
    let result: CommandExit | undefined;
    child.on('error', (error) => {
      onStartError(error.message);
      resolve({ code: 127, signal: null });
    });
    child.on('exit', (code, signal) => {
      result = { code, signal };
      // Output can still be in flight; wait for the pipes, but not for a
      // background process that kept them open.
      setTimeout(() => resolve(result!), 1000).unref();
    });
    child.on('close', () => {
      if (result) resolve(result);
    });
  });
}

/**
 * The environment a task's command starts from: the loop's, with TASK_*
 * naming the task and TASKS_OWNER the loop's owner, so `tasks` run by the
 * command acts as the worker (or the reviewer) does.
 */
export function taskEnv(options: CommandLoopOptions, task: Task): NodeJS.ProcessEnv {
  return {
    ...(options.env ?? process.env),
    TASK_ID: String(task.id),
    TASK_SUBJECT: task.subject,
    TASK_DESCRIPTION: task.description,
    TASK_FILE: options.store.taskPath(task.id),
    TASKS_DIR: options.store.dir,
    TASKS_OWNER: options.owner,
  };
}
