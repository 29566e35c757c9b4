import { TasksError } from '@dotasks/core';
import type { ReviewWorkerEvent, WorkerEvent } from '@dotasks/worker';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import { openStoreToSync } from '../sync-output.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks worker` takes, as declared in the command table. */
export interface WorkerCommandOptions extends CommandArgs<'worker'>, GlobalOptions {}

/** One progress line for people (stderr). */
export function describeWorkerEvent(e: WorkerEvent): string {
  return printable(describeEvent(e));
}

function describeEvent(e: WorkerEvent): string {
  const who = `[${e.owner}]`;
  switch (e.type) {
    case 'worker.started':
      return `${who} worker started (pid ${e.pid}): ${e.command.join(' ')}`;
    case 'worker.reaped':
      return `${who} reaped ${e.tasks.map((t) => `#${t.task} (${t.owner}: ${t.reason === 'expired' ? 'lease expired' : 'process gone'})`).join(', ')}`;
    case 'worker.waiting':
      return `${who} nothing ready; waiting for ${e.inProgress.length ? e.inProgress.map((t) => `#${t}`).join(', ') : 'the board'}`;
    case 'worker.sync_failed':
      return `${who} could not sync with the remote (${e.message}); trying again`;
    case 'task.claimed':
      return `${who} claimed #${e.task}: ${e.subject}${e.worktree ? ` (worktree ${e.worktree}, branch ${e.branch})` : ''}`;
    case 'task.completed':
      return `${who} completed #${e.task} in ${(e.durationMs / 1000).toFixed(1)} s${e.verify !== undefined ? ` (check passed: ${e.verify})` : ''}${e.unblocked.length ? `; unblocked ${e.unblocked.map((t) => `#${t}`).join(', ')}` : ''}`;
    case 'task.in_review':
      return `${who} finished #${e.task} in ${(e.durationMs / 1000).toFixed(1)} s${e.verify !== undefined ? ` (check passed: ${e.verify})` : ''}; it waits for review (someone other than ${e.owner} approves it)`;
    case 'task.failed':
      return `${who} #${e.task} failed (${e.signal ? `signal ${e.signal}` : `exit ${e.exitCode}`}) after ${(e.durationMs / 1000).toFixed(1)} s; released${e.retry ? '' : ', not retrying it here'}`;
    case 'task.verify_failed':
      return `${who} #${e.task}: the command exited 0 but the check failed (${e.timedOut ? 'timed out' : e.signal ? `signal ${e.signal}` : `exit ${e.exitCode}`}): ${e.command}; #${e.task} stays in progress, ${e.retry ? 'running the command on it again' : 'not trying it again here'} (its notes have the output)`;
    case 'task.lost':
      return `${who} lost #${e.task}: ${e.message}`;
    case 'task.moved':
      return `${who}: #${e.from} is #${e.task} now (tasks sync gave it a new id: the remote had given #${e.from} to another task); working on`;
    case 'task.interrupted':
      return `${who} interrupted: stopped the command and released #${e.task}`;
    case 'worker.stopped': {
      const why = {
        drained: 'nothing left that it can do',
        max_tasks: 'reached --max-tasks',
        idle: 'idle for --idle-exit seconds',
        aborted: 'interrupted',
        verify_failed: `the check kept failing on ${e.gaveUp.map((t) => `#${t}`).join(', ')}, which stays in progress for it (one task at a time: finish it with tasks done, or release it)`,
      }[e.reason];
      return `${who} stopped: ${why} (${e.completed.length} completed, ${e.inReview ? `${e.inReview.length} in review, ` : ''}${e.failed.length} failed attempts${e.gaveUp.length ? `, gave up on ${e.gaveUp.map((t) => `#${t}`).join(', ')}` : ''}${e.lost.length ? `, lost ${e.lost.map((t) => `#${t}`).join(', ')}` : ''})`;
    }
  }
}

