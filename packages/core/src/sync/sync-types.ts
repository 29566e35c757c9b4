/**
 * The shapes a sync is made of: what a caller asks (SyncOptions), what it is
 * told (SyncReport), and what the steps of a round hand each other
 * (SyncContext for the whole sync, RemoteState for what a round found on the
 * remote, RoundPlan for how it merges and what it pushes).
 */
import type { TaskStore } from '../store.js';
import type { GitObject, TreeEntry } from './git-objects.js';
import type { BoardMarker, FetchOutcome, GitRunner, SyncRefs } from './board-branch.js';
import type { MergeOutcome, MergeSides } from './board-merge.js';
import type { BoardTree } from './board-tree.js';
import type { SyncMemory } from './sync-memory.js';
import type { RefClaims } from './claim-refs.js';

export interface SyncOptions {
  /** The git remote (default: `syncRemote` of config.json, else `origin`). */
  remote?: string;
  /** The branch of the remote that holds the board (default `syncBranch`, else `tasks`). */
  branch?: string;
  /** Rounds before giving up when other clones keep pushing first (default 50). */
  maxRounds?: number;
  /**
   * Publish this board on purpose over a remote branch that is gone or was
   * rewritten, keeping every task of both sides (this board's value wins a
   * field both changed), and replace entries of the branch that cannot be read.
   */
  republish?: boolean;
  /** Build on a rewritten remote branch: merge this board into its history as into any other change. */
  acceptRewrite?: boolean;
  /**
   * Claim refs (claim-refs.ts): fetched with the board branch, counted as
   * published claims, and created, renewed and deleted for this clone's
   * claims with its pushes. Default true; false syncs as before claim refs.
   */
  claimRefs?: boolean;
  /** Bring the remote's board in and send nothing out (no push; claims are not reaped): a claim's look before it claims. */
  keepOut?: boolean;
  /** Push at most once: refused (another clone pushed first), what goes out waits for the next sync (`deferred` in the report). */
  onePush?: boolean;
  /** What this process remembers across its syncs (default: the process's own, sync-memory.ts). */
  memory?: SyncMemory;
  /** A move between the board's two homes (board-moves.ts), not for other callers. */
  home?: {
    /** `tasks sync --adopt`: the committed task files, the base of a first sync. */
    adoptBase?: Map<string, TreeEntry>;
    /** `tasks sync --retire`: the board branch is marked retired by this sync's push. */
    retire?: BoardMarker['retired'];
  };
}

export interface SyncReport extends MergeOutcome {
  remote: string;
  branch: string;
  /** What the sync did besides the board: locks left by a killed git, a board it set up, its first sync. */
  notes: string[];
  /** Things a person should know. */
  warnings: string[];
  /** The commit now at the head of the remote branch (undefined: the branch is still empty). */
  head?: string;
  /** How this sync went on over a branch it would otherwise have refused (`--republish`, `--accept-rewrite`). */
  resolved?: 'republished' | 'accepted';
  /** With `onePush`: its push was refused, and what would have gone out waits for the next sync. */
  deferred?: boolean;
  /** Fetch-merge-push rounds it took. */
  rounds: number;
}

/** What one sync needs all along its rounds. */
export interface SyncContext {
  store: TaskStore;
  cwd: string;
  options: SyncOptions;
  memory: SyncMemory;
  report: SyncReport;
  remote: string;
  branch: string;
  /** `origin/tasks`, for messages. */
  where: string;
  refs: SyncRefs & { pushing: string };
  /** git past its own locks (git-locks.ts). */
  run: GitRunner;
}

/** What a round found on the remote, read in one `git cat-file --batch` after the fetch. */
export interface RemoteState {
  fetch: FetchOutcome;
  /** The ref the remote's head was fetched into (none when the branch is missing). */
  headRef?: string;
  head?: GitObject;
  headTree?: GitObject;
  /** The last commit this clone merged, and its tree. */
  synced?: GitObject;
  syncedTree?: GitObject;
  /** A push this clone recorded before making it (round-push.ts). */
  pushing?: GitObject;
  markerText?: string;
  format1MarkerText?: string;
  /** The claim refs of the branch as fetched with it (undefined when claim refs are off). */
  refClaims?: RefClaims;
}

/** How a round merges and what its push must carry. */
export interface RoundPlan {
  sides: Omit<MergeSides, 'seen' | 'now'>;
  /** The tree the push builds on (the remote's head, or what this clone last synced when the branch is gone). */
  onto: BoardTree;
  /** The parents of the commit it pushes. */
  parents: string[];
  /** Push even when the tree did not change (a republished branch, a retired one). */
  mustPush: boolean;
  /** The branch was gone: the tree to push when nothing changed is the last synced one. */
  gone: boolean;
}
