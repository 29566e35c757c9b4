/**
 * Usage errors in our words, one line each: what is wrong with the words
 * typed, the nearest command or flag for a typo, and where the rest is
 * (`--help`). yargs finds that something is wrong (cli.ts); this module says
 * what, from the command table, so the line is the same whatever yargs'
 * wording or locale.
 */
import { COMMAND_LIST, findCommand, optionsOf, type CommandSpec, type OptionSpec, type PositionalSpec } from './command-table.js';

/** Flags yargs adds to every command. */
const BUILT_IN_FLAGS: Record<string, OptionSpec> = { help: { type: 'boolean', alias: 'h' }, version: { type: 'boolean' } };

/** The edit distance of two words (insertions, deletions, substitutions; a swap of neighbours counts one). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.length][b.length];
}

/**
 * The candidate nearest to `word`, if it is near enough to be what was meant
 * (a third of its letters, at least 1, at most 3); one that begins with it,
 * or ends with it after a hyphen, is nearer than any typo.
 */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    // A word the candidate starts with, or ends with as its last hyphenated words (`--blocked-by` for update's `--add-blocked-by`).
    const part = word.length >= 3 && (candidate.startsWith(word) || candidate.endsWith(`-${word}`));
    const distance = part ? 0.5 : editDistance(word, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  const allowed = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}

