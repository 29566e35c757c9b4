import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, tasks, tempBoard } from '../helpers.js';

// Every package's README names the package, lists its entry points, and its
// examples run as written: each `js` block as a script on a fresh board (found
// through TASKS_DIR, as the examples' findBoard() finds it), each `sh` block
// as the `tasks` commands it shows.
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const packages = readdirSync(join(root, 'packages')).sort();

function blocks(readme: string, lang: string): string[] {
  return [...readme.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1]);
}

/** Splits `tasks …` into argv, honouring double quotes. */
function argvOf(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

describe('the package READMEs', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('there is one per package', () => {
    expect(packages).toEqual(['agent', 'cli', 'core', 'terminal-board', 'watch', 'web', 'worker']);
  });

  for (const name of packages)
    it(`packages/${name}: names the package and its entry points, and its example runs`, () => {
      const readme = readFileSync(join(root, 'packages', name, 'README.md'), 'utf8');
      const pkg = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as {
        name: string;
        exports: Record<string, unknown>;
        bin?: Record<string, string>;
      };
      expect(readme.split('\n')[0]).toBe(`# ${pkg.name}`);
      for (const entry of Object.keys(pkg.exports)) expect(readme).toContain('`' + join(pkg.name, entry) + '`');
      for (const bin of Object.keys(pkg.bin ?? {})) expect(readme).toContain('`' + bin + '`');

      const scripts = blocks(readme, 'js');
      const commands = blocks(readme, 'sh').flatMap((b) => b.split('\n').filter((line) => line.startsWith('tasks ')));
      expect(scripts.length + commands.length).toBeGreaterThan(0);
      for (const script of scripts) {
        const t = tempBoard({ init: true });
        cleanup = t.cleanup;
        // Run from the repository, where the packages resolve as a user's node_modules would hold them.
        const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
          cwd: root,
          env: cleanEnv({ TASKS_DIR: t.board }),
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(r.stderr).toBe('');
        expect(r.status).toBe(0);
        cleanup();
      }
      if (commands.length) {
        const t = tempBoard({ init: !commands.some((c) => c.startsWith('tasks init')) });
        cleanup = t.cleanup;
        for (const command of commands) {
          const r = tasks(t.root, argvOf(command.slice('tasks '.length)));
          expect(r.code, `${command}\n${r.stderr}`).toBe(0);
        }
      }
    });
});
