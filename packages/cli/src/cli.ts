import { readFileSync } from 'node:fs';
import yargs, { type Argv, type Options, type PositionalOptions } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { COMMAND_LIST, GLOBAL_OPTIONS, camel, optionsOf, toNumber, type CommandSpec, type OptionSpec } from './command-table.js';
import { runCommand } from './handlers.js';
import { writeOut, type Args } from './run.js';
import { missingValueLine, usageLine, usageOf } from './usage.js';

/**
 * The full `tasks` command line (yargs), built from the command table
 * (command-table.ts): usage errors, `--help` and every command the fast path
 * leaves alone. The entry (main.ts) answers plain reads without it.
 */

/** Our own version, from the CLI package's package.json (never the user's). */
function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** How the command line hands parsed arguments on, and what it does on a usage error (tests replace both). */
export interface CliHooks {
  dispatch?: (spec: CommandSpec, args: Args) => Promise<void> | void;
  /** Called with the line of a usage error (usage.ts); the default prints it and exits 2. */
  fail?: (message: string) => never;
}

function yargsOption(o: OptionSpec, global = false): Options {
  return {
    // Numbers reach us as the words typed, read by toNumber as on the fast path: yargs would read `--lease=` as 0 and drop a bare `--lease`.
    type: o.type === 'number' ? 'string' : o.type,
    ...(o.alias ? { alias: o.alias } : {}),
    ...(o.array ? { array: true } : {}),
    ...(o.choices ? { choices: [...o.choices] } : {}),
    ...(o.default !== undefined ? { default: o.default } : {}),
    ...(o.describe ? { describe: o.describe } : {}),
    ...(global ? { global: true } : {}),
  };
}

/** yargs' argv as the handler's arguments: exactly the keys the fast path gives (camelCase, declared only). */
export function argsFromYargs(spec: CommandSpec, a: Record<string, unknown>): Args {
  const args: Args = {};
  for (const [name, o] of Object.entries(optionsOf(spec))) {
    const key = camel(name);
    let value = a[key];
    if (value === undefined) continue;
    if (o.type === 'number') value = Array.isArray(value) ? value.map((v) => toNumber(String(v))) : toNumber(String(value));
    // The last of a repeated single-value option wins, as in parseArgs (yargs collects them).
    args[key] = !o.array && Array.isArray(value) ? value.at(-1) : value;
  }
  for (const p of spec.positionals ?? []) {
    const key = camel(p.name);
    if (p.variadic) args[key] = [...((a[key] as unknown[] | undefined) ?? []), ...((a['--'] as unknown[] | undefined) ?? [])].map(String);
    else if (a[key] !== undefined) args[key] = String(a[key]);
  }
  return args;
}

export function buildCli(args: string[], hooks: CliHooks = {}): Argv {
  const dispatch = hooks.dispatch ?? runCommand;
  // One line in our words (usage.ts), whatever yargs' message: no usage text, which would bury it.
  const refuse = (message: string): never => (hooks.fail ?? printUsageError)(usageLine(args, message));
  let cli = yargs(args)
    .scriptName('tasks')
    .usage('$0 <command> [options]\n\nA task board for coding agents and people, kept as files in .tasks/.')
    // Words after `--` stay apart (in `--`) instead of joining the positionals.
    .parserConfiguration({ 'populate--': true });
  for (const [name, o] of Object.entries(GLOBAL_OPTIONS)) cli = cli.option(name, yargsOption(o, true));
  for (const spec of COMMAND_LIST) {
    cli = cli.command(
      [usageOf(spec), ...(spec.aliases ?? [])],
      spec.describe,
      (y) => {
        for (const p of spec.positionals ?? []) {
          const positional: PositionalOptions = { type: 'string', ...(p.variadic ? { array: true } : {}) };
          if (p.choices) positional.choices = [...p.choices];
          if (p.describe) positional.describe = p.describe;
          y = y.positional(p.name, positional);
        }
        for (const [name, o] of Object.entries(spec.options ?? {})) y = y.option(name, yargsOption(o));
        for (const [command, description] of spec.examples) y = y.example(command, description);
        return y;
      },
      async (a) => {
        const extra = (a['--'] as unknown[] | undefined) ?? [];
        if (extra.length && !(spec.positionals ?? []).some((p) => p.variadic))
          return refuse(`unexpected ${extra.map((word) => `'${word}'`).join(', ')} after --`);
        // yargs takes `--status` with no value as empty; the words typed say nothing to filter or set by.
        const missing = missingValueLine(args);
        if (missing) return (hooks.fail ?? printUsageError)(missing);
        await dispatch(spec, argsFromYargs(spec, a));
      },
    );
  }
  return cli
    .demandCommand(1, 'name a command')
    .strict()
    .help()
    .alias('h', 'help')
    .version(readVersion())
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, error) => {
      if (error) throw error;
      return refuse(message);
    });
}

function printUsageError(line: string): never {
  writeOut(2, `tasks: ${line}\n`);
  process.exit(2);
}

/**
 * After running a command's handler, yargs renders the whole help text and
 * keeps it, to print should the handler's promise reject (command.js,
 * cacheHelpMessage): most of a parse (the string widths of every line),
 * 35 ms of every `tasks worker`, `tasks run` and `tasks watch`. Our fail
 * handler prints one line and never the help, so the text is never shown;
 * `--help` renders its own. Returns whether the shortcut applied (a yargs
 * release without the method renders it as before).
 */
export function skipHelpCache(cli: Argv): boolean {
  const usage = (cli as unknown as { getInternalMethods?(): { getUsageInstance(): { cacheHelpMessage?(): void } } }).getInternalMethods?.().getUsageInstance();
  if (typeof usage?.cacheHelpMessage !== 'function') return false;
  usage.cacheHelpMessage = () => undefined;
  return true;
}

/** Parses argv with yargs and runs the command. */
export async function main(args: string[] = hideBin(process.argv)): Promise<void> {
  const cli = buildCli(args);
  skipHelpCache(cli);
  await cli.parseAsync();
}
