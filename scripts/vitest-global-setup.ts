import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Builds every package with tsc so tests can spawn the real `tasks` bin. */
export default function setup(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-b'], {
    cwd: root,
    stdio: 'inherit',
  });
}
