/**
 * One run of a check before done (docs/protocol.md, "Checks before done"):
 * a task's verify command, through the shell, in a process group of its own
 * so a timeout or an interruption stops all of it, with the end of its
 * output kept as a tail that is safe to put in a note and on a terminal.
 * No board lock is held here: a check can take minutes.
 */
import { TasksError } from '../errors.js';
import { printableLines } from '../views/printable.js';
import { killGroup } from './processes.js';

/** The most of a check's output a note and a refusal carry: its last lines, at most this many … */
export const CHECK_TAIL_LINES = 40;
/** … and at most this many characters. */
export const CHECK_TAIL_CHARS = 4096;
/** How much raw output is kept while the check runs, before the tail is cut from it. */
const RAW_KEEP_CHARS = 64 * 1024;
/** Between SIGTERM and SIGKILL for a check that is stopped. */
const KILL_GRACE_MS = 3000;

/** What to run, where. */
export interface CheckSpec {
  /** The shell command. */
  command: string;
  /** Where it runs: the task's worktree, or the top of the repository. */
  cwd: string;
}

/** How a check ended. */
export interface CheckRun extends CheckSpec {
  /** True when it exited 0 in time. */
  passed: boolean;
  exitCode: number | null;
  signal: string | null;
  /** Stopped after the board's `verifyTimeoutSeconds`. */
  timedOut: boolean;
  /** Stopped because the caller gave up on it (Ctrl-C, a worker that lost its task). */
  interrupted: boolean;
  durationMs: number;
  /** The end of its output (stdout and stderr as they came): escape sequences removed, other invisible characters escaped. */
  tail: string;
}

export interface RunCheckOptions {
  /** The environment it starts from. */
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Aborting stops the check's whole group; it then ends `interrupted`. */
  signal?: AbortSignal;
}

/** Runs a check through the shell and resolves with how it ended; never rejects for the check's own failure. */
export function runCheck(spec: CheckSpec, options: RunCheckOptions): Promise<CheckRun> {
  const started = Date.now();
  let raw = '';
  let timedOut = false;
  let interrupted = false;
  // Loaded when a check runs: every `tasks done` loads this module, and most tasks have no check.
  const { spawn } = process.getBuiltinModule('node:child_process');
  const child = spawn(spec.command, { shell: true, cwd: spec.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (chunk: Buffer) => {
    raw = (raw + chunk.toString('utf8')).slice(-RAW_KEEP_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const stop = () => (child.pid === undefined ? Promise.resolve() : killGroup(child.pid, KILL_GRACE_MS).catch(() => undefined));
  const timer = setTimeout(() => {
    timedOut = true;
    void stop();
  }, options.timeoutMs);
  const onAbort = () => {
    interrupted = true;
    void stop();
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  return new Promise<CheckRun>((resolve) => {
    let settled = false;
    const finish = (exitCode: number | null, signal: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const passed = exitCode === 0 && !timedOut && !interrupted;
      resolve({ ...spec, passed, exitCode, signal, timedOut, interrupted, durationMs: Date.now() - started, tail: checkTail(raw) });
    };
    child.on('error', (error) => {
      raw += `\n${error.message}`;
      finish(127, null);
    });
    child.on('exit', (code, signal) => {
      // Output can still be in flight; wait for the pipes, but not for a background process that kept them open.
      setTimeout(() => finish(code, signal), 1000).unref();
      child.on('close', () => finish(code, signal));
    });
  });
}

// CSI (`ESC [ … final`, and the one-byte C1 form), OSC and the other string controls (DCS, SOS, PM, APC: up to BEL, ST or the
// next ESC), the escapes with intermediate bytes (`ESC ( B`), the two-character ones, and an ESC left on its own.
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]+[0-~]|\x1b[@-Z\\-_]|\x1b/g;

/**
 * The end of a check's output as notes and refusals carry it: terminal
 * escape sequences removed (colours and titles mean nothing in a file, and
 * must not act on whoever reads it), a line rewritten with `\r` (a progress
 * bar) as it was left, the last CHECK_TAIL_LINES lines within
 * CHECK_TAIL_CHARS, and whatever else draws nothing shown as its escape
 * (printable.ts).
 */
export function checkTail(raw: string): string {
  const lines = raw
    .replace(ESCAPES, '')
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => line.slice(line.lastIndexOf('\r') + 1).trimEnd());
  while (lines.length && lines.at(-1) === '') lines.pop();
  while (lines.length && lines[0] === '') lines.shift();
  let tail = lines.slice(-CHECK_TAIL_LINES).join('\n');
  if (tail.length > CHECK_TAIL_CHARS) {
    tail = tail.slice(-CHECK_TAIL_CHARS);
    // Start at a line: a cut line reads as garbage.
    const nl = tail.indexOf('\n');
    if (nl >= 0 && nl < tail.length - 1) tail = tail.slice(nl + 1);
  }
  return printableLines(tail);
}

/** How a failed check ended, in words: `exit 1`, `timed out after 600 s`, `killed by SIGKILL`. */
export function describeCheckEnd(run: CheckRun): string {
  if (run.interrupted) return 'interrupted';
  if (run.timedOut) return `timed out after ${Math.round(run.durationMs / 1000)} s`;
  if (run.signal) return `killed by ${run.signal}`;
  return `exit ${run.exitCode}`;
}

/**
 * A check that did not pass: the task was not completed. Its `details` carry
 * the run (command, cwd, exit code, signal, timedOut, interrupted, tail).
 */
export class VerifyError extends TasksError {
  readonly run: CheckRun;

  constructor(task: number, run: CheckRun, message: string) {
    super('E_VERIFY', message, {
      task,
      command: run.command,
      cwd: run.cwd,
      exitCode: run.exitCode,
      signal: run.signal,
      timedOut: run.timedOut,
      interrupted: run.interrupted,
      tail: run.tail,
    });
    this.name = 'VerifyError';
    this.run = run;
  }
}
