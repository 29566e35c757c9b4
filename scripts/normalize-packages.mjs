#!/usr/bin/env node
// Keeps every workspace's package.json publishable in the same way: files
// without sources, maps or tests; licence, engines; a LICENSE copy; and the
// repository, once it has a public address: until then no package names one
// (docs/decisions.md, "Package metadata that names only what exists").
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The repository's public git address (`git+https://…`), written into every package at the first release. */
const REPOSITORY_URL = undefined;
for (const name of readdirSync(join(root, 'packages'))) {
  const file = join(root, 'packages', name, 'package.json');
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  // A package's own extra files (the CLI's bundle, the web board's page) stay.
  pkg.files = [...new Set([...(pkg.bin ? ['bin'] : []), 'dist/**/*.js', ...(pkg.files ?? []), 'dist/**/*.d.ts'])];
  pkg.license = 'MIT';
  pkg.engines = { node: '>=20.19' };
  if (REPOSITORY_URL) pkg.repository = { type: 'git', url: REPOSITORY_URL, directory: `packages/${name}` };
  else delete pkg.repository;
  writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
  copyFileSync(join(root, 'LICENSE'), join(root, 'packages', name, 'LICENSE'));
}
