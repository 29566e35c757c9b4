/**
 * The `tasks` entry: plain calls of the everyday commands take the fast path
 * (fast-path.ts, no yargs); everything else goes to the yargs command line.
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
  const { run } = await import('./run.js');
  await run(fast.args, () => fast.spec.load(fast.args));
} else await (await import('./cli.js')).main(argv);
