import type { CommandOutput, GlobalOptions } from './context.js';

export type Args = GlobalOptions & Record<string, unknown>;

/** Exit statuses by error code (docs/protocol.md, "Exit statuses"). */
export function exitCodeFor(code: string | undefined): number {
  switch (code) {
    case 'E_USAGE':
      return 2;
    case 'E_CLAIMED':
    case 'E_NOTHING_READY':
      return 3;
    case 'E_TIMEOUT':
      return 124;
    default:
      return 1;
  }
}

export function print(out: CommandOutput, json: boolean | undefined): void {
  for (const w of out.warnings ?? []) process.stderr.write(w + '\n');
  if (json && out.json !== undefined) process.stdout.write(JSON.stringify(out.json, null, 2) + '\n');
  else if (out.text !== undefined && out.text !== '') process.stdout.write(out.text + '\n');
}

export async function run(argv: Args, load: () => Promise<CommandOutput>): Promise<void> {
  try {
    const out = await load();
    print(out, argv.json);
    process.exitCode = out.exitCode ?? 0;
  } catch (error) {
    const err = error as { code?: string; message?: string; name?: string };
    const known = typeof err?.code === 'string' && err.code.startsWith('E_') && err.name !== undefined;
    const code = known ? err.code! : 'E_INTERNAL';
    const message = known ? err.message! : `unexpected error: ${err?.message ?? String(error)}`;
    process.stderr.write(`tasks: ${message}\n`);
    if (argv.json) process.stdout.write(JSON.stringify({ error: { code, message } }) + '\n');
    if (!known && process.env.TASKS_DEBUG) process.stderr.write(String((error as Error)?.stack) + '\n');
    process.exitCode = exitCodeFor(known ? code : undefined);
  }
}

