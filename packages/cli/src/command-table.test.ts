import { describe, expect, it } from 'vitest';
import { buildCli, skipHelpCache } from './cli.js';
import { COMMAND_LIST, camel, checkArgs, optionsOf, type CommandSpec, type OptionSpec } from './command-table.js';
import { parseFast } from './fast-path.js';

/** A usage error as yargs reports it, caught instead of exiting. */
class Refused extends Error {}

type Outcome = { name: string; args: Record<string, unknown> } | { refused: string };

/** Parses argv with the yargs command line, in process: the command and its arguments, or the refusal. */
async function viaYargs(argv: string[]): Promise<Outcome> {
  let ran: Outcome | undefined;
  const cli = buildCli(argv, {
    dispatch: (spec, args) => {
      ran = { name: spec.name, args };
    },
    fail: (message) => {
      throw new Refused(message);
    },
  }).exitProcess(false);
  // As the CLI does (cli.ts, skipHelpCache): skipping the help text yargs renders after a handler changes nothing
  // about what is parsed; if a yargs release drops the method, this line says so.
  if (!skipHelpCache(cli)) throw new Error('yargs no longer has usage.cacheHelpMessage: remove skipHelpCache');
  try {
    await cli.parseAsync();
  } catch (error) {
    if (error instanceof Refused) return { refused: error.message };
    throw error;
  }
  return ran ?? { refused: 'no command ran' };
}

function sampleValue(name: string, o: OptionSpec): string {
  if (o.choices) return o.choices.at(-1)!;
  if (o.type === 'number') return name === 'since' ? '0' : '2.5';
  return `v-${name}`;
}

function typed(o: OptionSpec, raw: string[]): unknown {
  const values = o.type === 'number' ? raw.map(Number) : raw;
  return o.array ? values : values.at(-1);
}

/** The smallest call of a command: its required positionals. */
function baseArgv(spec: CommandSpec): { argv: string[]; args: Record<string, unknown> } {
  const argv = [spec.name];
  const args: Record<string, unknown> = {};
  for (const p of spec.positionals ?? []) {
    if (p.variadic) {
      argv.push('--', 'echo', '--not-ours');
      args[camel(p.name)] = ['echo', '--not-ours'];
    } else if (!p.optional) {
      const value = p.choices?.[0] ?? (p.completes ? '#3' : `p-${p.name}`);
      argv.splice(1 + Object.keys(args).length, 0, value);
      args[camel(p.name)] = value;
    }
  }
  for (const [name, o] of Object.entries(optionsOf(spec))) if (o.default !== undefined) args[camel(name)] = o.default;
  return { argv, args };
}

/** Every way to give each option: --name v, --name=v, -a v, repeated, and all of them at once. */
function acceptedCases(spec: CommandSpec): { label: string; argv: string[]; args: Record<string, unknown> }[] {
  const base = baseArgv(spec);
  const at = (words: string[]) => {
    const dashdash = base.argv.indexOf('--');
    return dashdash < 0 ? [...base.argv, ...words] : [...base.argv.slice(0, dashdash), ...words, ...base.argv.slice(dashdash)];
  };
  const cases = [{ label: 'plain', argv: base.argv, args: base.args }];
  const all: string[] = [];
  const allArgs: Record<string, unknown> = { ...base.args };
  for (const [name, o] of Object.entries(optionsOf(spec))) {
    const key = camel(name);
    const flags = [`--${name}`, ...(o.alias ? [`-${o.alias}`] : [])];
    if (o.type === 'boolean') {
      for (const flag of flags) cases.push({ label: flag, argv: at([flag]), args: { ...base.args, [key]: true } });
      all.push(`--${name}`);
      allArgs[key] = true;
      continue;
    }
    const value = sampleValue(name, o);
    for (const flag of flags) cases.push({ label: `${flag} ${value}`, argv: at([flag, value]), args: { ...base.args, [key]: typed(o, [value]) } });
    cases.push({ label: `--${name}=${value}`, argv: at([`--${name}=${value}`]), args: { ...base.args, [key]: typed(o, [value]) } });
    if (o.type === 'string' && !o.choices) cases.push({ label: `--${name} ''`, argv: at([`--${name}`, '']), args: { ...base.args, [key]: typed(o, ['']) } });
    const first = o.choices?.[0] ?? (o.type === 'number' ? '1' : 'w');
    cases.push({
      label: `--${name} twice`,
      argv: at([`--${name}`, first, `--${name}`, value]),
      args: { ...base.args, [key]: typed(o, o.array ? [first, value] : [value]) },
    });
    all.push(`--${name}`, value);
    allArgs[key] = typed(o, [value]);
  }
  cases.push({ label: 'every option', argv: at(all), args: allArgs });
  return cases;
}

/**
 * Calls off the beaten track. `refuse`: both paths must refuse it (yargs with
 * a usage error, or checkArgs before the command runs). `yargs`: yargs reads
 * it (`--json true`, `--filterOwner x`), the fast path leaves it to yargs.
 */
