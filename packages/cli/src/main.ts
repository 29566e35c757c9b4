/**
 * The `tasks` entry: plain calls of the everyday commands take the fast path
 * (fast-path.ts, no yargs); everything else goes to the yargs command line.
 */
import { parseFast } from './fast-path.js';

const argv = process.argv.slice(2);
const fast = parseFast(argv);
if (fast) {
  const { run } = await import('./run.js');
  await run(fast.args, () => fast.spec.load(fast.args));
} else await (await import('./cli.js')).main(argv);
