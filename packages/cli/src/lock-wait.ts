/**
 * What a command says while it waits for a lock another process holds
 * (LockOptions.onWait in the core, told after a second): which lock, whose
 * pid, and which tasks command that is, so a person knows what to wait for
 * or what to end. git's unable_to_lock_message is the model.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { LockWait } from '@dotasks/core/store';

/** `the lock on task #3`, `the board lock`, `the lock .runtime/sync.lock`. */
function lockName(lock: string): string {
  const name = basename(lock);
  const task = /^task_(\d+)\.json\.lock$/.exec(name);
  if (task) return `the lock on task #${task[1]}`;
  if (name === '.board.lock') return 'the board lock';
  return `the lock ${name}`;
}

/** `tasks claim` when pid runs a tasks command (read from /proc, where there is one); undefined otherwise. */
function tasksCommandOf(pid: number): string | undefined {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
  const bin = argv.findIndex((word, i) => i > 0 && /^tasks(\.c?js)?$/.test(basename(word)));
  const command = bin >= 0 ? argv.slice(bin + 1).find((word) => /^[a-z][a-z-]*$/.test(word)) : undefined;
  return command ? `tasks ${command}` : undefined;
}

/** The line for a lock wait: `waiting for the lock on task #3, held by pid 1234 (tasks claim)…`. */
export function describeLockWait(wait: LockWait): string {
  const command = wait.pid === undefined ? undefined : tasksCommandOf(wait.pid);
  const holder = wait.pid === undefined ? 'another process' : `pid ${wait.pid}${command ? ` (${command})` : ''}`;
  return `waiting for ${lockName(wait.lock)}, held by ${holder}…`;
}

/** Says on stderr that the command is waiting; once per lock wait, and the result follows as usual. */
export function reportLockWait(wait: LockWait): void {
  // The stream, not run.ts's writeOut: importing run.ts here would split it out of the bundle's entry into a chunk
  // that every command then loads, for a line that is rare; making the stream costs its 2 ms only when it is said.
  process.stderr.write(`tasks: ${describeLockWait(wait)}\n`);
}