/** `a`, `a or b`, `a, b or c`. */
function oneOf(words: readonly string[], conjunction = 'or'): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} ${conjunction} ${words.at(-1)}`;
}

/** `create <subject>`, `claim [id]`, `run <id> [command..]`. */
export function usageOf(spec: CommandSpec): string {
  const words = (spec.positionals ?? []).map((p) => (p.variadic ? `[${p.name}..]` : p.optional ? `[${p.name}]` : `<${p.name}>`));
  return [spec.name, ...words].join(' ');
}

const COMMANDS_HINT = '(tasks --help lists the commands)';
const moreOn = (spec: CommandSpec): string => `(tasks ${spec.name} --help for more)`;

/** An option's spec by the name typed (`--dry-run`, `--dryRun`, `--no-fix`, `-a`), if the command takes it. */
function optionNamed(spec: CommandSpec, typed: string, short: boolean): [string, OptionSpec] | undefined {
  const options = { ...optionsOf(spec), ...BUILT_IN_FLAGS };
  if (short) return Object.entries(options).find(([, o]) => o.alias === typed);
  const kebab = typed.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  if (options[kebab]) return [kebab, options[kebab]];
  const negated = kebab.startsWith('no-') ? options[kebab.slice(3)] : undefined;
  return negated?.type === 'boolean' ? [kebab.slice(3), negated] : undefined;
}

interface Words {
  positionals: string[];
  unknown: string[];
  /** Options given with the values typed (the last one kept). */
  values: Map<string, string | true>;
  /** The first string or number option typed with no value: last, or followed by `--` or another flag. */
  missingValue?: string;
}

/** A word yargs reads as a flag (or the end of the flags), never as the value of the flag before it: `--all`, `-a`, `--`; not `-` nor `-1`. */
function isFlagWord(word: string): boolean {
  return word.startsWith('-') && word !== '-' && !/^-\d/.test(word);
}

/** Splits the words after the command into positionals and options, as the command table declares them. */
function splitWords(spec: CommandSpec, words: readonly string[]): Words {
  const result: Words = { positionals: [], unknown: [], values: new Map() };
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (word === '--') {
      result.positionals.push(...words.slice(i + 1));
      break;
    }
    if (!word.startsWith('-') || word === '-' || /^-\d/.test(word)) {
      result.positionals.push(word);
      continue;
    }
    const short = !word.startsWith('--');
    const [name, inline] = short ? [word.slice(1, 2), word.length > 2 ? word.slice(2) : undefined] : word.slice(2).split(/=(.*)/s, 2);
    const found = optionNamed(spec, name, short);
    if (!found) {
      result.unknown.push(short ? `-${name}` : `--${name}`);
      continue;
    }
    const [key, option] = found;
    if (option.type === 'boolean') {
      result.values.set(key, true);
      if (/^(true|false)$/.test(words[i + 1] ?? '')) i++;
    } else if (inline !== undefined) result.values.set(key, inline);
    else if (i + 1 < words.length && !isFlagWord(words[i + 1])) result.values.set(key, words[++i]);
    else result.missingValue ??= key;
  }
  return result;
}

/** What is missing, in the command's words: `<subject> (one-line title)`, `<action> (add or rm), <id> and <dep>`. */
function describeMissing(missing: readonly PositionalSpec[]): string {
  const named = missing.map((p) => {
    const about = p.choices ? oneOf(p.choices) : p.describe;
    return about ? `<${p.name}> (${about})` : `<${p.name}>`;
  });
  return oneOf(named, 'and');
}

/** The problem with a known command's words, or undefined when this module sees none. */
function commandProblem(spec: CommandSpec, words: readonly string[]): string | undefined {
  const split = splitWords(spec, words);
  if (split.unknown.length > 0) {
    const typed = split.unknown[0];
    const names = Object.keys({ ...optionsOf(spec), ...BUILT_IN_FLAGS });
    const guess = typed.startsWith('--') ? nearest(typed.slice(2), names) : undefined;
    return `unknown flag ${typed} for 'tasks ${spec.name}'${guess ? `; did you mean --${guess}?` : ''} (tasks ${spec.name} --help lists its flags)`;
  }
  if (split.missingValue) return missingValueMessage(spec, split.missingValue);
  for (const [key, value] of split.values) {
    const option = optionsOf(spec)[key];
    if (!option?.choices || value === true) continue;
    for (const v of option.array ? value.split(',') : [value])
      if (!option.choices.includes(v)) return `--${key} of 'tasks ${spec.name}' takes ${oneOf(option.choices)}, got '${v}' ${moreOn(spec)}`;
  }
  const declared = spec.positionals ?? [];
  const variadic = declared.at(-1)?.variadic === true;
  const fixed = variadic ? declared.slice(0, -1) : declared;
  for (const [i, p] of fixed.entries()) {
    const value = split.positionals[i];
    if (value !== undefined && p.choices && !p.choices.includes(value))
      return `<${p.name}> of 'tasks ${spec.name}' is ${oneOf(p.choices)}, got '${value}': tasks ${usageOf(spec)} ${moreOn(spec)}`;
  }
  const missing = fixed.filter((p, i) => !p.optional && split.positionals[i] === undefined);
  if (missing.length > 0) return `'tasks ${spec.name}' needs ${describeMissing(missing)}: tasks ${usageOf(spec)} ${moreOn(spec)}`;
  if (!variadic && split.positionals.length > fixed.length) return `unexpected '${split.positionals[fixed.length]}': tasks ${usageOf(spec)} ${moreOn(spec)}`;
  return undefined;
}

function missingValueMessage(spec: CommandSpec, key: string): string {
  return `--${key} needs a value: tasks ${spec.name} --${key} VALUE ${moreOn(spec)}`;
}

/** The first word that is not a global option: the command, if one was typed. */
function commandWord(argv: readonly string[]): { index: number; word: string } | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    if (word === '--dir' || word === '--owner') i++;
    else if (!word.startsWith('-')) return { index: i, word };
  }
  return undefined;
}

/**
 * The usage error in argv as one line (without the `tasks: ` prefix), or
 * undefined when this module sees nothing wrong (then yargs' own message
 * stands, with a pointer to --help).
 */
export function describeUsageError(argv: readonly string[]): string | undefined {
  const found = commandWord(argv);
  if (!found) {
    const flag = argv.find((w) => w.startsWith('-') && !/^--(dir|owner|json|help|version)(=|$)|^-h$/.test(w));
    return flag ? `unknown flag ${flag.split('=')[0]} ${COMMANDS_HINT}` : `name a command, e.g. 'tasks list' ${COMMANDS_HINT}`;
  }
  const spec = findCommand(found.word);
  if (!spec) {
    const guess = nearest(
      found.word,
      COMMAND_LIST.flatMap((c) => [c.name, ...(c.aliases ?? [])]),
    );
    return `unknown command '${found.word}'${guess ? `; did you mean '${guess}'?` : ''} ${COMMANDS_HINT}`;
  }
  return commandProblem(spec, [...argv.slice(0, found.index), ...argv.slice(found.index + 1)]);
}

/**
 * The line for a flag that takes a value typed without one (`tasks list
 * --status`, `--status --all`), or undefined. yargs accepts such a flag as
 * empty, and the command would then run on nothing (a list unfiltered, a
 * subject ''); the command line refuses it instead, as it refuses a value
 * outside a flag's choices.
 */
export function missingValueLine(argv: readonly string[]): string | undefined {
  const found = commandWord(argv);
  const spec = found && findCommand(found.word);
  if (!found || !spec) return undefined;
  const key = splitWords(spec, [...argv.slice(0, found.index), ...argv.slice(found.index + 1)]).missingValue;
  return key === undefined ? undefined : missingValueMessage(spec, key);
}

/** A usage error as printed: our line for argv, else yargs' message with where to look. */
export function usageLine(argv: readonly string[], fallback: string): string {
  const ours = describeUsageError(argv);
  if (ours) return ours;
  const spec = findCommand(commandWord(argv)?.word);
  return `${fallback} ${spec ? moreOn(spec) : COMMANDS_HINT}`;
}
