import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { TASKS_BIN, cleanEnv, tasks } from './helpers.js';
import { boardFiles, createRemote, type RemoteFixture } from '../../core/test/git-remote.js';

/**
 * Several machines as real processes of the built `tasks` (the
 * machines-*.test.ts files): clones of one remote, each with `tasks init`
 * done, and what those tests ask of them. `useMachines()` in a test file
 * gives it a fixture that is stopped and removed after each test.
 */

let fixture: RemoteFixture | undefined;

/** Registers the clean-up and returns the current test's fixture. */
export function useMachines(): () => RemoteFixture {
  afterEach(async () => {
    await fixture?.cleanup();
    fixture = undefined;
  });
  return () => fixture!;
}

/** Debian's libfaketime (package faketime), wherever its architecture puts it. */
export const LIBFAKETIME =
  readdirSync('/usr/lib')
    .map((dir) => join('/usr/lib', dir, 'faketime', 'libfaketime.so.1'))
    .find((path) => existsSync(path)) ?? '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

/** Clones of one remote, each with `tasks init` done (no board committed). */
export async function machines(n: number, options: { daemon?: boolean } = {}): Promise<string[]> {
  fixture = await createRemote({ daemon: options.daemon, prefix: 'dotasks-machines-' });
  return Array.from({ length: n }, (_, i) => {
    const dir = fixture!.clone(`m${i + 1}`);
    const r = tasks(dir, ['init']);
    if (r.code !== 0) throw new Error(r.stderr);
    return dir;
  });
}

/** Runs `tasks ...args` and expects it to succeed; returns its stdout. */
export function ok(dir: string, args: string[], env: Record<string, string> = {}): string {
  const r = tasks(dir, args, env);
  expect(r.code, `tasks ${args.join(' ')} in ${dir}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

/** The subjects of a clone's tasks, sorted. */
export function subjects(dir: string): string[] {
  return Object.values(boardFiles(join(dir, '.tasks')))
    .filter((text) => text.startsWith('{'))
    .map((text) => (JSON.parse(text) as { subject: string }).subject)
    .sort();
}

/** A `tasks watch --sync` whose output is kept. */
export function watchSync(dir: string, interval = '1'): { child: ChildProcess; out: () => string; err: () => string } {
  const child = fixture!.track(
    spawn(process.execPath, [TASKS_BIN, 'watch', '--sync', '--sync-interval', interval, '--json'], { cwd: dir, env: cleanEnv(), detached: true }),
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return { child, out: () => out, err: () => err };
}
