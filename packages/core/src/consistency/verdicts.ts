/**
 * The vocabulary of board consistency: what the files say about one task's
 * edges (EdgeNode), the verdict on one edge or on the whole graph, and the
 * findings the watcher reports. Judged in reconcile.ts.
 */
import type { TaskStatus } from '../format/format.js';
import type { LinkField } from '../format/task-links.js';

/** What the files say about one task's soft links (docs/protocol.md, "Links"). */
export type LinkNode = { status: TaskStatus } & { readonly [K in LinkField]?: readonly number[] };

/** What the files say about one task's edges and links: all a consistency check needs. */
export type EdgeNode = LinkNode & {
  blockedBy: readonly number[];
  blocks: readonly number[];
};

/** Something on the board that needs a fix, or a person. */
export type BoardFinding =
  /** `task` is completed or deleted and dependents still list it in `blockedBy` (propagateCompletion). */
  | { kind: 'propagate'; task: number }
  /** The edge "blocker blocks waiter" is stated on one side only: write the missing `field` into `task`. */
  | { kind: 'add-side'; blocker: number; waiter: number; task: number; field: 'blocks' | 'blockedBy' }
  /** A person removed one side of an edge: drop the other side, `field` of `task`, too. */
  | { kind: 'remove-side'; blocker: number; waiter: number; task: number; field: 'blocks' | 'blockedBy' }
  /** A soft link stated on one side only (`add`: write `other` into `field` of `task`), or whose other side went (`remove`: drop it from `task`). */
  | { kind: 'link-side'; change: 'add' | 'remove'; task: number; field: LinkField; other: number }
  /** A file that does not parse or validate, or an edge that cannot be repaired. Nothing is written. */
  | { kind: 'invalid'; file: string; task?: number; line?: number; column?: number; problem: string };

/** Which side of an edge a file states. */
export type EdgeField = 'blocks' | 'blockedBy';

/**
 * What docs/protocol.md ("Edges") says about one edge "blocker blocks
 * waiter" as the files state it. The one judgement of board consistency: the watcher turns it into
 * `BoardFinding`s, `tasks doctor` into its own findings, and both repair with
 * `settleEdge`.
 */
export type EdgeVerdict =
  /** `blocker` is completed or deleted and `waiter.blockedBy` still names it, with both sides stated: drop it (propagation). */
  | { kind: 'propagate'; blocker: number; waiter: number }
  /** Stated on one side only: write `field` into `task`. A completed blocker gets the side as history and leaves `waiter.blockedBy`. */
  | { kind: 'add-side'; blocker: number; waiter: number; task: number; field: EdgeField }
  /** A person removed one side: drop the other side, `field` of `task`, too. */
  | { kind: 'remove-side'; blocker: number; waiter: number; task: number; field: EdgeField }
  /**
   * Needs a person; nothing is written. `task`/`field` is where the edge is
   * stated: a self-edge, an edge to a missing task, a blocker deleted before
   * the edge was made, or an edge that closes `cycle` (`[x, …, x]`, lowest id first).
   */
  | { kind: 'broken'; reason: 'self' | 'missing' | 'deleted' | 'cycle'; blocker: number; waiter: number; task: number; field: EdgeField; cycle?: number[] };

/** A verdict on the whole board: an edge's, or a cycle made of edges stated on both sides (`[x, …, x]`, lowest id first). */
export type GraphVerdict = EdgeVerdict | { kind: 'cycle'; cycle: number[] };
