// Merged means done, the cheap half (docs/protocol.md, "The way back to
// main"): whether the merge target moved since merged-means-done last
// looked. A look costs a few file reads (the target's ref, a small record
// in the runtime folder), so `tasks list` can ask it every time and start
// git only when the target moved; merged-work.ts does the rest.
import type { BoardConfig } from '../board-config.js';
import { RUNTIME_DIR } from '../engine/store-types.js';
import { repositoryDirs, targetTipIn } from './refs.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { readFileSync } = process.getBuiltinModule('node:fs');
const { dirname, join } = process.getBuiltinModule('node:path');

/** The runtime record of the target as merged-means-done last settled it. */
export const MERGED_LOOK_FILE = 'merged-target.json';

/** The merge target at one moment. */
export interface TargetState {
  target: string;
  sha: string;
}

/** What merged-means-done last settled, if anything. */
export function readMergedLook(boardDir: string): TargetState | undefined {
  try {
    const record = JSON.parse(readFileSync(join(boardDir, RUNTIME_DIR, MERGED_LOOK_FILE), 'utf8')) as Partial<TargetState>;
    return typeof record.target === 'string' && typeof record.sha === 'string' ? { target: record.target, sha: record.sha } : undefined;
  } catch {
    return undefined; // none yet, or half written by a process killed meanwhile: look again
  }
}

/** The target as it is now; undefined outside git, on a detached HEAD without "mergeTarget", or before the first commit. */
export function currentTarget(boardDir: string, config: BoardConfig): TargetState | undefined {
  const repo = repositoryDirs(dirname(boardDir));
  return repo ? targetTipIn(repo, config) : undefined;
}

/**
 * The target, when merged-means-done is on and the target moved since it
 * was last settled (or never was); undefined when there is nothing to look at.
 */
export function mergedLookDue(boardDir: string, config: BoardConfig): TargetState | undefined {
  if (!config.mergedMeansDone) return undefined;
  const now = currentTarget(boardDir, config);
  if (!now) return undefined;
  const last = readMergedLook(boardDir);
  return last && last.target === now.target && last.sha === now.sha ? undefined : now;
}
