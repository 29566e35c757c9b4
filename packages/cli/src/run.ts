import { checkArgs, type CommandSpec } from './command-table.js';
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
  for (const w of out.warnings ?? []) writeOut(2, w + '\n');
  if (json && out.json !== undefined) writeOut(1, JSON.stringify(out.json, null, 2) + '\n');
  else if (out.text !== undefined && out.text !== '') writeOut(1, out.text + '\n');
}

const { writeSync } = process.getBuiltinModule('node:fs');
/** Set once a write had to go through the stream: later writes follow it there, in order. */
let throughStreams = false;

/**
 * Ends the process once a command of the fast path has answered: its output
 * went out with writeSync and its writes to the board were awaited, so all
 * that is left is V8 collecting garbage on the way out (about 5 ms after
 * listing 10,000 tasks). Output still waiting in a stream is let drain.
 */
export function exitAnswered(): void {
  if (!throughStreams) process.exit();
}

/**
 * Writes all of `text` to stdout (1) or stderr (2) at once, with writeSync
 * rather than process.stdout, whose stream costs the everyday commands 2 ms
 * to make. A closed pipe (`tasks list | head -1`) ends the command quietly
 * with its usual status; a non-blocking pipe that is full hands the rest to
 * the stream, which waits for it.
 */
export function writeOut(fd: 1 | 2, text: string): void {
  let buf = Buffer.from(text, 'utf8');
  while (buf.length > 0 && !throughStreams) {
    try {
      buf = buf.subarray(writeSync(fd, buf));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') process.exit(process.exitCode ?? 0);
      if (code !== 'EAGAIN') throw error;
      throughStreams = true;
    }
  }
  if (buf.length > 0) {
    const stream = fd === 1 ? process.stdout : process.stderr;
    if (stream.listenerCount('error') === 0) quietOnClosedPipe(stream);
    stream.write(buf);
  }
}

/** A closed pipe (`tasks list | head -1`) ends the command quietly with its usual status, as for any Unix tool. */
export function quietOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

/** What a file system error means, in words, and what to do. */
const SYSTEM_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of that path is a file, not a folder',
  EISDIR: 'that is a folder, not a file',
  EACCES: 'permission denied (you need write access to it)',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the disk',
  EDQUOT: 'disk quota exceeded',
  EIO: 'the disk reported an I/O error',
  EMFILE: 'too many open files (raise ulimit -n)',
  ENAMETOOLONG: 'the path is too long',
};

/** A Node.js system error (ENOENT, EACCES …) as one line that says what and where, instead of "unexpected error". */
function describeSystemError(error: unknown): string | undefined {
  const err = error as NodeJS.ErrnoException;
  if (!err || typeof err.code !== 'string' || !(err.code in SYSTEM_ERRORS) || typeof err.syscall !== 'string') return undefined;
  const where = err.path ? ` ${err.path}` : '';
  return `cannot ${err.syscall}${where}: ${SYSTEM_ERRORS[err.code]} (${err.code})`;
}

/**
 * Commands quoted in a message (`'tasks done 3 --owner agent-1'`) with the
 * `--dir` this command was given, so they act on the same board when pasted
 * from the same place. The core's hints carry the owner they are about
 * (core hints.ts); only the CLI knows the board came from a flag.
 */
async function pasteable(messages: string[], dir: string | undefined): Promise<string[]> {
  if (dir === undefined || !messages.some((m) => m.includes("'tasks "))) return messages;
  const { hintWord } = await import('./core-read.js');
  const flag = ` --dir ${hintWord(dir)}`;
  return messages.map((m) => m.replace(/'tasks ([^']*)'/g, (quoted, words: string) => (/(^| )--dir /.test(words) ? quoted : `'tasks ${words}${flag}'`)));
}

export async function run(argv: Args, load: () => Promise<CommandOutput>): Promise<void> {
  try {
    const out = await load();
    if (out.warnings) out.warnings = await pasteable(out.warnings, argv.dir);
    print(out, argv.json);
    process.exitCode = out.exitCode ?? 0;
  } catch (error) {
    const err = error as { code?: string; message?: string; name?: string };
    const known = typeof err?.code === 'string' && err.code.startsWith('E_') && err.name !== undefined;
    const system = known ? undefined : describeSystemError(error);
    const code = known ? err.code! : system ? 'E_IO' : 'E_INTERNAL';
    const [message] = await pasteable([known ? err.message! : (system ?? `unexpected error: ${err?.message ?? String(error)}`)], argv.dir);
    writeOut(2, `tasks: ${message}\n`);
    if (argv.json) writeOut(1, JSON.stringify({ error: { code, message } }) + '\n');
    if (!known && process.env.TASKS_DEBUG) writeOut(2, String((error as Error)?.stack) + '\n');
    process.exitCode = exitCodeFor(known || system ? code : undefined);
  }
}

/** Any command's handler, as the command table types it. */
type AnyHandler = (args: never) => Promise<CommandOutput>;

/**
 * Runs a command with the arguments either path parsed: checks them
 * (checkArgs), loads the handler, prints, sets the exit status.
 */
export async function runHandler(spec: CommandSpec, args: Args, load: () => Promise<AnyHandler>): Promise<void> {
  await run(args, async () => {
    const problem = checkArgs(spec, args);
    if (problem !== undefined) {
      const { TasksError } = await import('./core-read.js');
      throw new TasksError('E_USAGE', problem);
    }
    const handler = (await load()) as (args: Args) => Promise<CommandOutput>;
    return handler(args);
  });
}
