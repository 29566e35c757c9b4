/**
 * git's own lock files, met by a sync: `refs/…/NAME.lock`, created by every
 * git that updates a ref and removed when it is done. A git that is killed
 * (a sync SIGKILLed at the wrong moment) leaves its lock behind, and every
 * later git that updates that ref refuses with "remove the file manually".
 *
 * A sync runs its network commands (fetch, push) and its ref updates here:
 * when git says one of its locks is in the way, a lock of a ref only syncs
 * write (the refs of refs/dotasks/, the remote-tracking ref of the board
 * branch) that has sat there for a while with no git running in the
 * repository is removed, and the command runs again; any other lock is
 * waited for, naming it and the git that holds it, and the command fails
 * after the lock timeout saying what to remove. The waits are asynchronous,
 * so the sync's own lock keeps being refreshed (a long synchronous stretch
 * would let it go stale).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TasksError } from '../errors.js';
import { lastLine, type GitResult } from './git-objects.js';

/** What a sync knows about the repository's locks. */
export interface GitLockPolicy {
  /** The top of the checkout (where a git of the user would run). */
  top: string;
  /** The repository's common git folder (where refs and their locks live). */
  gitDir: string;
  /** Refs a lock of which may be cleared when it was left behind (full names). */
  ownRefs: string[];
  /** How long to wait for a lock held by a running git (ms). */
  timeoutMs: number;
  /** A lock this old (ms), with no git running in the repository, was left by a git that was killed. */
  leftAfterMs?: number;
  /** Told what was cleared or waited for. */
  onNote?: (note: string) => void;
}

/** A lock git could not create, from its error text. */
export function lockInTheWay(said: string): string | undefined {
  return /Unable to create '([^']+\.lock)': File exists/.exec(said)?.[1];
}

/** Runs git without blocking the event loop. */
export function gitAsync(cwd: string, args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<GitResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('git', args, { cwd, env: options.env ?? process.env, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => stdout.push(d));
    child.stderr!.on('data', (d: Buffer) => stderr.push(d));
    child.on('error', (error) => reject(new TasksError('E_GIT', `git ${args[0]} failed: ${error.message}`, { args }, { cause: error })));
    child.on('close', (code) => resolvePromise({ status: code ?? 1, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr).toString('utf8') }));
    if (child.stdin) {
      // A git that exits before reading all of its input (it failed) closes the pipe: not an error of ours.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
  });
}

/**
 * Runs git, waiting out (or clearing, see the module comment) a git lock in
 * its way; the result of the last run is returned as git gave it (callers
 * judge the status), unless a lock is still in the way at the deadline.
 */
export async function gitPastLocks(
  cwd: string,
  args: string[],
  policy: GitLockPolicy,
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<GitResult> {
  const deadline = Date.now() + policy.timeoutMs;
  let told = '';
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    const result = await gitAsync(cwd, args, options);
    const lock = result.status === 0 ? undefined : lockInTheWay(result.stdout.toString('utf8') + result.stderr);
    if (!lock) return result;
    const holders = gitProcessesIn(policy.top);
    const age = lockAge(lock);
    if (age === undefined) continue; // gone meanwhile: run again
    if (holders.length === 0 && age >= (policy.leftAfterMs ?? 1000) && isOwnRefLock(lock, policy)) {
      rmSync(lock, { force: true });
      policy.onNote?.(`removed ${lock}, left by a git that was stopped before it finished (no git is running in ${policy.top})`);
      continue;
    }
    const who = holders.length ? `held by ${holders.map((h) => `git pid ${h.pid} (${h.command})`).join(', ')}` : `${Math.round(age / 1000)} s old`;
    if (Date.now() >= deadline) {
      const advice = holders.length
        ? 'wait for that git to finish and sync again'
        : `no git is running in ${policy.top}, so a git that was killed left it: remove it (rm '${lock}') and sync again`;
      throw new TasksError('E_GIT', `git ${args[0]} could not run: git's lock ${lock} is in the way (${who}); ${advice}`, {
        lock,
        holders,
        stderr: result.stderr,
        last: lastLine(result),
      });
    }
    if (told !== lock) policy.onNote?.(`waiting for git's lock ${lock} (${who})`);
    told = lock;
    await sleep(delay);
  }
}

/** How long ago a lock file was made (ms), or undefined when it is gone. */
function lockAge(path: string): number | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat ? Math.max(0, Date.now() - stat.mtimeMs) : undefined;
}

/** Whether a lock is the lock of one of the refs only syncs write. */
function isOwnRefLock(lock: string, policy: GitLockPolicy): boolean {
  const rel = relative(resolve(policy.gitDir), resolve(lock)).split(sep).join('/');
  if (rel.startsWith('..') || isAbsolute(rel)) return false;
  return rel.endsWith('.lock') && policy.ownRefs.includes(rel.slice(0, -'.lock'.length));
}

/** git processes whose working folder is inside `top` (Linux's /proc; none known elsewhere). */
export function gitProcessesIn(top: string): { pid: number; command: string }[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const inside = resolve(top);
  const found: { pid: number; command: string }[] = [];
  for (const pid of pids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'git') continue;
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cwd !== inside && !cwd.startsWith(inside + sep)) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      found.push({ pid: Number(pid), command });
    } catch {
      // gone, or not ours to look at
    }
  }
  return found;
}
