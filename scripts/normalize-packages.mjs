#!/usr/bin/env node
// Keeps every workspace's package.json publishable in the same way: files
// without sources, maps or tests; licence, repository, engines; a LICENSE copy.
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const name of readdirSync(join(root, 'packages'))) {
  const file = join(root, 'packages', name, 'package.json');
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  pkg.files = [...(pkg.bin ? ['bin'] : []), 'dist/**/*.js', 'dist/**/*.d.ts'];
  pkg.license = 'MIT';
  pkg.engines = { node: '>=20.19' };
  pkg.repository = { type: 'git', url: 'git+https://example.invalid/dotasks/dotasks.git', directory: `packages/${name}` };
  writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
  copyFileSync(join(root, 'LICENSE'), join(root, 'packages', name, 'LICENSE'));
}
