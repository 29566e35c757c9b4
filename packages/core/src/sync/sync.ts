/**
 * `tasks sync`: one board across clones, through a branch of a git remote
 * (docs/decisions.md, "Several machines: the board branch"; the rules are in
 * docs/protocol.md, "Several machines").
 *
 * The board travels on its own branch (default `tasks`), written with git
 * plumbing only: blobs, a tree, a commit, a push. The user's HEAD, index,
 * code branches and uncommitted work are never touched. A push that is not
 * a fast-forward is refused by the remote: that refusal is the
 * compare-and-swap. A round fetches the branch, merges it three ways with
 * the board's files (board-merge.ts; the base is the last commit this clone
 * merged, kept as `refs/dotasks/synced/<remote>/<branch>`), writes what came
 * in through one board transaction, and pushes what goes out; a refused
 * push starts the next round.
 *
 * The remote is never trusted to mean "delete everything": a branch that is
 * gone, rewritten (not a descendant of what this clone last synced) or not a
 * board branch at all stops the sync before anything is changed here, with
 * the one command that goes on on purpose (`--republish`, `--accept-rewrite`).
 */

// The room's entry points, from the files that hold them.
export { SYNC_LOCK, syncBoard } from './sync-rounds.js';
export type { SyncChange, SkippedEntry, Renumbered, ReapedClaim, WithdrawnClaim } from './board-merge.js';
export type { SyncOptions, SyncReport } from './sync-types.js';
export type { RemoteRefusal } from './remote-look.js';
export { SyncMemory } from './sync-memory.js';
export { SYNC_CLOCK_GRACE_MS, type PublishedClaim } from './published-claims.js';
export { claimWithSync } from './claim-sync.js';
export { startSyncLoop, type SyncLoopOptions } from './sync-loop.js';
