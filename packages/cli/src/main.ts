/**
 * The `tasks` entry as ES modules, for what the bundle (bundle-entry.ts)
 * leaves: plain calls of the other commands that answer and end take the
 * fast path (fast-path.ts, no yargs); completion requests are answered from
 * the command table; everything else goes to the yargs command line.
 */
import { parseFast } from './fast-path.js';
import { runCommand } from './handlers.js';
import { exitAnswered, quietOnClosedPipe } from './run.js';

const argv = process.argv.slice(2);
const fast = parseFast(argv);
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
