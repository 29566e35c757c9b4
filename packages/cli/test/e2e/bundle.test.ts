import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BUNDLED_HANDLERS } from '../../src/bundled-commands.js';
import { findCommand } from '../../src/command-table.js';
import { cleanEnv, tasks, tempBoard, traceLoads } from '../helpers.js';

// The everyday commands run from dist/bundle (bundle-entry.ts); the rest from
// the ES modules (main.ts). Each process must use one copy of the core, and
// the bundle must answer what the ES modules answer.
const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
let t: ReturnType<typeof tempBoard>;

beforeAll(() => {
  t = tempBoard();
  for (const args of [
    ['create', 'Parse the AST', '--label', 'parser'],
    ['create', 'Emit code', '--blocked-by', '1', '--priority', '1'],
    ['create', 'Write docs', '-d', 'with examples'],
    ['claim', '3'],
  ])
    expect(tasks(t.root, args, { TASKS_OWNER: 'agent-1' }).code).toBe(0);
});
afterAll(() => t.cleanup());

/** Our own modules a run opened: the bundle's files and the ES modules of packages/. */
function ours(files: string[]): { bundle: string[]; modules: string[] } {
  return {
    bundle: files.filter((f) => f.includes('/cli/dist/bundle/')).map((f) => f.slice(f.lastIndexOf('/') + 1)),
    modules: files.filter((f) => /\/packages\/[a-z]+\/dist\/.*\.js$/.test(f)).map((f) => f.slice(f.indexOf('/packages/') + 1)),
  };
}

describe('the bundle of the everyday commands', () => {
  it('runs only commands of the fast path', () => {
    for (const name of Object.keys(BUNDLED_HANDLERS)) expect(findCommand(name)?.fast, name).toBe(true);
  });

  it('runs the everyday commands without loading any ES module of ours', () => {
    for (const args of [['list'], ['ready'], ['show', '1'], ['search', 'AST'], ['note', '1', 'a note'], ['heartbeat', '3', '--owner', 'agent-1']]) {
      const r = traceLoads(t.root, args);
      expect(r.code, r.stderr).toBe(0);
      const { bundle, modules } = ours(r.files);
      expect(bundle, args.join(' ')).toContain('tasks.cjs');
      expect(bundle, args.join(' ')).toContain(`${args[0] === 'ready' ? 'list' : args[0]}.cjs`);
      expect(modules, args.join(' ')).toEqual([]);
    }
  });

  it('leaves the other commands to the ES modules, having run nothing of its own copy of the core', () => {
    for (const args of [['doctor'], ['events'], ['list', '--help']]) {
      const r = traceLoads(t.root, args);
      expect(r.code, r.stderr).toBe(0);
      const { bundle, modules } = ours(r.files);
      expect(bundle, args.join(' ')).toEqual(['tasks.cjs']);
      expect(modules, args.join(' ')).toContain('packages/cli/dist/main.js');
    }
  });

  it('leaves the commands that answer and end to the fast path of the ES modules, without yargs', () => {
    for (const args of [['doctor'], ['prime'], ['setup', 'claude', '--dry-run']]) {
      const r = traceLoads(t.root, args);
      expect(r.code, r.stderr).toBe(0);
      expect(ours(r.files).modules, args.join(' ')).toContain('packages/cli/dist/main.js');
      expect(
        r.files.filter((f) => f.includes('/node_modules/yargs/')),
        args.join(' '),
      ).toEqual([]);
    }
  });

  it('answers what the ES modules answer', () => {
    for (const args of [
      ['list'],
      ['list', '--all', '--json'],
      ['ready', '--json'],
      ['show', '2'],
      ['search', 'docs', '--json'],
      ['show', '9'],
      ['done', '99', '--json'],
      ['list', '--status', 'bogus'],
    ]) {
      const bundled = tasks(t.root, args, { TASKS_OWNER: 'agent-2' });
      const modules = spawnSync(process.execPath, [MAIN, ...args], { cwd: t.root, env: cleanEnv({ TASKS_OWNER: 'agent-2' }), encoding: 'utf8' });
      expect({ code: bundled.code, stdout: bundled.stdout, stderr: bundled.stderr }, args.join(' ')).toEqual({
        code: modules.status,
        stdout: modules.stdout,
        stderr: modules.stderr,
      });
    }
  });
});
