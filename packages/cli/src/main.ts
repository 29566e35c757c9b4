/**
 * The `tasks` entry: plain calls of the everyday commands take the fast path
 * (fast-path.ts, no yargs); completion requests are answered from the command
 * table; everything else goes to the yargs command line.
 */
import { parseFast } from './fast-path.js';
import { loadModule } from './command-table.js';

// A closed pipe (`tasks list | head -1`) ends the command quietly with its usual status, as for any Unix tool.
// The fast path writes with run.ts's writeOut, which does the same without making the streams.
function quietOnClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
}

const argv = process.argv.slice(2);
const fast = parseFast(argv);
// No top-level await here: bin/tasks.js requires this module, which Node does synchronously (see loadModule).
if (fast)
  void loadModule<typeof import('./run.js')>('./run.js').then(async ({ runCommand, exitAnswered }) => {
    await runCommand(fast.spec, fast.args);
    exitAnswered();
  });
else {
  quietOnClosedPipes();
  // The completion scripts ask here, word by word (the name is kept for scripts already in people's shell rc files).
  if (argv[0] === '--get-yargs-completions')
    void import('./completion.js').then(({ answerCompletion }) => process.stdout.write(answerCompletion(argv.slice(1))));
  else void import('./cli.js').then(({ main }) => main(argv));
}
