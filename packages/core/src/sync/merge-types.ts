/**
 * What a sync's merge works with and reports (board-merge.ts): the two sides
 * and the base of a round, what it did (SyncReport carries these fields), and
 * the merged board and claims it hands the push.
 */
import type { MergeConflict } from '../git/merge.js';
import type { TreeEntry } from './git-objects.js';
import type { SeenClaims } from './published-claims.js';
import type { RefClaimRecord, RefClaims } from './claim-refs.js';

/** One task that came in or went out. */
export interface SyncChange {
  id: number;
  /** What happened, for people: `claimed by agent-1`, `completed`, `created`, `updated` … */
  what: string;
}

/** An entry that was not synced, and why. */
export interface SkippedEntry {
  /** Where it is: `origin/tasks:tasks/0/task_9.json` for the remote's, the file's path for this board's. */
  entry: string;
  id?: number;
  side: 'remote' | 'local';
  problem: string;
}

/** A task of this clone moved to a free id. */
export interface Renumbered {
  from: number;
  to: number;
  /** Who held it in progress when it moved. */
  owner?: string;
  /** Its worktree's branch, renamed with it. */
  branch?: { from: string; to: string };
}

/** A claim this clone held that the remote gives to someone else, or released. */
export interface WithdrawnClaim {
  id: number;
  owner: string;
  /** Who holds it now ('' when the remote released it). */
  winner: string;
}

/** A task released because another machine's claim was not renewed for a whole lease, as this clone saw it. */
export interface ReapedClaim {
  id: number;
  owner: string;
  machine: string;
  /** The claim's expiry as its holder published it, by the holder's clock (for people; expiry is not decided by it). */
  expiredAt: string | null;
  /** Since when this clone saw the claim unrenewed, by its own clock. */
  seenSince: string;
}

/** What the two sides and the base are, for one round. */
export interface MergeSides {
  /** The tree merged against: what both sides last agreed on. */
  base: Map<string, TreeEntry>;
  /** The last tree this clone synced: a task not in it was created here (for renumbering). */
  synced: Map<string, TreeEntry>;
  theirs: Map<string, TreeEntry>;
  /** The entries of the remote's claims folder. */
  claimEntries: Map<string, TreeEntry>;
  /** How the remote is named in findings: `origin/tasks`. */
  where: string;
  /** Where a name of `theirs` sits on the branch (`tasks/0/task_5.json`), for findings. */
  pathOf?: (name: string) => string;
  /** Which side a field both changed differently takes. */
  prefer: 'ours' | 'theirs';
  /** `tasks sync --republish`: an unreadable remote entry is replaced by this board's copy (or left out). */
  republish: boolean;
  /** The other machines' claims this clone saw before this round (published-claims.ts). */
  seen: SeenClaims;
  now: number;
  /** The claim refs fetched with the branch (claim-refs.ts); they come before the branch's `claims/`. None: claim refs are off. */
  refClaims?: RefClaims;
  /** A round whose push may not happen (a claim's look before it claims, a push tried once): no claim runs out in it, so no release is left here that the remote never got. */
  noReap: boolean;
}

/** What a merge did, as a sync reports it (SyncReport carries these fields). */
export interface MergeOutcome {
  /** Changes from the remote written to this board. */
  incoming: SyncChange[];
  /** Changes of this board that are now on the remote. */
  outgoing: SyncChange[];
  /** Tasks of this clone moved to a free id because the remote had given theirs to another task. */
  renumbered: Renumbered[];
  /** Fields both sides changed differently; the remote's value was kept (this board's with --republish). */
  conflicts: (MergeConflict & { id: number })[];
  /** Claims this clone held that the remote gives to someone else, or released: withdrawn here. */
  withdrawn: WithdrawnClaim[];
  /** Tasks released because another machine's claim was not renewed for a whole lease, as this clone saw it. */
  reaped: ReapedClaim[];
  /** Entries that were not synced because they cannot be read (on the remote or here); everything else was. */
  skipped: SkippedEntry[];
}

/** An outcome with nothing in it yet. */
export function noOutcome(): MergeOutcome {
  return { incoming: [], outgoing: [], renumbered: [], conflicts: [], withdrawn: [], reaped: [], skipped: [] };
}

/** One round's merge: what the report says about it, the merged board and the claims to publish. */
export interface MergePlan extends MergeOutcome {
  /** Entries of the pushed tree: name → text, or undefined to leave the name out; a name not here keeps the remote's entry. */
  files: Map<string, string | undefined>;
  /** The claims to publish (`claims/task_N.json` → text). */
  claims: Map<string, string>;
  /** The seen claims this round leaves. */
  seen: SeenClaims;
  /** The claim refs its push moves (claim-ref-merge.ts): created, renewed (with `claim`) or deleted (without). */
  claimRefs: PlannedClaimRef[];
}

/** A claim ref a round's push moves; `expected` is its lease ('' for a ref that must not exist yet). */
export interface PlannedClaimRef {
  id: number;
  expected: string;
  /** The claim it is to hold; none: the ref is deleted. */
  claim?: { text: string; record: RefClaimRecord };
}
