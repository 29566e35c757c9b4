/**
 * What a file scope may hold (docs/protocol.md, "File scopes"): globs a
 * claim can match against every tracked file in well under a second, all
 * inside the repository. A scope comes from a task file, which anyone can
 * write (a hand edit, an import, a merge), so every claim that meets one
 * asks `scopeProblem` first and holds a task with a bad scope back alone;
 * create and update refuse such a glob with the reason.
 *
 * Brace sets are counted here without expanding them (micromatch expands a
 * `{1..100000}` or twenty `{a,b,c}` into memory before it looks), and a
 * segment's wildcards are bounded because each one more multiplies the work
 * of the regular expression a glob becomes, on a file name that does not
 * match: four `*` in one segment take seconds on a long name.
 */
import { TasksError } from '../errors.js';
import type { Task } from '../format/format.js';

/** At most this many globs in one task's `paths`. */
export const MAX_SCOPE_GLOBS = 100;
/** At most this many characters in one glob. */
export const MAX_GLOB_CHARS = 500;
/** A scope's brace sets expand to at most this many globs in all. */
export const MAX_SCOPE_EXPANSION = 256;
/** At most this many wildcards (`*`, `!(…)`, `+(…)`) in one path segment; `**` as a whole segment is not counted. */
export const MAX_SEGMENT_WILDCARDS = 3;

// C0 controls, DEL, C1 controls: never part of a file name a person means.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const RANGE = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/;

/** The matching `}` of the `{` at `open`, or -1 when it has none (then it is a literal brace). */
function closingBrace(glob: string, open: number): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}

/** The top-level alternatives of a brace set's inside (`a,{b,c},d` → three). */
function alternatives(inside: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inside.length; i++) {
    const c = inside[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) {
      out.push(inside.slice(start, i));
      start = i + 1;
    }
  }
  out.push(inside.slice(start));
  return out;
}

function rangeSize(from: string, to: string, step: string | undefined): number {
  const numeric = /\d/.test(from) && /\d/.test(to);
  const a = numeric ? Number(from) : from.charCodeAt(0);
  const b = numeric ? Number(to) : to.charCodeAt(0);
  const by = Math.abs(Number(step ?? 1)) || 1;
  return Math.floor(Math.abs(b - a) / by) + 1;
}

/**
 * How many globs `glob`'s brace sets expand to, counted, never expanded (an
 * upper bound where micromatch would take a set literally); Infinity past
 * any limit that matters.
 */
export function braceCount(glob: string): number {
  let count = 1;
  for (const set of braceSets(glob)) {
    if (count > MAX_SCOPE_EXPANSION) break;
    const { inside, range, alts } = set;
    const here = range ? rangeSize(range[1], range[2], range[3]) : alts.length > 1 ? alts.reduce((sum, alt) => sum + braceCount(alt), 0) : braceCount(inside);
    count *= here;
  }
  return count > MAX_SCOPE_EXPANSION ? Infinity : count;
}

/** A brace set of a glob: where it opens and closes, what it holds, and that read as a range or as alternatives. */
interface BraceSet {
  start: number;
  close: number;
  inside: string;
  range: RegExpExecArray | null;
  alts: string[];
}

/** The top-level brace sets of `glob`, left to right; an escaped `{` and one never closed are text. */
function* braceSets(glob: string): Generator<BraceSet> {
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c !== '{') continue;
    const close = closingBrace(glob, i);
    if (close < 0) continue;
    const inside = glob.slice(i + 1, close);
    yield { start: i, close, inside, range: RANGE.exec(inside), alts: alternatives(inside) };
    i = close;
  }
}

/**
 * The brace sets expanded, each range standing for one of its values (only
 * the shape matters to the checks below: a range yields digits or letters,
 * never a `/`, a `.` or a wildcard). Only called once braceCount is bounded.
 */
function expandShapes(glob: string): string[] {
  for (const { start, close, inside, range, alts } of braceSets(glob)) {
    // A range stands for one value; a set of one is literal to micromatch, braces and all, but may hold sets itself.
    const middles = range ? [range[1]] : alts.length > 1 ? alts.flatMap(expandShapes) : expandShapes(inside).map((s) => `{${s}}`);
    const head = glob.slice(0, start);
    const out: string[] = [];
    for (const tail of expandShapes(glob.slice(close + 1))) for (const middle of middles) out.push(head + middle + tail);
    return out;
  }
  return [glob];
}