function otherCases(spec: CommandSpec): { label: string; argv: string[]; expect: 'refuse' | 'yargs' }[] {
  const base = baseArgv(spec);
  const variadic = (spec.positionals ?? []).some((p) => p.variadic);
  const before = (words: string[]) => {
    const dashdash = base.argv.indexOf('--');
    return dashdash < 0 ? [...base.argv, ...words] : [...base.argv.slice(0, dashdash), ...words, ...base.argv.slice(dashdash)];
  };
  const cases: { label: string; argv: string[]; expect: 'refuse' | 'yargs' }[] = [
    { label: 'an unknown flag', argv: before(['--frobnicate']), expect: 'refuse' },
    { label: 'a camelCase spelling', argv: before(['--filterOwner', 'x']), expect: spec.options && 'filter-owner' in spec.options ? 'yargs' : 'refuse' },
  ];
  const positionals = spec.positionals ?? [];
  if (positionals.some((p) => !p.optional && !p.variadic)) cases.push({ label: 'no positionals', argv: [spec.name], expect: 'refuse' });
  if (!variadic) {
    cases.push({ label: 'one positional too many', argv: [...base.argv, ...positionals.filter((p) => p.optional).map(() => '7'), 'extra'], expect: 'refuse' });
    cases.push({ label: 'words after --', argv: [...base.argv, '--', 'x'], expect: 'refuse' });
  }
  for (const p of positionals) if (p.choices) cases.push({ label: `a bad ${p.name}`, argv: [spec.name, 'nope', ...base.argv.slice(2)], expect: 'refuse' });
  for (const [name, o] of Object.entries(optionsOf(spec))) {
    if (o.choices) cases.push({ label: `--${name} nope`, argv: before([`--${name}`, 'nope']), expect: 'refuse' });
    if (o.type === 'number') {
      for (const bad of ['-60', 'abc', '', '1e400', ...(o.range === 'positive' ? ['0'] : [])])
        cases.push({ label: `--${name}=${bad}`, argv: before([`--${name}=${bad}`]), expect: 'refuse' });
      cases.push({ label: `--${name} -60`, argv: before([`--${name}`, '-60']), expect: 'refuse' });
      cases.push({ label: `--${name} without a value`, argv: before([`--${name}`]), expect: 'refuse' });
    }
    if (o.type === 'boolean') {
      cases.push({ label: `--${name} true`, argv: before([`--${name}`, 'true']), expect: 'yargs' });
      cases.push({ label: `--no-${name}`, argv: before([`--no-${name}`]), expect: 'yargs' });
    }
  }
  return cases;
}

describe('one declaration per command: the fast path and yargs read the same table', () => {
  for (const spec of COMMAND_LIST) {
    it(`${spec.name}: every option gives the same arguments on both paths`, async () => {
      for (const c of acceptedCases(spec)) {
        const label = `${c.label}: tasks ${c.argv.join(' ')}`;
        const yargs = await viaYargs(c.argv);
        expect(yargs, label).toEqual({ name: spec.name, args: c.args });
        const fast = parseFast(c.argv);
        if (spec.fast) expect(fast?.args, label).toEqual(c.args);
        else expect(fast, label).toBeUndefined();
      }
      for (const alias of spec.aliases ?? []) {
        const argv = [alias, ...baseArgv(spec).argv.slice(1)];
        expect(await viaYargs(argv), alias).toEqual({ name: spec.name, args: baseArgv(spec).args });
        if (spec.fast) expect(parseFast(argv)?.spec, alias).toBe(spec);
      }
    });

    it(`${spec.name}: what one path refuses, the other refuses too`, async () => {
      expect(parseFast([...baseArgv(spec).argv, '--help'])).toBeUndefined(); // yargs prints the help
      for (const c of otherCases(spec)) {
        const label = `${c.label}: tasks ${c.argv.join(' ')}`;
        const yargs = await viaYargs(c.argv);
        const fast = parseFast(c.argv);
        // Whatever the fast path answers, yargs answers the same.
        if (fast) expect({ name: fast.spec.name, args: fast.args }, label).toEqual(yargs);
        if (c.expect === 'yargs') {
          expect(yargs, label).toHaveProperty('args');
          expect(fast, label).toBeUndefined();
          continue;
        }
        if ('refused' in yargs) {
          expect(fast, label).toBeUndefined();
          continue;
        }
        // yargs took it (a number out of range): checkArgs refuses it before the command runs, on either path.
        const problem = checkArgs(spec, yargs.args);
        expect(problem ?? `nothing refused ${JSON.stringify(yargs.args)}`, label).toMatch(/^--[a-z-]+ takes /);
        if (fast) expect(checkArgs(spec, fast.args)).toBe(problem);
      }
    });
  }

  it('leaves to yargs alone only the commands that keep running or stream (fast-path.ts)', () => {
    // Every command that answers and ends is parsed without yargs: prime runs at every agent session's start.
    expect(
      COMMAND_LIST.filter((c) => !c.fast)
        .map((c) => c.name)
        .sort(),
    ).toEqual(['board', 'completion', 'events', 'logs', 'mcp', 'run', 'serve', 'wait', 'watch', 'worker']);
  });

  it('a negative or missing lease is refused by heartbeat as by claim', async () => {
    for (const command of ['claim', 'heartbeat']) {
      const spec = COMMAND_LIST.find((c) => c.name === command)!;
      for (const lease of ['-60', 'abc', '0']) {
        const outcome = await viaYargs([command, '3', `--lease=${lease}`]);
        expect('args' in outcome && checkArgs(spec, outcome.args), `${command} --lease ${lease}`).toMatch(/^--lease takes a positive number of seconds/);
      }
    }
  });
});
