/**
 * Claims across machines (docs/protocol.md, "Leases across machines"): the
 * board branch's `claims/task_N.json`, and when a clone may release a claim
 * another machine published.
 *
 * A published claim's expiry is never read from another machine's clock. A
 * clone keeps, for each claim it sees on the remote, the claim's blob and
 * when it first saw that blob, by its own clock (`.runtime/sync-seen.json`).
 * The holder renews by publishing a new blob (every renewal changes
 * `renewedAt` and `expiresAt`); a claim whose blob this clone has seen
 * unchanged for longer than its lease (plus a grace for the trip through the
 * remote) is released. So a clock minutes off can neither steal a live claim
 * (the reaper measures on one clock, its own) nor keep a dead one (the
 * holder's clock is not consulted), and the holder, which renews every third
 * of its lease, is never outrun by an observer that started watching after
 * the renewal was published.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { idFromFileName } from '../format/format.js';
import { atomicWriteFile, readFileIfExists } from '../fs/fsio.js';
import type { Lease } from '../runtime/leases.js';
import type { TreeEntry } from './git-objects.js';

/** A claim as published on the board branch (`claims/task_N.json`). */
export interface PublishedClaim {
  task: number;
  owner: string;
  /** The machine that holds it (its host name). */
  machine: string;
  claimedAt: string;
  /** By the holder's clock; for people and for earlier versions of dotasks, never for deciding expiry. */
  expiresAt: string | null;
  /** The length of the lease, in seconds (null: a claim that never expires). */
  leaseSeconds?: number | null;
  /** When the holder last renewed it, by the holder's clock. */
  renewedAt?: string;
}

/** A published claim counts as run out this long after this clone saw it unrenewed for its whole lease (ms). */
export const SYNC_CLOCK_GRACE_MS = 2000;

/** What this clone saw of one published claim: its blob, and since when (this clone's clock, ms). */
export interface SeenClaim {
  sha: string;
  since: number;
}

/** The seen claims of one remote branch, by task id. */
export type SeenClaims = Map<number, SeenClaim>;

const SEEN_FILE = 'sync-seen.json';

/** The claims this clone saw on `key` (`remote/branch`); none when the record is missing or unreadable (a lost record only delays a reap). */
export function readSeenClaims(runtimeDir: string, key: string): SeenClaims {
  const seen: SeenClaims = new Map();
  try {
    const all = JSON.parse(readFileIfExists(join(runtimeDir, SEEN_FILE)) ?? '{}') as Record<string, Record<string, SeenClaim>>;
    for (const [id, s] of Object.entries(all[key] ?? {}))
      if (/^[1-9]\d*$/.test(id) && typeof s?.sha === 'string' && Number.isFinite(s.since)) seen.set(Number(id), s);
  } catch {
    // an unreadable record is no record
  }
  return seen;
}

/** Writes the seen claims of `key` back (a runtime record of this clone, written under its sync lock). */
export function writeSeenClaims(runtimeDir: string, key: string, seen: SeenClaims): void {
  let all: Record<string, Record<string, SeenClaim>> = {};
  try {
    all = JSON.parse(readFileIfExists(join(runtimeDir, SEEN_FILE)) ?? '{}') as typeof all;
    if (typeof all !== 'object' || all === null || Array.isArray(all)) all = {};
  } catch {
    all = {};
  }
  all[key] = Object.fromEntries([...seen].sort((a, b) => a[0] - b[0]).map(([id, s]) => [String(id), s]));
  atomicWriteFile(join(runtimeDir, SEEN_FILE), JSON.stringify(all, null, 2) + '\n', { fsync: false });
}

/** The claims a claims folder publishes, by task id, with their blobs' ids. */
export function parseClaims(entries: Map<string, TreeEntry>, blobs: Map<string, string>): Map<number, { claim: PublishedClaim; sha: string; text: string }> {
  const claims = new Map<number, { claim: PublishedClaim; sha: string; text: string }>();
  for (const [name, entry] of entries) {
    const id = idFromFileName(name);
    if (id === undefined || entry.type !== 'blob') continue;
    try {
      const text = blobs.get(entry.sha) ?? '';
      const claim = JSON.parse(text) as PublishedClaim;
      if (claim && claim.task === id && typeof claim.owner === 'string') claims.set(id, { claim, sha: entry.sha, text });
    } catch {
      // an unreadable claim is no claim: the task's own file still says who holds it
    }
  }
  return claims;
}

/** The claim this clone publishes for one of its claim records. */
export function publishedClaimOf(lease: Lease): PublishedClaim {
  const claim: PublishedClaim = {
    task: lease.task,
    owner: lease.owner,
    machine: lease.host || hostname(),
    claimedAt: lease.claimedAt,
    expiresAt: lease.expiresAt,
  };
  const seconds = leaseSecondsOf(lease);
  if (seconds !== undefined) claim.leaseSeconds = seconds;
  if (lease.renewedAt) claim.renewedAt = lease.renewedAt;
  return claim;
}

/** A lease's length in seconds, as recorded or as its times say; null for one that never expires. */
export function leaseSecondsOf(lease: {
  expiresAt: string | null;
  claimedAt: string;
  renewedAt?: string;
  seconds?: number;
  leaseSeconds?: number | null;
}): number | null | undefined {
  if (lease.expiresAt === null) return null;
  const recorded = lease.seconds ?? lease.leaseSeconds;
  if (typeof recorded === 'number' && recorded > 0) return recorded;
  const from = Date.parse(lease.renewedAt ?? lease.claimedAt);
  const length = (Date.parse(lease.expiresAt) - from) / 1000;
  return Number.isFinite(length) && length > 0 ? length : undefined;
}

/** The text of a published claim, as it goes into the tree. */
export function claimText(claim: PublishedClaim): string {
  return JSON.stringify(claim, null, 2) + '\n';
}

/**
 * Whether another machine's published claim ran out, for this clone: seen
 * with the same blob for longer than its lease (see the module comment).
 * Records the sighting in `next` (the seen claims this round leaves).
 */
export function claimRanOut(
  id: number,
  published: { claim: PublishedClaim; sha: string },
  seen: SeenClaims,
  next: SeenClaims,
  now: number,
  defaultLeaseSeconds: number,
): { expired: boolean; seenSince: number } {
  const before = seen.get(id);
  const since = before && before.sha === published.sha ? before.since : now;
  next.set(id, { sha: published.sha, since });
  const seconds = leaseSecondsOf(published.claim);
  if (seconds === null) return { expired: false, seenSince: since };
  const lengthMs = (seconds ?? defaultLeaseSeconds) * 1000;
  return { expired: now - since > lengthMs + SYNC_CLOCK_GRACE_MS, seenSince: since };
}
