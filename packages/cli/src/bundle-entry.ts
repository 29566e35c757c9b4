/**
 * The entry of the bundle (dist/bundle/tasks.cjs, scripts/build-bundle.mjs)
 * that bin/tasks.js loads first. Node loads one CommonJS file and a chunk
 * per command in about 4 ms, where the same code as some 20 ES modules
 * (require of an ES module) takes 17 ms: on `tasks list` that is most of
 * what the process adds to Node's own start (docs/decisions.md, "The
 * everyday commands run from a bundle").
 */
import { bundledHandler } from './bundled-commands.js';
import type { CommandName } from './command-table.js';
import { parseFast, type FastParse } from './fast-path.js';
import { exitAnswered, runHandler } from './run.js';

/**
 * Runs argv if it is a plain call of a bundled command (the fast path's
 * parse, fast-path.ts) and returns true; otherwise returns that parse
 * (undefined: not a plain fast-path call) for the ES module entry
 * (main.ts's runMain), which this process then loads without having run
 * anything of the bundle's own copy of the core, and without parsing again.
 */
export function runBundled(argv: string[]): true | FastParse | undefined {
  const fast = parseFast(argv);
  const load = fast && bundledHandler(fast.spec.name as CommandName);
  if (!fast || !load) return fast;
  void runHandler(fast.spec, fast.args, load).then(exitAnswered);
  return true;
}
