import { mkdirSync, readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isErrnoException } from '../errors.js';
import { isRunning } from './processes.js';
import { atomicWriteFile, readFileIfExists } from '../fs/fsio.js';

/**
 * A claim's runtime record in `.tasks/.runtime/leases/task_N.json`, never in
 * the task file (docs/protocol.md, "Leases"). `expiresAt: null` is a claim
 * that never expires (a person's `tasks start`).
 */
export interface Lease {
  task: number;
  owner: string;
  host: string;
  pid?: number;
  worktree?: string;
  claimedAt: string;
  expiresAt: string | null;
  /** The lease's length in seconds, kept by every renewal (absent: a claim that never expires, or an older record). */
  seconds?: number;
  /** When it was last renewed (absent until the first renewal). */
  renewedAt?: string;
  /**
   * A record written for a task found in progress without one (set by hand,
   * by git, by a sync or an import), not by a claim made here: on a synced
   * board the claim another machine published for it comes first.
   */
  adopted?: true;
  /**
   * A reviewer's claim of a task waiting for review (docs/protocol.md,
   * "Review"): `owner` is the reviewer, not the task's owner; the task itself
   * has no claim of its owner's while it is in review.
   */
  review?: true;
}

/** What a caller says about the process that will keep working on a claim. */
export interface LeaseInput {
  /** Seconds until the lease expires; null for no expiry. Default: the board's leaseSeconds. */
  ttlSeconds?: number | null;
  pid?: number;
  worktree?: string;
}

export const LEASES_DIR = 'leases';

function leaseFile(runtimeDir: string, id: number): string {
  return join(runtimeDir, LEASES_DIR, `task_${id}.json`);
}

/** Reads one lease, or undefined when there is none (or it is unreadable). */
export function readLease(runtimeDir: string, id: number): Lease | undefined {
  return parseLease(readFileIfExists(leaseFile(runtimeDir, id)), id);
}

/** The claim record of task `id` in `text`; undefined when there is none or it is not one (unreadable, another task's). */
export function parseLease(text: string | undefined, id: number): Lease | undefined {
  if (text === undefined) return undefined;
  try {
    const lease = JSON.parse(text) as Lease;
    return typeof lease.owner === 'string' && lease.task === id ? lease : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes a lease record directly, atomically. For tests and tools that set up
 * a board; the store writes claim records through its transaction (with the
 * task's lock, durably, in the right order with the task file).
 */
export function writeLease(runtimeDir: string, lease: Lease): void {
  mkdirSync(join(runtimeDir, LEASES_DIR), { recursive: true });
  atomicWriteFile(leaseFile(runtimeDir, lease.task), JSON.stringify(lease, null, 2) + '\n', { fsync: false });
}

/** Every lease on the board. */
export function listLeases(runtimeDir: string): Lease[] {
  let names: string[];
  try {
    names = readdirSync(join(runtimeDir, LEASES_DIR));
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return [];
    throw error;
  }
  const out: Lease[] = [];
  for (const name of names) {
    const m = /^task_([1-9][0-9]*)\.json$/.exec(name);
    if (!m) continue;
    const lease = readLease(runtimeDir, Number(m[1]));
    if (lease) out.push(lease);
  }
  return out.sort((a, b) => a.task - b.task);
}

/** Builds a lease record for a claim made now. */
export function createLease(task: number, owner: string, input: LeaseInput | null, defaultTtlSeconds: number, now = Date.now()): Lease {
  const ttl = input === null ? null : input.ttlSeconds === undefined ? defaultTtlSeconds : input.ttlSeconds;
  const lease: Lease = {
    task,
    owner,
    host: hostname(),
    claimedAt: new Date(now).toISOString(),
    expiresAt: ttl === null ? null : new Date(now + ttl * 1000).toISOString(),
  };
  if (ttl !== null) lease.seconds = ttl;
  if (input?.pid !== undefined) lease.pid = input.pid;
  if (input?.worktree !== undefined) lease.worktree = input.worktree;
  return lease;
}

/** The length a renewal gives a lease when none is asked for: the one it was given (null: it never expires). */
export function leaseLengthOf(lease: Lease): number | null | undefined {
  if (lease.expiresAt === null) return null;
  if (typeof lease.seconds === 'number' && lease.seconds > 0) return lease.seconds;
  // An older record without its length: from its times, as far as they tell.
  const length = (Date.parse(lease.expiresAt) - Date.parse(lease.renewedAt ?? lease.claimedAt)) / 1000;
  return Number.isFinite(length) && length > 0 ? Math.round(length) : undefined;
}

/** Why a lease no longer holds, or undefined while it does. */
export function leaseExpiry(lease: Lease, now = Date.now()): 'expired' | 'process_gone' | undefined {
  if (lease.expiresAt !== null && Date.parse(lease.expiresAt) <= now) return 'expired';
  if (lease.pid !== undefined && lease.host === hostname() && !isRunning(lease.pid)) return 'process_gone';
  return undefined;
}
