import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_HANDLERS } from '../../src/bundled-commands.js';
import { findCommand } from '../../src/command-table.js';
import { TASKS_BIN, cleanEnv, tasks, tempBoard, traceLoads } from '../helpers.js';
import { createRemote, git, onBranch } from '../../../core/test/git-remote.js';

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

/**
 * The guard as the hooks call it, with the payload of a session: agent-1 holds #3; a stop (plain and as a Claude
 * Code hook, which nudges once per task and session), an edit, and an owner holding nothing.
 */
const GUARD_CALLS: [string[], (session: string) => string][] = [
  [['guard', '--owner', 'agent-1'], () => ''],
  [['guard', '--owner', 'agent-2'], () => ''],
  [['guard', '--hook', 'claude', '--owner', 'agent-1'], (session) => JSON.stringify({ session_id: session, hook_event_name: 'Stop', stop_hook_active: false })],
  [
    ['guard', '--hook', 'claude-edit', '--owner', 'agent-1'],
    (session) => JSON.stringify({ session_id: session, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: 'src/x.ts' } }),
  ],
];

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

  it('runs a sync of a board shared through a remote without loading any ES module of ours, and says what it did', async () => {
    const remote = await createRemote({ prefix: 'dotasks-bundle-sync-' });
    try {
      const clone = remote.clone('m1');
      expect(tasks(clone, ['init']).code).toBe(0);
      expect(tasks(clone, ['create', 'shared']).code).toBe(0);
      const r = traceLoads(clone, ['sync']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/synced with origin\/tasks at \w+ \(0 in, 1 out\)/);
      const { bundle, modules } = ours(r.files);
      expect(bundle).toContain('sync.cjs');
      expect(modules).toEqual([]);
      expect(git(remote.bare, 'show', `tasks:${onBranch('task_1.json')}`)).toContain('"subject": "shared"');
    } finally {
      await remote.cleanup();
    }
  });

  it('runs what sessions and git start on their own without loading any ES module of ours: prime, the git hooks, the merge driver', () => {
    const prime = traceLoads(t.root, ['prime']);
    expect(prime.code, prime.stderr).toBe(0);
    expect(prime.stdout).toContain('#2');
    expect(ours(prime.files)).toEqual({ bundle: expect.arrayContaining(['tasks.cjs', 'prime.cjs']), modules: [] });
    const hook = traceLoads(t.root, ['git-hook', 'pre-commit']);
    expect(hook.code, hook.stderr).toBe(0);
    expect(ours(hook.files)).toEqual({ bundle: expect.arrayContaining(['tasks.cjs', 'git-hook.cjs']), modules: [] });
    // The driver git runs on a task file both sides changed: the subject from one side, the priority from the other.
    const file = readFileSync(join(t.root, '.tasks', 'task_1.json'), 'utf8');
    const [base, ours_, theirs] = ['base', 'ours', 'theirs'].map((side) => join(t.root, `${side}.json`));
    writeFileSync(base!, file);
    const side = (change: Record<string, unknown>) => JSON.stringify({ ...JSON.parse(file), ...change }, null, 2) + '\n';
    writeFileSync(ours_!, side({ subject: 'Parse the whole AST' }));
    writeFileSync(theirs!, side({ priority: 0 }));
    const driver = traceLoads(t.root, ['merge-driver', base!, ours_!, theirs!, '.tasks/task_1.json']);
    expect(driver.code, driver.stderr).toBe(0);
    expect(JSON.parse(readFileSync(ours_!, 'utf8'))).toMatchObject({ subject: 'Parse the whole AST', priority: 0 });
    expect(ours(driver.files)).toEqual({ bundle: expect.arrayContaining(['tasks.cjs', 'merge-driver.cjs']), modules: [] });
  });

  it("runs the guard the agents' hooks start at every stop and every edit without loading any ES module of ours", () => {
    for (const [args, input] of GUARD_CALLS) {
      const r = traceLoads(t.root, args, input('traced'));
      const { bundle, modules } = ours(r.files);
      expect(bundle, args.join(' ')).toContain('guard.cjs');
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
    for (const args of [['doctor'], ['setup', 'claude', '--dry-run']]) {
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
      ['prime'],
    ]) {
      const bundled = tasks(t.root, args, { TASKS_OWNER: 'agent-2' });
      const modules = spawnSync(process.execPath, [MAIN, ...args], { cwd: t.root, env: cleanEnv({ TASKS_OWNER: 'agent-2' }), encoding: 'utf8' });
      expect({ code: bundled.code, stdout: bundled.stdout, stderr: bundled.stderr }, args.join(' ')).toEqual({
        code: modules.status,
        stdout: modules.stdout,
        stderr: modules.stderr,
      });
    }
    // The guard's nudge names the entry that ran it (process.argv[1]) as the command to paste: the bin, or here main.js.
    for (const [args, input] of GUARD_CALLS) {
      const bundled = tasks(t.root, args, {}, input('bundled'));
      const modules = spawnSync(process.execPath, [MAIN, ...args], { cwd: t.root, env: cleanEnv(), encoding: 'utf8', input: input('modules') });
      expect({ code: bundled.code, stdout: bundled.stdout, stderr: bundled.stderr }, args.join(' ')).toEqual({
        code: modules.status,
        stdout: modules.stdout.replaceAll(MAIN, TASKS_BIN),
        stderr: modules.stderr.replaceAll(MAIN, TASKS_BIN),
      });
    }
  });
});
