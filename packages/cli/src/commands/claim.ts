import type { ClaimResult, WorktreeClaimResult } from '@dotasks/core';
import { ClaimError, TasksError, parseTaskId, printable } from '../core-read.js';
import { actingOwner, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { openStoreToSync } from '../sync-output.js';

/** What `tasks claim` takes, as declared in the command table. */
export interface ClaimOptions extends CommandArgs<'claim'>, GlobalOptions {}

/** Reasons that mean "someone else got there first": exit 3 (docs/protocol.md, "Exit statuses"); the rest exit 1. */
const LOST = new Set(['already_claimed', 'nothing_ready']);

/**
 * Claims a task (compare-and-swap, docs/protocol.md, "Claims"); `--next`
 * takes the first ready task by priority, the work it unblocks and id (as `tasks ready` lists them), trying the next one on a lost race;
 * `--worktree` also creates the task's git worktree. A refused claim exits 3
 * (lost) or 1, with its reason on stderr (`tasks: already_claimed: …`) and,
 * with `--json`, `{claimed: false, reason, message, task, owner?, heldTask?, blockedBy?}`.
 */
export async function claim(options: ClaimOptions): Promise<CommandOutput> {
  if (options.id === undefined && !options.next) throw new TasksError('E_USAGE', 'claim needs a task id or --next');
  if (options.id !== undefined && options.next) throw new TasksError('E_USAGE', 'claim takes a task id or --next, not both');
  if (options.path !== undefined && !options.worktree) throw new TasksError('E_USAGE', '--path goes with --worktree');
  if (options.lease !== undefined && !(options.lease > 0)) throw new TasksError('E_USAGE', '--lease takes a positive number of seconds');
  const id = options.id === undefined ? undefined : parseTaskId(options.id);
  const { store, notes } = options.sync ? await openStoreToSync(options) : { store: openStore(options), notes: [] as string[] };
  const owner = actingOwner(options);
  const lease = { ttlSeconds: options.lease, pid: options.pid };
  // Merged means done: what the target holds completes first, so the work behind it is ready to claim.
  const merged = options.next && store.config.mergedMeansDone ? await (await import('../merged-work.js')).settleMergedWork(store.dir, store.config) : [];
  let result: ClaimResult | WorktreeClaimResult;
  try {
    if (options.sync) {
      if (options.worktree) throw new TasksError('E_USAGE', '--sync does not go with --worktree yet: claim with --sync, then create the worktree');
      const { claimWithSync } = await import('@dotasks/core');
      result = await claimWithSync(store, id, { owner, lease });
    } else if (options.worktree) {
      // Loaded only here: worktrees (and the rest of the core) are not needed for a plain claim.
      const { claimWithWorktree } = await import('@dotasks/core');
      result = await claimWithWorktree(store, id, { owner, lease, path: options.path, base: options.base });
    } else result = id !== undefined ? await store.claimTask(id, { owner, lease }) : await store.claimNext({ owner, lease });
  } catch (error) {
    if (!(error instanceof ClaimError)) throw error;
    const d = error.details;
    return {
      json: {
        claimed: false,
        reason: error.reason,
        message: error.message,
        // The task asked for; owner_busy names the task the owner already holds.
        task: id ?? null,
        ...(error.reason === 'already_claimed' ? { owner: d.owner } : {}),
        ...(error.reason === 'owner_busy' ? { owner: d.owner, heldTask: d.task } : {}),
        ...(error.reason === 'blocked' ? { blockedBy: d.blockedBy } : {}),
        ...(error.reason === 'not_pending' ? { status: d.status } : {}),
      },
      warnings: [...merged, `tasks: ${error.reason}: ${printable(error.message)}`],
      exitCode: LOST.has(error.reason) ? 3 : 1,
    };
  }
  const worktree = 'worktree' in result ? result.worktree : undefined;
  const lines = [
    ...notes,
    `${result.alreadyHeld ? 'already held' : 'claimed'} ${label(result.task)} (owner: ${printable(owner)}${result.lease.expiresAt ? `, lease until ${result.lease.expiresAt}` : ''})`,
  ];
  if (worktree) lines.push(`worktree ${printable(worktree.path)} on branch ${printable(worktree.branch)}${worktree.created ? '' : ' (already there)'}`);
  // An explicit claim whose paths overlap tasks in progress is made anyway, with a word about it (docs/protocol.md, "File scopes").
  const warnings = (result.overlaps ?? []).map(
    (o) => `its paths overlap #${o.task}, in progress for ${o.owner || 'nobody'} (${o.paths.join(', ')}); claimed anyway`,
  );
  return {
    text: lines.join('\n'),
    json: {
      claimed: true,
      alreadyHeld: result.alreadyHeld,
      task: viewTask(store, result.task),
      lease: result.lease,
      ...(worktree ? { worktree } : {}),
      ...(warnings.length ? { warnings } : {}),
    },
    ...(warnings.length || merged.length ? { warnings: [...merged, ...warnings.map((w) => `tasks: warning: #${result.task.id}: ${printable(w)}`)] } : {}),
  };
}
