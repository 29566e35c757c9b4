/**
 * File scopes (docs/protocol.md, "File scopes"): whether two tasks' `paths`
 * may touch the same files. Two scopes overlap when
 *
 * - a file git tracks matches both (each glob expanded against `git
 *   ls-files`, tracked-files.ts), or
 * - their globs overlap by themselves, for files that do not exist yet: the
 *   same glob; a literal path one glob matches (`src/**` and `src/new.ts`);
 *   or one glob takes everything under its literal prefix (`src/a/**`, or a
 *   literal directory `src/a`) and the other's prefix lies inside it
 *   (`src/a/new/*.ts`).
 *
 * A task without paths overlaps nothing. Globs are fast-glob's (micromatch,
 * dotfiles included), relative to the top of the repository; a literal path
 * also covers everything below it, as a git pathspec does. A glob starting
 * with `!` takes files out of its task's tracked expansion and plays no part
 * in the prefix rule. Loaded only when a claim meets a task with paths.
 */
import { createRequire } from 'node:module';
import type FastGlob from 'fast-glob';
import type Micromatch from 'micromatch';
import type { Task } from '../format/format.js';
import { trackedFiles } from '../git/tracked-files.js';
import { badScopeError, scopeProblem } from './glob-limits.js';

const MATCH = { dot: true } as const;

// Loaded on first use: the sibling packages import this module with the rest of the core, and most never meet a scope.
const require = createRequire(import.meta.url);
let mmModule: typeof Micromatch | undefined;
let fgModule: typeof FastGlob | undefined;
const mm = (): typeof Micromatch => (mmModule ??= require('micromatch') as typeof Micromatch);
const fg = (): typeof FastGlob => (fgModule ??= require('fast-glob') as typeof FastGlob);

/** One positive glob after brace expansion. */
interface ScopeGlob {
  glob: string;
  /** The literal directory part (`src/a` of `src/a/*.ts`); the whole path for a literal one; '' for the top. */
  base: string;
  literal: boolean;
  /** Takes every file under `base`: a literal path, `base/**` or `base/**\/*`. */
  catchAll: boolean;
}

interface ParsedScope {
  globs: ScopeGlob[];
  positives: string[];
  negatives: string[];
}

/** A glob as written, made comparable: no leading `./`, no doubled or trailing `/`. */
export function normalizeGlob(glob: string): string {
  let g = glob.trim();
  while (g.startsWith('./')) g = g.slice(2);
  g = g.replace(/\/{2,}/g, '/');
  while (g.length > 1 && g.endsWith('/')) g = g.slice(0, -1);
  return g === '.' ? '**' : g;
}

function parseScope(paths: readonly string[]): ParsedScope {
  const scope: ParsedScope = { globs: [], positives: [], negatives: [] };
  // A scope past the limits (a hand edit, an old file) is never expanded: it takes nothing, and its task is held back (badScopeError).
  if (scopeProblem(paths)) return scope;
  for (const written of paths) {
    const negative = written.trim().startsWith('!');
    const glob = normalizeGlob(negative ? written.trim().slice(1) : written);
    if (glob === '') continue;
    (negative ? scope.negatives : scope.positives).push(glob);
    if (negative) continue;
    for (const one of mm().braces(glob, { expand: true })) {
      if (!fg().isDynamicPattern(one)) {
        scope.globs.push({ glob: one, base: one, literal: true, catchAll: true });
        continue;
      }
      const { base, glob: rest } = mm().scan(one);
      scope.globs.push({ glob: one, base: normalizeGlob(base) === '**' ? '' : base, literal: false, catchAll: rest === '**' || rest === '**/*' });
    }
  }
  return scope;
}

/** `inner` is `outer` or a path below it ('' is the top, above everything). */
function within(inner: string, outer: string): boolean {
  return outer === '' || inner === outer || inner.startsWith(outer + '/');
}

