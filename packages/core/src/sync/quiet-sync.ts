/**
 * A sync with nothing to do does nothing (docs/decisions.md, "A sync that
 * finds nothing to do"): when the remote's head is the commit this clone
 * last synced and no file of the board changed since that sync, the round
 * ends after the fetch, without reading the branch's tree, the board's
 * files or taking the board lock.
 *
 * "No file changed" is a look at every board file's identity (inode, size,
 * mtime, ctime: one stat each, no read), the names in the board folder and
 * in the claim records' folder, folded into one digest; on a board with a
 * large history, the look of the everyday commands instead (a stat of each
 * open file and the board index's word for the closed ones,
 * engine/open-view.ts, openViewKey). A sync records the
 * digest of the look it made before its merge, and only when the look after
 * its push found the same (its merge wrote nothing here, nobody changed
 * anything meanwhile) and the merge left nothing that time alone changes
 * (another machine's published claim, watched until it runs out) or that a
 * sync reports every time (an entry it skipped). A look is trusted only if
 * every identity in it is older than a clock reading of the same file system
 * taken before the look, as git does with racily clean index entries: a file
 * rewritten within the same clock tick, with the same size, would otherwise
 * keep its identity.
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { idFromFileName } from '../format/format.js';
import { atomicWriteFile, readFileIfExists } from '../fs/fsio.js';
import { HIGHWATERMARK_FILE } from '../engine/transaction.js';
import { readHighWaterMarkQuiet } from '../engine/board-index.js';
import { FOLD_HISTORY_AT, openViewKey } from '../engine/open-view.js';
import { LEASES_DIR, listLeases } from '../runtime/leases.js';
import type { TaskStore } from '../store.js';
import type { MergePlan } from './merge-types.js';
import { fileSystemNow } from './file-texts.js';
import type { RemoteState, SyncContext } from './sync-types.js';
import type { RefClaims } from './claim-refs.js';

/** The record of the last sync that left the board and the remote equal, per remote branch. */
export const QUIET_FILE = 'sync-quiet.json';

interface QuietRecord {
  /** The commit of the branch that sync left (this clone's synced ref). */
  head: string;
  /** The digest of the look before its merge. */
  look: string;
  /** The claim refs it fetched (claim-refs.ts), each task's ref and commit: another machine's claim moves them, not the branch. */
  refs?: string;
}

/** The claim refs of a fetch, in a few characters. */
export function refsKey(refs: RefClaims | undefined): string {
  if (!refs?.size) return '';
  return [...refs.values()]
    .map((r) => `${r.id}:${r.commit}`)
    .sort()
    .join(',');
}

/**
 * The digest of the board's files as they are (undefined: a file changed too
 * recently to be told apart from a change in the same clock tick).
 */
export function lookAtBoard(store: TaskStore): string | undefined {
  const now = fileSystemNow(store.runtimeDir);
  const hash = createHash('sha1');
  let racy = false;
  const add = (name: string, stat: Stats | undefined) => {
    if (!stat) return;
    if (stat.ctimeMs >= now) racy = true;
    hash.update(`${name}\0${stat.ino}\0${stat.size}\0${stat.mtimeMs}\0${stat.ctimeMs}\n`);
  };
  // A large history is looked at as the everyday commands look at it (open-view.ts): the open files, and the
  // index's word for the closed ones, which a git operation, the watcher or the sweep corrects.
  const openKey = historyFolded(store) ? openViewKey(store.dir) : undefined;
  if (openKey !== undefined) {
    hash.update(`index\0${openKey}\n`);
    add(HIGHWATERMARK_FILE, statSync(join(store.dir, HIGHWATERMARK_FILE), { throwIfNoEntry: false }));
  } else {
    // Sorted, so the digest does not depend on the order the folder lists them in.
    const names = readdirSync(store.dir)
      .filter((n) => n === HIGHWATERMARK_FILE || idFromFileName(n) !== undefined)
      .sort();
    for (const name of names) add(name, statSync(join(store.dir, name), { throwIfNoEntry: false }));
  }
  hash.update('leases\n');
  const leases = join(store.runtimeDir, LEASES_DIR);
  let records: string[] = [];
  try {
    records = readdirSync(leases).sort();
  } catch {
    // no claim records
  }
  for (const name of records) add(name, statSync(join(leases, name), { throwIfNoEntry: false }));
  return racy ? undefined : hash.digest('hex');
}

