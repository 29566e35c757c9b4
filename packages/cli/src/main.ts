/**
 * The `tasks` entry: plain calls of the everyday commands take the fast path
 * (fast-path.ts, no yargs); completion requests are answered from the command
 * table; everything else goes to the yargs command line.
 */
import { parseFast } from './fast-path.js';
import { exitAnswered, quietOnClosedPipe, runCommand } from './run.js';

const argv = process.argv.slice(2);
const fast = parseFast(argv);
// No top-level await here: bin/tasks.js requires this module, which Node does synchronously (see loadModule in
// command-table.ts). The fast path writes with run.ts's writeOut, which never makes the streams.
if (fast) void runCommand(fast.spec, fast.args).then(exitAnswered);
else {
  quietOnClosedPipe(process.stdout);
  quietOnClosedPipe(process.stderr);
  // The completion scripts ask here, word by word (the name is kept for scripts already in people's shell rc files).
  if (argv[0] === '--get-yargs-completions')
    void import('./completion.js').then(({ answerCompletion }) => process.stdout.write(answerCompletion(argv.slice(1))));
  else void import('./cli.js').then(({ main }) => main(argv));
}
