/**
 * The clone stays packed (docs/decisions.md, "The board branch grows with
 * the change"): every sync leaves a few loose objects (what it pushed, what
 * its fetch brought: git unpacks a fetch of fewer than 100 objects), and
 * git's own `gc --auto` packs them only past 6,700, which a busy board
 * reaches in a day, and then all at once. So after a sync that did something
 * the loose objects are counted (a listing of the object folder, no git), and
 * past LOOSE_LIMIT they are packed with `git repack --geometric=2`: the loose
 * objects and the small packs rolled into one, packs kept in a progression
 * of sizes, so the repository's big packs (the code's) are not rewritten and
 * git's own limit of 50 packs is never reached.
 *
 * It runs under the sync lock and outside any board lock, and never fails a
 * sync: a repack that fails is not tried again by this process.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { objectsDir } from './object-store.js';
import type { GitRunner } from './board-branch.js';

/** Loose objects a clone may gather before a sync packs them. */
export const LOOSE_LIMIT = 100;

/** The repositories whose repack failed in this process. */
const failed = new Set<string>();

/** The loose objects of a repository's object folder, counted (objects/xx/ holds those whose id starts with xx). */
export function countLoose(dir: string): number {
  let count = 0;
  for (let i = 0; i < 256; i++) {
    let names: string[];
    try {
      names = readdirSync(join(dir, i.toString(16).padStart(2, '0')));
    } catch {
      continue; // no object starts with it yet
    }
    for (const name of names) if (name.length === 38 && /^[0-9a-f]+$/.test(name)) count++;
  }
  return count;
}

/** Packs the loose objects of the repository of `cwd` once there are LOOSE_LIMIT of them (see the module comment). */
export async function keepPacked(cwd: string, run: GitRunner): Promise<void> {
  const dir = objectsDir(cwd);
  if (failed.has(dir) || countLoose(dir) < LOOSE_LIMIT) return;
  const r = await run(['repack', '-d', '-l', '-q', '--geometric=2', '--no-write-bitmap-index']).catch(() => undefined);
  if (r?.status !== 0) failed.add(dir);
}
