#!/usr/bin/env node
// Bundles the everyday commands (src/bundle-entry.ts and what it imports,
// compiled by tsc into dist/) into dist/bundle/: one CommonJS entry,
// tasks.cjs, and a chunk per command and per shared part, which Node loads
// several times faster than the same code as ES modules. Our packages
// (@dotasks/*) go into the bundle; other packages and Node's own modules are
// required from node_modules as usual, so they exist once per process.
// Part of `npm run build` and of the tests' global setup; it always builds
// (about a second), so the bundle is never older than dist/.
import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const out = join(dist, 'bundle');
const next = join(dist, 'bundle.next');
const started = Date.now();
rmSync(next, { recursive: true, force: true });
await build({
  input: { tasks: join(dist, 'bundle-entry.js') },
  platform: 'node',
  external: (id) => !/^[./]/.test(id) && !id.startsWith('@dotasks/'),
  logLevel: 'warn',
  output: { dir: next, format: 'cjs', entryFileNames: '[name].cjs', chunkFileNames: '[name].cjs' },
});
// Swapped in whole: a process starting meanwhile finds the old bundle or the new one, not half of one.
rmSync(out, { recursive: true, force: true });
renameSync(next, out);
if (!process.argv.includes('--quiet'))
  console.log(`bundled the everyday commands into ${out.slice(dist.length - 'dist/'.length)} in ${Date.now() - started} ms`);
