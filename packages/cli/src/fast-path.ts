/**
 * The fast path of the `tasks` entry. Loading yargs costs more than reading a
 * 1,000-task board, so the commands the table marks `fast` (every command
 * that answers and ends: all but watch, serve, worker, mcp, run, wait, board,
 * events, logs and completion, which keep running or stream) are parsed here with
 * node:util's parseArgs from the same declarations yargs reads
 * (command-table.ts). Anything this parser is not sure of (`--help`, an
 * unknown flag, a bad value, a word yargs would read differently) goes to
 * the yargs command line in cli.ts, which then answers or refuses it; the two
 * give the same arguments for what both accept (fast-path.test.ts).
 */
import type { ParseArgsConfig } from 'node:util';
import { camel, findCommand, optionsOf, toNumber, type CommandSpec } from './command-table.js';

// Through getBuiltinModule, not an ESM import, whose facade costs the everyday commands milliseconds (see read.ts in the core).
const { parseArgs } = process.getBuiltinModule('node:util');

/**
 * Parses argv for the fast path; undefined sends it to yargs. The result
 * holds what yargs would give the command's handler: camelCase options,
 * positionals by name, defaults filled in.
 */
/** A plain call of a fast-path command, parsed: the command and what its handler receives. */
export interface FastParse {
  spec: CommandSpec;
  args: Record<string, unknown>;
}

export function parseFast(argv: string[]): FastParse | undefined {
  const spec = findCommand(argv[0]);
  if (!spec?.fast) return undefined;
  // Help is yargs' to print, wherever the word stands (after `--` too, where a note's text would otherwise take it).
  if (argv.some((word) => word === '--help' || word === '-h')) return undefined;
  const declared = optionsOf(spec);
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, o] of Object.entries(declared)) {
    options[name] = { type: o.type === 'boolean' ? 'boolean' : 'string', ...(o.alias ? { short: o.alias } : {}), ...(o.array ? { multiple: true } : {}) };
  }
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true; tokens: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: argv.slice(1), options, allowPositionals: true, strict: true, tokens: true });
  } catch {
    return undefined;
  }
  const { tokens } = parsed;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    // `--` and everything after it: yargs keeps it apart, and only a variadic positional takes it (after the words before `--`).
    if (token.kind === 'option-terminator' && !spec.positionals?.some((p) => p.variadic)) return undefined;
    // yargs reads `--next true` as the flag's value, parseArgs as a positional.
    const next = tokens[i + 1];
    if (token.kind === 'option' && token.value === undefined && next?.kind === 'positional' && /^(true|false)$/.test(next.value)) return undefined;
  }
  const args: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(declared)) {
    const raw = (parsed.values as Record<string, string | boolean | (string | boolean)[] | undefined>)[name];
    const value = raw ?? o.default;
    if (value === undefined) continue;
    const list = (Array.isArray(value) ? value : [value]).map(String);
    if (o.choices && list.some((v) => !o.choices!.includes(v))) return undefined;
    const typed = o.type === 'boolean' ? value : o.type === 'number' ? list.map(toNumber) : list;
    args[camel(name)] = o.type === 'boolean' ? typed : o.array ? typed : (typed as unknown[])[0];
  }
  const positionals = parsed.positionals;
  const declaredPositionals = spec.positionals ?? [];
  // A variadic positional is the last one and takes every word left (`note 3 the parser chokes`), none included.
  const variadic = declaredPositionals.at(-1)?.variadic === true;
  const fixed = variadic ? declaredPositionals.slice(0, -1) : declaredPositionals;
  const required = fixed.filter((p) => !p.optional).length;
  if (positionals.length < required || (!variadic && positionals.length > fixed.length)) return undefined;
  if (variadic && fixed.some((p) => p.optional)) return undefined; // which word goes where is yargs' to say
  for (const [i, p] of fixed.entries()) {
    const value = positionals[i];
    if (value === undefined) continue;
    if (p.choices && !p.choices.includes(value)) return undefined;
    args[camel(p.name)] = value;
  }
  if (variadic) args[camel(declaredPositionals.at(-1)!.name)] = positionals.slice(fixed.length);
  return { spec, args };
}
