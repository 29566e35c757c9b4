/**
 * The ready ids a listing's summary names (`ready: #3, #5, …`), kept in
 * `.tasks/.runtime/list-summary.json` under the key of the board index they
 * were ranked from (BoardSnapshot.indexKey), so a listing of a board nobody
 * changed does not rank every ready task again (docs/decisions.md, "The
 * summary's ready ids are kept"). A cache: missing, torn, foreign or stale
 * means ranking, and a listing that cannot write it says nothing.
 */
import { RUNTIME } from '../engine/index-file.js';

// Builtins through getBuiltinModule: this is on the read path (read.ts).
const { readFileSync, renameSync, writeFileSync, unlinkSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

/** The file, in the board's runtime folder. */
export const LIST_SUMMARY_FILE = 'list-summary.json';
// Bumped when the ready order or the summary's choice changes: ids kept by an older dotasks are not used.
const VERSION = 1;

/** What the summary may use and what it found: `known` when this board's ids were kept, else `found` keeps what it ranks. */
export interface ReadySummaryCache {
  known?: readonly number[];
  found(ids: readonly number[]): void;
}

/** The cache for a board read whole through its index; undefined when the snapshot has no key (a file read every time). */
export function listSummaryCache(dir: string, indexKey: string | undefined): ReadySummaryCache | undefined {
  if (indexKey === undefined) return undefined;
  const file = join(dir, RUNTIME, LIST_SUMMARY_FILE);
  const known = readKept(file, indexKey);
  return {
    ...(known ? { known } : {}),
    found: (ids) => {
      if (known) return;
      const temp = `${file}.${process.pid}.tmp`;
      try {
        writeFileSync(temp, `${JSON.stringify({ version: VERSION, key: indexKey, ready: ids })}\n`);
        renameSync(temp, file);
      } catch {
        try {
          unlinkSync(temp);
        } catch {
          // never written
        }
      }
    },
  };
}

function readKept(file: string, key: string): number[] | undefined {
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown; key?: unknown; ready?: unknown };
    if (kept.version !== VERSION || kept.key !== key || !Array.isArray(kept.ready)) return undefined;
    return kept.ready.every((id) => Number.isSafeInteger(id) && id > 0) ? (kept.ready as number[]) : undefined;
  } catch {
    return undefined;
  }
}
