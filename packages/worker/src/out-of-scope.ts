import { execFile } from 'node:child_process';
import { relative, isAbsolute } from 'node:path';
import { promisify } from 'node:util';
import { inScope } from '@dotasks/core/internal';

const execFileAsync = promisify(execFile);

/** At most this many paths are recorded in `metadata.outOfScope`; a longer list ends with a count of the rest. */
export const MAX_OUT_OF_SCOPE = 100;

/** What a checkout looked like when a task's command started. */
export interface ScopeBaseline {
  top: string;
  head: string;
  /** Files already changed or untracked before the command ran: not the command's doing. */
  dirty: Set<string>;
}

async function git(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28 });
  return stdout;
}

/** Changed and untracked files of the checkout at `top`, relative to its top. */
async function changedSince(top: string, head: string): Promise<Set<string>> {
  const [diff, others] = await Promise.all([
    git(top, ['diff', '--name-only', '-z', '--no-renames', head]),
    git(top, ['ls-files', '--others', '--exclude-standard', '--full-name', '-z']),
  ]);
  return new Set([...diff.split('\0'), ...others.split('\0')].filter((f) => f !== ''));
}

/**
 * Notes where the checkout `cwd` stands before a task's command runs (its
 * top, HEAD and what is already changed); undefined outside git, where
 * nothing is recorded.
 */
export async function scopeBaseline(cwd: string): Promise<ScopeBaseline | undefined> {
  try {
    const [top, head] = (await git(cwd, ['rev-parse', '--show-toplevel', 'HEAD'])).trim().split('\n');
    return { top, head, dirty: await changedSince(top, head) };
  } catch {
    return undefined; // not a git checkout, or no commit yet
  }
}

/**
 * The files the command changed (committed since the start, changed in the
 * work tree, or new and not ignored) that lie outside `paths`, sorted; the
 * board's own folder never counts. Undefined when git cannot tell.
 */
export async function filesOutOfScope(baseline: ScopeBaseline, paths: readonly string[], boardDir: string): Promise<string[] | undefined> {
  let changed: Set<string>;
  try {
    changed = await changedSince(baseline.top, baseline.head);
  } catch {
    return undefined;
  }
  const board = relative(baseline.top, boardDir).split('\\').join('/');
  const boardInside = board !== '' && !board.startsWith('..') && !isAbsolute(board);
  return [...changed].filter((f) => !baseline.dirty.has(f) && !(boardInside && (f === board || f.startsWith(board + '/'))) && !inScope(f, paths)).sort();
}
