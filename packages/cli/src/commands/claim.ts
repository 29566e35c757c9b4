import { ClaimError, TasksError, parseTaskId } from '@dotasks/core';
import { actingOwner, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';

export interface ClaimOptions extends GlobalOptions {
  id?: string;
  next?: boolean;
  lease?: number;
  pid?: number;
}

/**
 * Claims a task (compare-and-swap, PROTOCOL §6). A lost claim exits 3 with
 * its reason; `--json` prints `{claimed: false, reason, message}` then.
 */
export async function claim(options: ClaimOptions): Promise<CommandOutput> {
  if (options.id === undefined && !options.next) throw new TasksError('E_USAGE', 'claim needs a task id or --next');
  if (options.id !== undefined && options.next) throw new TasksError('E_USAGE', 'claim takes a task id or --next, not both');
  const store = openStore(options);
  const owner = actingOwner(options);
  const lease = { ttlSeconds: options.lease, pid: options.pid };
  try {
    const result =
      options.id !== undefined
        ? await store.claimTask(parseTaskId(options.id), { owner, lease })
        : await store.claimNext({ owner, lease });
    return {
      text: `${result.alreadyHeld ? 'already held' : 'claimed'} ${label(result.task)} (owner: ${owner}${result.lease.expiresAt ? `, lease until ${result.lease.expiresAt}` : ''})`,
      json: { claimed: true, task: viewTask(store, result.task), lease: result.lease },
    };
  } catch (error) {
    if (error instanceof ClaimError && options.json) {
      return {
        json: { claimed: false, reason: error.reason, message: error.message, ...error.details },
        warnings: [`tasks: ${error.message}`],
        exitCode: error.reason === 'already_claimed' || error.reason === 'nothing_ready' ? 3 : 1,
      };
    }
    throw error;
  }
}
