/**
 * The `tasks` entry. Plain reads (`list`, `ready`, `show` with simple flags)
 * are answered without loading yargs, which costs more than reading a
 * 1,000-task board; everything else, and anything unusual, goes to the full
 * yargs command line in cli.ts.
 */
import type { CommandOutput } from './context.js';

const FLAGS = new Set(['--json', '--all', '-a', '--ready']);
const VALUES = new Set(['--dir', '--owner', '--status', '--filter-owner']);

interface FastArgs {
  command: string;
  positional: string[];
  json?: boolean;
  all?: boolean;
  ready?: boolean;
  dir?: string;
  owner?: string;
  status?: string[];
  filterOwner?: string;
}

/** Parses the few shapes the fast path answers; undefined sends argv to yargs. */
export function parseFast(args: string[]): FastArgs | undefined {
  const command = args[0];
  if (command !== 'list' && command !== 'ls' && command !== 'ready' && command !== 'show') return undefined;
  const out: FastArgs = { command, positional: [] };
  for (let i = 1; i < args.length; i++) {
    let arg = args[i];
    let value: string | undefined;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    if (eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    if (FLAGS.has(arg) && value === undefined) {
      if (arg === '--json') out.json = true;
      else if (arg === '--ready') out.ready = true;
      else out.all = true;
    } else if (VALUES.has(arg)) {
      if (value === undefined) {
        value = args[++i];
        if (value === undefined || value.startsWith('-')) return undefined;
      }
      if (arg === '--dir') out.dir = value;
      else if (arg === '--owner') out.owner = value;
      else if (arg === '--filter-owner') out.filterOwner = value;
      else (out.status ??= []).push(value);
    } else if (!arg.startsWith('-')) out.positional.push(arg);
    else return undefined;
  }
  const wantPositional = command === 'show' ? 1 : 0;
  if (out.positional.length !== wantPositional) return undefined;
  if (command === 'show' && (out.all || out.ready || out.status || out.filterOwner)) return undefined;
  return out;
}

async function runFast(args: FastArgs): Promise<void> {
  const { run } = await import('./run.js');
  await run({ json: args.json }, async (): Promise<CommandOutput> => {
    if (args.command === 'show') return (await import('./commands/show.js')).show({ ...args, id: args.positional[0] });
    return (await import('./commands/list.js')).list({ ...args, ready: args.ready || args.command === 'ready' });
  });
}

const argv = process.argv.slice(2);
const fast = parseFast(argv);
if (fast) await runFast(fast);
else await (await import('./cli.js')).main(argv);
