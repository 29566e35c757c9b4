import { parseTaskId } from '@dotasks/core';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks run` takes, as declared in the command table. */
export interface RunOptions extends CommandArgs<'run'>, GlobalOptions {}

/** Starts CMD for a task in the background under a supervisor; returns at once with the job id. */
export async function runJob(options: RunOptions): Promise<CommandOutput> {
  const { startJob, viewJob } = await import('@dotasks/agent');
  const store = openStore(options);
  const task = parseTaskId(options.id);
  const owner = actingOwner(options);
  const { job, claimed } = await startJob(store, { task, owner, command: options.command, cwd: options.cwd ?? process.cwd() });
  return {
    text: `${job.id} started for #${task} (${claimed ? 'claimed by' : 'held by'} ${printable(owner)}); follow it with 'tasks logs ${job.id} --follow', stop it with 'tasks kill ${job.id}'`,
    json: { job: viewJob(job), claimed },
  };
}
