/**
 * The `tasks` entry: plain calls of the everyday commands take the fast path
 * (fast-path.ts, no yargs); completion requests are answered from the command
 * table; everything else goes to the yargs command line.
 */
import { parseFast } from './fast-path.js';

// A closed pipe (`tasks list | head -1`) ends the command quietly with its usual status, as for any Unix tool.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const argv = process.argv.slice(2);
const fast = parseFast(argv);
if (fast) {
  const { runCommand } = await import('./run.js');
  await runCommand(fast.spec, fast.args);
} else if (argv[0] === '--get-yargs-completions') {
  // The completion scripts ask here, word by word (the name is kept for scripts already in people's shell rc files).
  const { answerCompletion } = await import('./completion.js');
  process.stdout.write(answerCompletion(argv.slice(1)));
} else await (await import('./cli.js')).main(argv);
