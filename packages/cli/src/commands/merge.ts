import { mergeTask, parseTaskId, type MergeSlotWait, type MergeTaskResult } from '@dotasks/core/internal';
import { printable } from '../core-read.js';
import { actingOwner, describeUnblocked, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks merge` takes, as declared in the command table. */
export interface MergeOptions extends CommandArgs<'merge'>, GlobalOptions {}

/** `waiting for the merge slot held by pid 1234 (agent-1, merging #3)…`, said once after a second. */
function reportSlotWait(wait: MergeSlotWait): void {
  const holder = wait.holder;
  const who = holder ? `pid ${holder.pid} (${printable(holder.owner || 'nobody')}, merging #${holder.task})` : wait.pid ? `pid ${wait.pid}` : 'another process';
  process.stderr.write(`tasks: waiting for the merge slot held by ${who}…\n`);
}

const HOW: Record<MergeTaskResult['how'], string> = {
  merge: 'a merge commit',
  rebase: 'rebased onto it',
  'fast-forward': 'a fast-forward',
  already: 'it held it already',
};

/**
 * `tasks merge ID`: brings the task's branch into its target (docs/protocol.md,
 * "The way back to main"), one merge at a time on this machine, runs the
 * checks on the result before the target moves, completes the task and
 * removes its worktree and branch. A conflict, a failing check or a target
 * that moved meanwhile change nothing and exit 1.
 */
export async function merge(options: MergeOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const result = await mergeTask(store, id, {
    actor: actingOwner(options),
    force: options.force,
    ff: options.ff,
    cwd: options.cwd,
    onWait: reportSlotWait,
  });
  const check = result.check ? ` after ${JSON.stringify(result.check.command)} passed on the result` : '';
  const lines = [
    `merged ${printable(result.branch)} into ${printable(result.target)} (${HOW[result.how]}, ${result.to.slice(0, 12)})${check}`,
    `completed ${label(result.task)}${result.approved ? `, approved by ${printable(result.task.review?.by ?? '')}` : ''}`,
    ...describeUnblocked(store, result.unblocked),
  ];
  if (result.worktreeRemoved || result.branchDeleted)
    lines.push(
      `removed ${[result.worktreeRemoved ? 'its worktree' : '', result.branchDeleted ? `branch ${printable(result.branch)}` : ''].filter(Boolean).join(' and ')}`,
    );
  return {
    text: lines.join('\n'),
    json: {
      task: viewTask(store, result.task),
      unblocked: result.unblocked,
      branch: result.branch,
      target: result.target,
      how: result.how,
      from: result.from,
      to: result.to,
      check: result.check
        ? { command: result.check.command, passed: result.check.passed, exitCode: result.check.exitCode, durationMs: result.check.durationMs }
        : null,
      approved: result.approved,
      worktreeRemoved: result.worktreeRemoved,
      branchDeleted: result.branchDeleted,
      notes: result.notes,
    },
    ...(result.notes.length ? { warnings: result.notes.map((n) => `tasks: note: #${id}: ${printable(n)}`) } : {}),
  };
}