/** Whether two globs overlap by themselves, whatever files exist. */
function globsOverlap(a: ScopeGlob, b: ScopeGlob): boolean {
  if (a.glob === b.glob) return true;
  if (a.catchAll && within(b.base, a.base)) return true;
  if (b.catchAll && within(a.base, b.base)) return true;
  if (b.literal && mm().isMatch(b.glob, a.glob, MATCH)) return true;
  if (a.literal && mm().isMatch(a.glob, b.glob, MATCH)) return true;
  return false;
}

/** The tracked files a scope takes (literal paths also take what lies below them). */
export function expandScope(paths: readonly string[], files: readonly string[]): string[] {
  const scope = parseScope(paths);
  if (scope.positives.length === 0) return [];
  const literals = scope.globs.filter((g) => g.literal).map((g) => g.glob);
  const dynamic = scope.globs.filter((g) => !g.literal).map((g) => g.glob);
  const matches = dynamic.length ? mm().matcher(dynamic.length === 1 ? dynamic[0] : `{${dynamic.join(',')}}`, MATCH) : () => false;
  const excluded = scope.negatives.length
    ? mm().matcher(scope.negatives.length === 1 ? scope.negatives[0] : `{${scope.negatives.join(',')}}`, MATCH)
    : () => false;
  return files.filter((f) => (matches(f) || literals.some((l) => within(f, l))) && !excluded(f));
}

/**
 * Whether two scopes overlap: by their globs alone, or through a tracked
 * file in both. An empty scope overlaps nothing. `files` is the tracked
 * list (none: globs alone decide).
 */
export function scopesOverlap(a: readonly string[], b: readonly string[], files: readonly string[] = []): boolean {
  return new ScopeMatcher(files).overlap(a, b);
}

/** Overlap checks against one tracked list, each scope expanded once. */
export class ScopeMatcher {
  private readonly parsed = new Map<string, ParsedScope>();
  private readonly expanded = new Map<string, Set<string>>();

  constructor(private readonly files: readonly string[]) {}

  /** See scopesOverlap. */
  overlap(a: readonly string[], b: readonly string[]): boolean {
    const pa = this.parse(a);
    const pb = this.parse(b);
    if (pa.globs.length === 0 || pb.globs.length === 0) return false;
    for (const ga of pa.globs) for (const gb of pb.globs) if (globsOverlap(ga, gb)) return true;
    const ea = this.expand(a);
    const eb = this.expand(b);
    const [small, large] = ea.size <= eb.size ? [ea, eb] : [eb, ea];
    for (const file of small) if (large.has(file)) return true;
    return false;
  }

  private parse(paths: readonly string[]): ParsedScope {
    const key = paths.join('\0');
    let scope = this.parsed.get(key);
    if (!scope) this.parsed.set(key, (scope = parseScope(paths)));
    return scope;
  }

  private expand(paths: readonly string[]): Set<string> {
    const key = paths.join('\0');
    let files = this.expanded.get(key);
    if (!files) this.expanded.set(key, (files = new Set(expandScope(paths, this.files))));
    return files;
  }
}

/**
 * The tasks of `others` whose scope overlaps `task`'s, expanded against the
 * tracked files of the board's repository (not listed at all when either
 * side has no paths).
 */
export async function overlappingTasks(boardDir: string, task: Task, others: readonly Task[]): Promise<Task[]> {
  if (!task.paths?.length) return [];
  const bad = badScopeError(task);
  if (bad) throw bad;
  const candidates = others.filter((o) => o.id !== task.id && o.paths?.length && !scopeProblem(o.paths));
  if (candidates.length === 0) return [];
  const tracked = await trackedFiles(boardDir);
  const matcher = new ScopeMatcher(tracked?.files ?? []);
  return candidates.filter((o) => matcher.overlap(task.paths!, o.paths!));
}

/** Whether `file` (relative to the top of the repository) lies in the scope `paths`. */
export function inScope(file: string, paths: readonly string[]): boolean {
  return expandScope(paths, [file]).length > 0;
}
