import { inReview, parseTaskId, renderReviewWait, type CheckRun, type CheckSpec, type TasksError } from '@dotasks/core';
import { actingOwner, describeCompletedParents, describeUnblocked, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printable, printableLines } from '../core-read.js';

/** What `tasks done` takes, as declared in the command table; `quietCheck` (the terminal board, which owns the screen) leaves out the line that says a check starts. */
export interface DoneOptions extends CommandArgs<'done'>, GlobalOptions {
  quietCheck?: boolean;
}

/**
 * Completes a task and prints the tasks it unblocked. A task with a check
 * before done (its `verify`, or the board's) completes only when the check
 * exits 0; it runs first, without any lock, and Ctrl-C stops it. A failing
 * check is one line and the end of its output on stderr, exit 1.
 */
export async function done(options: DoneOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const store = openStore(options);
  const interrupt = new CheckInterrupt();
  try {
    const result = await store.finishTask(id, {
      actor: actingOwner(options),
      force: options.force,
      ...(options.result !== undefined ? { result: options.result } : {}),
      signal: interrupt.signal,
      onCheck: (spec) => {
        interrupt.listen();
        if (!options.quietCheck) reportCheckStart(id, spec);
      },
    });
    const parents = result.completedParents ?? [];
    const lines = [
      ...(result.check ? [`check passed in ${(result.check.durationMs / 1000).toFixed(1)} s: ${printable(result.check.command)}`] : []),
      ...(result.skipped !== undefined ? [`check skipped (--force): ${printable(result.skipped)}; the task's notes say so`] : []),
      // A task that requires review is finished into review instead (docs/protocol.md, "Review").
      inReview(result.task) ? printable(renderReviewWait(result.task)) : `completed ${label(result.task)}`,
      ...describeCompletedParents(store, parents),
      ...describeUnblocked(store, result.unblocked),
    ];
    const check = result.check ? { check: checkView(result.check) } : result.skipped !== undefined ? { check: { command: result.skipped, skipped: true } } : {};
    const review = inReview(result.task) ? { inReview: true } : {};
    const json = {
      task: viewTask(store, result.task),
      unblocked: result.unblocked,
      ...check,
      ...review,
      ...(parents.length ? { completedParents: parents } : {}),
    };
    return { text: lines.join('\n'), json };
  } catch (error) {
    if ((error as TasksError)?.code === 'E_VERIFY') return refused(error as TasksError, interrupt.stoppedBy);
    throw error;
  } finally {
    interrupt.stop();
  }
}

/** Ctrl-C (or SIGTERM) while the check runs stops the check's whole process group instead of leaving it behind. */
class CheckInterrupt {
  private readonly controller = new AbortController();
  stoppedBy: NodeJS.Signals | undefined;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.stoppedBy ??= signal;
    this.controller.abort();
  };

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  listen(): void {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  stop(): void {
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }
}

/** Says on stderr which check runs where: a check can take minutes, and silence looks like a hang. */
function reportCheckStart(id: number, spec: CheckSpec): void {
  // The stream, as lock-wait.ts does: run.ts's writeOut would pull run.ts into this command's chunk of the bundle.
  process.stderr.write(`tasks: checking #${id}: ${printable(spec.command)} (in ${printable(spec.cwd)})…\n`);
}

/** A check as `done --json` shows it. */
function checkView(run: CheckRun) {
  return { command: run.command, cwd: run.cwd, passed: run.passed, exitCode: run.exitCode, durationMs: run.durationMs };
}

/** The refusal of a failed check: one line, then the end of its output, on stderr; `{"error": …}` with --json; exit 1 (130/143 when interrupted). */
function refused(error: TasksError, stoppedBy: NodeJS.Signals | undefined): CommandOutput {
  const tail = typeof error.details.tail === 'string' ? error.details.tail : '';
  const lines = tail.trim() && !error.details.interrupted ? printableLines(tail).split('\n') : [];
  return {
    warnings: [`tasks: ${error.message}`, ...lines.map((line) => `  | ${line}`)],
    json: { error: { code: error.code, message: error.message, ...error.details } },
    exitCode: stoppedBy === 'SIGINT' ? 130 : stoppedBy === 'SIGTERM' ? 143 : 1,
  };
}
