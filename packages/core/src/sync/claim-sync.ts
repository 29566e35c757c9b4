/**
 * `tasks claim --sync` (and `worker --sync`): a claim that counts only once
 * the other machines can see it on the remote.
 */
import { ClaimError } from '../errors.js';
import type { ClaimOptions, ClaimResult, TaskStore } from '../store.js';
import { syncBoard } from './sync-rounds.js';
import { processSyncMemory } from './sync-memory.js';
import type { SyncOptions, SyncReport } from './sync-types.js';

/** claimWithSync does not sync before claiming when this process synced the board this recently (ms). */
const FRESH_MS = 1000;

/**
 * A claim that counts only once it is on the remote (`tasks claim --sync`):
 * syncs to see the other machines' claims, claims here, syncs again. When
 * the remote gave the task to another machine meanwhile, the sync withdraws
 * this claim: `claim ID` then fails as a lost race, `--next` tries the next
 * ready task. When the claim cannot be published (the remote is down), it is
 * released here again and the error says why: nobody works a task the other
 * machines cannot see is taken.
 */
export async function claimWithSync(
  store: TaskStore,
  id: number | undefined,
  options: ClaimOptions & { sync?: SyncOptions },
): Promise<ClaimResult & { sync: SyncReport }> {
  // See the other machines' claims first, unless this process just did (a worker's sync after its last task).
  if (!(options.sync?.memory ?? processSyncMemory).syncedWithin(store.dir, FRESH_MS)) await syncBoard(store, options.sync);
  for (let attempt = 0; attempt < 20; attempt++) {
    const result = id !== undefined ? await store.claimTask(id, options) : await store.claimNext(options);
    let report: SyncReport;
    try {
      report = await syncBoard(store, options.sync);
    } catch (error) {
      if (!result.alreadyHeld)
        await store
          .releaseTask(result.task.id, { actor: options.owner, heldBy: options.owner, reason: 'the claim could not be published to the remote' })
          .catch(() => undefined);
      throw error;
    }
    // The claimed task may have moved to a free id in that sync (it was created here, and the remote had its id).
    const claimed = report.renumbered.find((r) => r.from === result.task.id)?.to ?? result.task.id;
    // What the board says after the sync decides, not this sync's report: another process of this
    // clone may have synced in between and withdrawn the claim already.
    const now = store.getTask(claimed);
    if (now.status === 'in_progress' && now.owner === options.owner) return { ...result, task: now, sync: report };
    if (id !== undefined)
      throw new ClaimError('already_claimed', `#${id} was claimed on another machine by ${now.owner || 'someone'} first`, { task: id, owner: now.owner });
  }
  throw new ClaimError('nothing_ready', 'every ready task was claimed on another machine first; try again', {});
}
