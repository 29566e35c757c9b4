#!/usr/bin/env node
// Builds the page of `tasks serve` (packages/web/page) with vite into
// packages/web/dist/public. Part of `npm run build` and of the tests' global
// setup, so it must be quick when nothing changed: it hashes its inputs and
// skips the build when the hash matches the one of the last build.
// `--force` builds anyway.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
const page = join(here, 'page');
const out = join(here, 'dist', 'public');
const stamp = join(here, 'dist', 'page-inputs.sha256');

function files(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

const hash = createHash('sha256');
for (const file of [
  ...files(page),
  join(here, 'src', 'wire.ts'),
  join(here, 'src', 'task-match.ts'),
  join(here, 'package.json'),
  fileURLToPath(import.meta.url),
]) {
  hash.update(file.slice(here.length)).update('\0').update(readFileSync(file)).update('\0');
}
const digest = hash.digest('hex');
if (!process.argv.includes('--force') && existsSync(join(out, 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === digest)
  process.exit(0);

const started = Date.now();
// A production build whoever runs it: under vitest NODE_ENV is `test`, and the JSX transform would then
// build the development runtime into the page, with this checkout's paths in it.
process.env.NODE_ENV = 'production';
const { build } = await import('vite');
await build({
  configFile: false,
  mode: 'production',
  root: page,
  // Relative asset URLs: the page works wherever the server mounts it.
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  worker: { format: 'es' },
  build: { outDir: out, emptyOutDir: true, sourcemap: false, target: 'es2022', reportCompressedSize: false },
});
writeFileSync(stamp, digest + '\n');
console.log(`built the tasks serve page into ${out.slice(here.length)} in ${Date.now() - started} ms`);
