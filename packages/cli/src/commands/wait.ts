import { TasksError, parseTaskId, waitForTask } from '@dotasks/core';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks wait` takes, as declared in the command table. */
export interface WaitOptions extends CommandArgs<'wait'>, GlobalOptions {}

/** `tasks wait ID`: 0 once the task is completed, 1 if it is deleted, 124 on timeout. */
export async function wait(options: WaitOptions, notice: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const timeout = options.timeout;
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout >= 0))
    throw new TasksError('E_USAGE', `--timeout takes seconds (0 or more), got ${String(timeout)}`);
  const store = openStore(options);
  const started = Date.now();
  const pending = waitForTask(store, id, { timeoutMs: timeout === undefined ? undefined : timeout * 1000 });
  const task = store.peekTask(id);
  if (task && task.status !== 'completed' && task.status !== 'deleted')
    notice(`tasks wait: waiting for #${id}: ${printable(task.subject)} (${task.status})${timeout === undefined ? '' : `, at most ${timeout} s`}`);
  const outcome = await pending;
  const waitedMs = Date.now() - started;
  if (outcome === 'timeout') {
    const status = store.peekTask(id)?.status ?? 'unreadable';
    throw new TasksError('E_TIMEOUT', `task #${id} is still ${status} after ${timeout} s; wait again, or see 'tasks show ${id}'`, { id, status });
  }
  const json = { task: id, status: outcome, waitedMs };
  if (outcome === 'deleted') return { text: `task #${id} was deleted; it will never be completed`, json, exitCode: 1 };
  return { text: `task #${id} is completed`, json };
}
