import { readFileSync, readdirSync } from 'node:fs';
import { isErrnoException } from '../errors.js';

/**
 * Process checks that do not count zombies as alive: a killed process that
 * its parent has not reaped yet still answers `kill(pid, 0)`.
 */

const HAS_PROC = (() => {
  try {
    readdirSync('/proc/self');
    return true;
  } catch {
    return false;
  }
})();

interface ProcStat {
  state: string;
  pgrp: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], pgrp: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

/** True when a process (or, with a negative number, a group) can be signalled; zombies count. */
export function signalExists(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return isErrnoException(error, 'EPERM');
  }
}

/** True when `pid` runs (and is not a zombie). */
export function isRunning(pid: number): boolean {
  if (!signalExists(pid)) return false;
  if (!HAS_PROC) return true;
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Pids of the live (non-zombie) members of process group `pgid`. */
export function groupMembers(pgid: number): number[] {
  if (!signalExists(-pgid)) return [];
  if (!HAS_PROC) return [pgid];
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') out.push(Number(name));
  }
  return out;
}

/** Sends `signal` to every process of group `pgid`; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (isErrnoException(error, 'ESRCH')) return false;
    throw error;
  }
}

/**
 * Ends a whole process group (children and grandchildren): SIGTERM, then
 * SIGKILL for whatever is left after `graceMs`. Resolves when no member runs.
 */
export async function killGroup(pgid: number, graceMs = 3000, timeoutMs = 15000): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  const start = Date.now();
  let killed = false;
  for (;;) {
    if (groupMembers(pgid).length === 0) return;
    const waited = Date.now() - start;
    if (!killed && waited >= graceMs) {
      killed = true;
      signalGroup(pgid, 'SIGKILL');
    }
    if (waited >= graceMs + timeoutMs) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
