import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Builds every package with tsc, the page of `tasks serve` with vite and the
 * everyday commands' bundle with rolldown, so tests can spawn the real `tasks` bin.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-b'], {
    cwd: root,
    stdio: 'inherit',
  });
  // Skips itself when the page's sources did not change since the last build.
  execFileSync(process.execPath, [fileURLToPath(new URL('../packages/web/scripts/build-page.mjs', import.meta.url))], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, [fileURLToPath(new URL('../packages/cli/scripts/build-bundle.mjs', import.meta.url)), '--quiet'], {
    cwd: root,
    stdio: 'inherit',
  });
}