/** Whether the board may hold more closed tasks than the views list (its high-water mark says it had that many). */
function historyFolded(store: TaskStore): boolean {
  const mark = readHighWaterMarkQuiet(store.dir);
  return mark !== null && mark > FOLD_HISTORY_AT;
}

function readRecords(runtimeDir: string): Record<string, QuietRecord> {
  try {
    const all = JSON.parse(readFileIfExists(join(runtimeDir, QUIET_FILE)) ?? '{}') as Record<string, QuietRecord>;
    return typeof all === 'object' && all !== null && !Array.isArray(all) ? all : {};
  } catch {
    return {}; // an unreadable record is no record: the next sync merges
  }
}

function writeRecord(runtimeDir: string, where: string, record: QuietRecord | undefined): void {
  const all = readRecords(runtimeDir);
  if (record === undefined && !(where in all)) return;
  if (record) all[where] = record;
  else delete all[where];
  atomicWriteFile(join(runtimeDir, QUIET_FILE), JSON.stringify(all, null, 2) + '\n', { fsync: false });
}

/**
 * Whether this round has nothing to do: a plain sync, the remote's head is
 * what this clone last synced and left equal to its board, and the board's
 * files look as they did then. `look`: the look it made, for the round to
 * record if it merges.
 */
export function nothingToDo(ctx: SyncContext, state: RemoteState): { quiet: boolean; look?: string } {
  const { options } = ctx;
  if (options.republish || options.acceptRewrite || options.home) return { quiet: false };
  const { head, synced } = state;
  if (state.fetch.outcome !== 'fetched' || !head || head.id !== synced?.id || state.pushing) return { quiet: false };
  const record = readRecords(ctx.store.runtimeDir)[ctx.where];
  if (!record || record.head !== head.id || (record.refs ?? '') !== refsKey(state.refClaims)) return { quiet: false };
  const look = lookAtBoard(ctx.store);
  return { quiet: look !== undefined && look === record.look, look };
}

/**
 * Whether a look that sends nothing out (a claim's look before it claims,
 * `keepOut`) has nothing to merge: the branch's head is the commit this
 * clone last merged, so nothing came in, and no claim of this clone meets
 * another clone's claim ref (which the merge would withdraw). What this
 * board changed meanwhile stays for a sync that pushes; other machines'
 * claims are timed from the next merge that sees them, later than they were
 * first seen, so never reaped early; and a look reaps nothing anyway.
 */
export function nothingCameIn(ctx: SyncContext, state: RemoteState): boolean {
  const { options } = ctx;
  if (!options.keepOut || options.republish || options.acceptRewrite || options.home) return false;
  const { head, synced } = state;
  if (state.fetch.outcome !== 'fetched' || !head || head.id !== synced?.id || state.pushing) return false;
  const refs = state.refClaims;
  if (!refs?.size) return true;
  return !listLeases(ctx.store.runtimeDir).some((lease) => {
    const ref = refs.get(lease.task);
    return ref !== undefined && !ref.mine && !lease.review && !lease.adopted;
  });
}

/** Whether a merge left something for the next sync even when nothing changes: see the module comment. */
export function leavesNothing(merged: MergePlan): boolean {
  return (
    merged.seen.size === 0 &&
    merged.skipped.length === 0 &&
    merged.incoming.length === 0 &&
    merged.renumbered.length === 0 &&
    merged.withdrawn.length === 0 &&
    merged.reaped.length === 0 &&
    merged.claimRefs.length === 0
  );
}

/**
 * After a sync: records its look before the merge when the board still looks
 * the same, the merge left nothing and what it had to send went out
 * (nothingToDo then ends the next sync early), and forgets any earlier
 * record otherwise.
 */
export function recordSync(
  store: TaskStore,
  where: string,
  head: string | undefined,
  before: string | undefined,
  merged: MergePlan,
  { refs, keptOut }: { refs: string; keptOut: boolean },
): void {
  // A round that sent nothing out (a claim's look) with changes of this board to send leaves them for the next sync.
  const sent = !keptOut || merged.outgoing.length === 0;
  const same = head !== undefined && before !== undefined && sent && leavesNothing(merged) && lookAtBoard(store) === before;
  writeRecord(store.runtimeDir, where, same ? { head: head!, look: before!, ...(refs ? { refs } : {}) } : undefined);
}
