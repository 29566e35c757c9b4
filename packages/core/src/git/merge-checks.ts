// The checks `tasks merge` runs on the merged result before the target
// moves (docs/protocol.md, "The way back to main"). The one boundary
// between the merge and the checks: today the board's "verify" of
// config.json, run through the shell in the scratch checkout of the result;
// the check before done (a task's own verify) runs through here too once
// it lands, with the same outcome.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { TasksError } from '../errors.js';
import type { Task } from '../format/format.js';
import { readFileIfExists } from '../fs/fsio.js';
import type { BoardFiles } from '../engine/board-files.js';
import { printableLines } from '../views/printable.js';

/** How a check on the merged result ended. */
export interface MergeCheck {
  command: string;
  cwd: string;
  passed: boolean;
  exitCode: number | null;
  durationMs: number;
  /** The end of its output, made safe for a terminal. */
  tail: string;
}

/** The most of a check's output kept for its refusal. */
const TAIL_CHARS = 2000;

/** The check a merge runs: config.json's "verify" (a shell command), if it names one. */
export function mergeCheckCommand(board: BoardFiles): string | undefined {
  const text = readFileIfExists(join(board.dir, 'config.json'));
  if (text === undefined) return undefined;
  // Opening the board read config.json (and refused one that is not a JSON object).
  const verify = (JSON.parse(text.replace(/^\uFEFF/, '')) as { verify?: unknown }).verify;
  return typeof verify === 'string' && verify.trim() !== '' ? verify : undefined;
}

/**
 * Runs the checks of `task` in `cwd` (the merged result's checkout);
 * undefined when there are none. Never throws for the check's own failure:
 * the caller decides.
 */
export function runChecks(board: BoardFiles, task: Task, cwd: string, command = mergeCheckCommand(board)): Promise<MergeCheck | undefined> {
  if (command === undefined) return Promise.resolve(undefined);
  const started = Date.now();
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4 * TAIL_CHARS));
  const env = { ...process.env, TASK_ID: String(task.id), TASK_SUBJECT: task.subject, TASKS_DIR: board.dir };
  return new Promise((resolve, reject) => {
    const child = spawn(command, { shell: true, cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) => reject(new TasksError('E_IO', `cannot run the check ${JSON.stringify(command)}: ${error.message}`, {}, { cause: error })));
    child.on('close', (code) =>
      resolve({ command, cwd, passed: code === 0, exitCode: code, durationMs: Date.now() - started, tail: printableLines(output.slice(-TAIL_CHARS)) }),
    );
  });
}

/** The refusal of a merge whose check failed: the target as it was. */
export function checkFailed(check: MergeCheck, id: number, branch: string, target: string): TasksError {
  const last = check.tail.trim().split('\n').filter(Boolean).at(-1);
  return new TasksError(
    'E_VERIFY',
    `the check ${JSON.stringify(check.command)} failed on #${id} merged into ${target} (exit ${check.exitCode ?? 'by a signal'})${last ? `: ${last}` : ''}; ${target} was left as it was: fix it on ${branch}, then 'tasks merge ${id}' again`,
    { id, command: check.command, exitCode: check.exitCode, tail: check.tail },
  );
}