/** One progress line of a reviewer worker, for people (stderr). */
export function describeReviewEvent(e: ReviewWorkerEvent): string {
  const who = `[${e.owner}]`;
  switch (e.type) {
    case 'reviewer.started':
      return printable(`${who} reviewer started (pid ${e.pid}): ${e.command.join(' ')}`);
    case 'reviewer.waiting':
      return printable(`${who} nothing to review; waiting for ${e.inReview.length ? e.inReview.map((t) => `#${t}`).join(', ') : 'work to be finished'}`);
    case 'review.claimed':
      return printable(`${who} reviewing #${e.task}: ${e.subject} (${e.taskOwner || 'nobody'}'s work${e.worktree ? `, in ${e.worktree}` : ''})`);
    case 'review.approved':
      return `${who} ${e.merged ? `merged #${e.task} into ${printable(e.merged.into)} (${e.merged.commit.slice(0, 12)}), which approved it,` : `approved #${e.task}`} in ${(e.durationMs / 1000).toFixed(1)} s${e.unblocked.length ? `; unblocked ${e.unblocked.map((t) => `#${t}`).join(', ')}` : ''}`;
    case 'review.rejected':
      return `${who} sent #${e.task} back (${e.signal ? `signal ${e.signal}` : `exit ${e.exitCode}`}) after ${(e.durationMs / 1000).toFixed(1)} s; its notes have the output`;
    case 'review.lost':
      return printable(`${who} lost the review of #${e.task}: ${e.message}`);
    case 'review.interrupted':
      return `${who} interrupted: stopped the command; #${e.task} waits for the next reviewer`;
    case 'reviewer.stopped': {
      const why = { drained: 'nothing left to review', max_tasks: 'reached --max-tasks', idle: 'idle for --idle-exit seconds', aborted: 'interrupted' }[
        e.reason
      ];
      return `${who} stopped: ${why} (${e.approved.length} approved, ${e.rejected.length} sent back${e.lost.length ? `, lost ${e.lost.map((t) => `#${t}`).join(', ')}` : ''})`;
    }
  }
}

function positiveInt(value: number | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value < 0) throw new TasksError('E_USAGE', `${flag} takes a non-negative number`);
  return value;
}

/**
 * `tasks worker -- CMD…`: runs the worker loop of @dotasks/worker. Progress
 * lines and the command's own output go to stderr; `--json` prints one
 * worker event per line on stdout. SIGINT/SIGTERM stop the command's whole
 * process group and release its task. Exit 0 when the loop ended by itself,
 * 1 when it gave up on a failing task, 130/143 when interrupted.
 */
export async function worker(options: WorkerCommandOptions): Promise<CommandOutput> {
  if (options.command.length === 0) throw new TasksError('E_USAGE', "worker needs a command after --, e.g. tasks worker -- sh -c 'echo $TASK_SUBJECT'");
  if (options.lease !== undefined && !(options.lease > 0)) throw new TasksError('E_USAGE', '--lease takes a positive number of seconds');
  if (options.sync && options.worktree) throw new TasksError('E_USAGE', '--sync does not go with --worktree yet');
  if (options.review && (options.worktree || options.sync || options.maxFailures !== undefined))
    throw new TasksError(
      'E_USAGE',
      `--review does not go with ${options.worktree ? '--worktree' : options.sync ? '--sync' : '--max-failures'}: a review runs in the task's own worktree, on this board`,
    );
  if (options.merge && !options.review) throw new TasksError('E_USAGE', '--merge goes with --review: a reviewer lands what it approves');
  const { runReviewWorker, runWorker } = await import('@dotasks/worker');
  const { store, notes } = options.sync ? await openStoreToSync(options) : { store: openStore(options), notes: [] as string[] };
  for (const note of notes) process.stderr.write(`tasks worker: ${note}\n`);
  const owner = actingOwner(options);
  const controller = new AbortController();
  let stopSignal: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopSignal) return;
    stopSignal = signal;
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    if (options.review) {
      await runReviewWorker({
        store,
        owner,
        command: options.command,
        cwd: options.cwd,
        merge: options.merge,
        maxTasks: positiveInt(options.maxTasks, '--max-tasks'),
        idleExitSeconds: positiveInt(options.idleExit, '--idle-exit'),
        leaseSeconds: options.lease,
        signal: controller.signal,
        onOutput: (chunk) => process.stderr.write(chunk),
        onEvent: (event) => {
          process.stderr.write(describeReviewEvent(event) + '\n');
          if (options.json) process.stdout.write(JSON.stringify(event) + '\n');
        },
      });
      return { exitCode: stopSignal ? (stopSignal === 'SIGINT' ? 130 : 143) : 0 };
    }
    const summary = await runWorker({
      store,
      owner,
      command: options.command,
      worktree: options.worktree,
      cwd: options.cwd,
      maxTasks: positiveInt(options.maxTasks, '--max-tasks'),
      idleExitSeconds: positiveInt(options.idleExit, '--idle-exit'),
      leaseSeconds: options.lease,
      maxFailures: positiveInt(options.maxFailures, '--max-failures'),
      sync: options.sync ? {} : undefined,
      signal: controller.signal,
      onOutput: (chunk) => process.stderr.write(chunk),
      onEvent: (event) => {
        process.stderr.write(describeWorkerEvent(event) + '\n');
        if (options.json) process.stdout.write(JSON.stringify(event) + '\n');
      },
    });
    const exitCode = stopSignal ? (stopSignal === 'SIGINT' ? 130 : 143) : summary.gaveUp.length ? 1 : 0;
    return { exitCode };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
