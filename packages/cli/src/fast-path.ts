/**
 * The fast path of the `tasks` entry. Loading yargs costs more than reading a 1,000-task
 * board, so the commands agents call all the time (list, ready, show, claim,
 * start, done, release, heartbeat) are parsed here when their arguments are
 * plain; `--help`, anything unusual and every other command go to the full
 * yargs command line in cli.ts, which gives the same results.
 */
import type { CommandOutput } from './context.js';

interface FastSpec {
  /** Positional ids: [min, max]. */
  positionals: [number, number];
  flags: string[];
  /** Options that take a value; `*` may repeat, `#` is a number. */
  values: string[];
  load: (args: Record<string, unknown>) => Promise<CommandOutput>;
}

const COMMON_VALUES = ['dir', 'owner'];
const listSpec: FastSpec = {
  positionals: [0, 0],
  flags: ['json', 'all', 'ready'],
  values: [...COMMON_VALUES, 'status*', 'filter-owner'],
  load: async (a) => (await import('./commands/list.js')).list(a),
};

const SPECS: Record<string, FastSpec> = {
  list: listSpec,
  ls: listSpec,
  ready: { ...listSpec, load: async (a) => (await import('./commands/list.js')).list({ ...a, ready: true }) },
  show: { positionals: [1, 1], flags: ['json'], values: COMMON_VALUES, load: async (a) => (await import('./commands/show.js')).show(a as never) },
  done: { positionals: [1, 1], flags: ['json', 'force'], values: COMMON_VALUES, load: async (a) => (await import('./commands/done.js')).done(a as never) },
  start: {
    positionals: [1, 1],
    flags: ['json'],
    values: [...COMMON_VALUES, 'active-form'],
    load: async (a) => (await import('./commands/start.js')).start(a as never),
  },
  release: { positionals: [1, 1], flags: ['json', 'force'], values: COMMON_VALUES, load: async (a) => (await import('./commands/release.js')).release(a as never) },
  claim: {
    positionals: [0, 1],
    flags: ['json', 'next'],
    values: [...COMMON_VALUES, 'lease#', 'pid#'],
    load: async (a) => (await import('./commands/claim.js')).claim(a as never),
  },
  heartbeat: {
    positionals: [0, 1],
    flags: ['json'],
    values: [...COMMON_VALUES, 'lease#'],
    load: async (a) => (await import('./commands/heartbeat.js')).heartbeat(a as never),
  },
};

const camel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * Parses argv for the fast path; undefined sends it to yargs. The result has
 * the keys yargs would give the command (camelCase options, `id`).
 */
export function parseFast(argv: string[]): { spec: FastSpec; args: Record<string, unknown> } | undefined {
  const spec = SPECS[argv[0]];
  if (!spec) return undefined;
  const args: Record<string, unknown> = {};
  const positionals: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    let arg = argv[i];
    if (arg === '-a') arg = '--all';
    if (!arg.startsWith('-')) {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith('--') || arg === '--') return undefined;
    let name = arg.slice(2);
    let value: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    if (spec.flags.includes(name) && value === undefined) {
      args[camel(name)] = true;
      continue;
    }
    const declared = spec.values.find((v) => v.replace(/[*#]$/, '') === name);
    if (!declared) return undefined;
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined || value.startsWith('-')) return undefined;
    }
    const key = camel(name);
    if (declared.endsWith('*')) (args[key] as string[] | undefined) ? (args[key] as string[]).push(value) : (args[key] = [value]);
    else if (key in args) return undefined;
    else if (declared.endsWith('#')) {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n)) return undefined;
      args[key] = n;
    } else args[key] = value;
  }
  const [min, max] = spec.positionals;
  if (positionals.length < min || positionals.length > max) return undefined;
  if (positionals.length) args.id = positionals[0];
  return { spec, args };
}