/** Wildcards in one path segment that multiply a match's work: each run of `*` and each `!(`/`+(` extglob. */
function segmentWildcards(segment: string): number {
  if (segment === '**') return 0;
  return (segment.match(/\*+|[!+]\(/g) ?? []).length;
}

/** What is wrong with one expanded glob, or undefined. */
function shapeProblem(glob: string): string | undefined {
  // An escaped character is the character itself to a matcher: `\\.\\./x` climbs as `../x` does.
  const plain = glob.replace(/\\(.)/g, '$1');
  if (plain.startsWith('/') || glob.startsWith('\\\\') || /^[A-Za-z]:([/\\]|$)/.test(glob))
    return 'is absolute; paths are relative to the top of the repository';
  if (plain.startsWith('~')) return 'starts with ~; paths are relative to the top of the repository';
  if (plain.split('/').includes('..')) return 'climbs out with ..; paths are relative to the top of the repository';
  const segments = glob.split('/');
  for (let i = 1; i < segments.length; i++)
    if (segments[i] === '**' && segments[i - 1] === '**') return 'repeats **; `**/**` matches what `**` does, write it once';
  const busy = segments.find((s) => segmentWildcards(s) > MAX_SEGMENT_WILDCARDS);
  if (busy !== undefined) return `has more than ${MAX_SEGMENT_WILDCARDS} wildcards in the segment ${JSON.stringify(busy)}`;
  return undefined;
}

/**
 * What is wrong with one glob as written (a leading `!` excludes and is
 * checked the same way), or undefined; `budget` is the expansion still
 * allowed to the scope it belongs to.
 */
export function globProblem(written: string, budget = MAX_SCOPE_EXPANSION): string | undefined {
  const glob = written.trim().startsWith('!') ? written.trim().slice(1) : written.trim();
  if (glob.length > MAX_GLOB_CHARS) return `is ${glob.length} characters long; a glob has at most ${MAX_GLOB_CHARS}`;
  if (CONTROL.test(glob)) return 'holds a control character';
  const count = braceCount(glob);
  if (count > budget)
    return count === Infinity || budget === MAX_SCOPE_EXPANSION
      ? `expands to more than ${MAX_SCOPE_EXPANSION} globs; a scope expands to at most ${MAX_SCOPE_EXPANSION}`
      : `takes the scope past ${MAX_SCOPE_EXPANSION} globs once its braces are expanded`;
  for (const shape of expandShapes(glob)) {
    const problem = shapeProblem(shape);
    if (problem) return problem;
  }
  return undefined;
}

/** The first glob of a scope that breaks a limit, with the reason; undefined for a good scope. */
export function scopeProblem(paths: readonly string[]): { glob: string; reason: string } | undefined {
  if (paths.length > MAX_SCOPE_GLOBS)
    return { glob: paths[MAX_SCOPE_GLOBS], reason: `is glob ${MAX_SCOPE_GLOBS + 1}; a scope holds at most ${MAX_SCOPE_GLOBS}` };
  let budget = MAX_SCOPE_EXPANSION;
  for (const glob of paths) {
    if (typeof glob !== 'string') return { glob: String(glob), reason: 'is not a string' };
    const reason = globProblem(glob, budget);
    if (reason) return { glob, reason };
    budget -= braceCount(glob.trim().replace(/^!/, ''));
  }
  return undefined;
}

/**
 * The error for a task whose scope is past these limits, or undefined: such a task cannot be claimed by a claim that checks scopes
 * (it is held back alone; doctor's `bad_scope` names it).
 */
export function badScopeError(task: Task): TasksError | undefined {
  const problem = task.paths?.length ? scopeProblem(task.paths) : undefined;
  if (!problem) return undefined;
  return new TasksError(
    'E_INVALID',
    `task #${task.id} has a file scope no claim can use: the path glob ${JSON.stringify(shortGlob(problem.glob))} ${problem.reason}; mend it with ${removePathCommand(task.id, problem.glob)}`,
    { task: task.id, glob: problem.glob, reason: problem.reason, badScope: true },
  );
}

/** A glob as a message quotes it: at most 80 characters. */
export function shortGlob(glob: string): string {
  return glob.length > 80 ? `${glob.slice(0, 77)}...` : glob;
}

/** The command that takes `glob` out of task `id`'s scope, the glob quoted for a shell when it can be shown whole. */
export function removePathCommand(id: number, glob: string): string {
  const quotable = glob.length <= 80 && /^[\x20-\x7e]*$/.test(glob) && !/["$`\\!]/.test(glob);
  return `'tasks update ${id} --remove-path ${quotable ? `"${glob}"` : 'GLOB'}'`;
}
