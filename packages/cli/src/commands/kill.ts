import { parseJobId } from '@dotasks/core/internal';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks kill` takes, as declared in the command table. */
export interface KillOptions extends CommandArgs<'kill'>, GlobalOptions {}

/** Ends a background job and its whole process tree; the task is released. */
export async function kill(options: KillOptions): Promise<CommandOutput> {
  const { killJob, viewJob } = await import('@dotasks/agent');
  const store = openStore(options);
  const { job, killed } = await killJob(store, parseJobId(options.job));
  const task = store.peekTask(job.task);
  const where = task ? `task #${task.id} is ${task.status}${task.owner ? ` (${printable(task.owner)})` : ''}` : `task #${job.task} is gone`;
  const text = killed ? `killed ${job.id} and its processes; ${where}` : `${job.id} had already finished (${job.status}); nothing to kill`;
  return { text, json: { killed, job: viewJob(job) } };
}
