/**
 * The `tasks` entry as ES modules, for what the bundle (bundle-entry.ts)
 * leaves: plain calls of the other commands that answer and end take the
 * fast path (fast-path.ts, no yargs); completion requests are answered from
 * the command table; everything else goes to the yargs command line.
 */
import { parseFast, type FastParse } from './fast-path.js';
import { runCommand } from './handlers.js';
import { exitAnswered, quietOnClosedPipe } from './run.js';

/**
 * Runs argv. `fast` is the fast path's parse when the bundle made it already
 * (bin/tasks.js hands it over), so a command such as `tasks sync` is parsed
 * once; undefined when argv is not a plain fast-path call.
 */
export function runMain(argv: string[], fast: FastParse | undefined): void {
  // No top-level await here: bin/tasks.js requires this module, which Node does synchronously (require of an ES
  // module, Node >= 20.19). The fast path writes with run.ts's writeOut, which never makes the streams.
  if (fast) void runCommand(fast.spec, fast.args).then(exitAnswered);
  else {
    quietOnClosedPipe(process.stdout);
    quietOnClosedPipe(process.stderr);
    // The completion scripts ask here, word by word (the name is kept for scripts already in people's shell rc files).
    if (argv[0] === '--get-yargs-completions')
      void import('./completion.js').then(({ answerCompletion }) => process.stdout.write(answerCompletion(argv.slice(1))));
    else void import('./cli.js').then(({ main }) => main(argv));
  }
}

// Run directly (`node dist/main.js …`, as the bundle's tests compare): parse here.
if (process.argv[1] === import.meta.filename) runMain(process.argv.slice(2), parseFast(process.argv.slice(2)));
