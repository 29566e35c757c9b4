import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv } from '../helpers.js';

// Packs every workspace with `npm pack` and installs the tarballs into a
// brand-new git repository, the way a user adds dotasks to their project.
const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
let tmp = '';
let project = '';

function sh(cmd: string, args: string[], cwd: string): string {
  // npm may ask the registry, through whatever certificates this machine names; `tasks` and npx's run of it open no TLS connection.
  const certs: Record<string, string> = cmd === 'npm' && process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {};
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', env: cleanEnv(certs), stdio: ['ignore', 'pipe', 'pipe'] });
}

beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-install-')));
  const packs = join(tmp, 'packs');
  mkdirSync(packs);
  const packed = JSON.parse(sh('npm', ['pack', '--workspaces', '--pack-destination', packs, '--json'], repoRoot)) as { filename: string }[];
  project = join(tmp, 'my-project');
  mkdirSync(project);
  sh('git', ['init', '-q', '-b', 'main'], project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-project', version: '1.0.0', private: true }, null, 2));
  // The dependencies are in npm's cache from the repository's own npm ci: take them from there rather than ask the registry again for each.
  sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...packed.map((p) => join(packs, p.filename))], project);
}, 300_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('installed from npm pack into a new repository', () => {
  it('npx tasks works: init --git, create, list, done', () => {
    expect(sh('npx', ['tasks', '--version'], project).trim()).toBe(
      (JSON.parse(readFileSync(join(repoRoot, 'packages/cli/package.json'), 'utf8')) as { version: string }).version,
    );
    sh('npx', ['tasks', 'init', '--git'], project);
    expect(existsSync(join(project, '.tasks', '.gitignore'))).toBe(true);
    expect(readFileSync(join(project, '.tasks', '.gitattributes'), 'utf8')).toContain('merge=dotasks');
    // The driver git runs is the installed one, not anything of our checkout.
    const driver = sh('git', ['config', 'merge.dotasks.driver'], project);
    expect(driver).toContain(join(project, 'node_modules'));
    expect(driver).not.toContain(repoRoot);
    sh('npx', ['tasks', 'create', 'Write the README'], project);
    sh('npx', ['tasks', 'create', 'Publish', '--blocked-by', '1'], project);
    expect(sh('npx', ['tasks', 'list'], project)).toContain('[ ] #2: Publish (blocked by: #1)');
    expect(sh('npx', ['tasks', 'done', '1'], project)).toContain('unblocked #2: Publish');
  });

  it('the library imports from a plain .mjs file', () => {
    writeFileSync(
      join(project, 'use.mjs'),
      `import { TaskStore, findBoard, renderBoard, createTodoTool } from 'dotasks';
import { parseTaskId } from '@dotasks/core';
const store = new TaskStore(findBoard());
const { task } = await store.createTask({ subject: 'from a script' });
const todo = createTodoTool({ owner: 'script' });
const listed = await todo.execute({ action: 'list' });
console.log(parseTaskId('#' + task.id), renderBoard(store.loadBoard()).includes('from a script'), listed.ok);
`,
    );
    expect(sh('node', ['use.mjs'], project).trim()).toBe('3 true true');
  });

  it('nothing of our repository leaks into the installed result', () => {
    const installed = ['dotasks', ...readdirSync(join(project, 'node_modules', '@dotasks')).map((n) => `@dotasks/${n}`)];
    expect(installed).toContain('@dotasks/core');
    for (const name of installed) {
      const dir = join(project, 'node_modules', name);
      const files = execFileSync('find', [dir, '-type', 'f'], { encoding: 'utf8' }).trim().split('\n');
      expect(
        files.some((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
        `${name} ships sources`,
      ).toBe(false);
      expect(
        files.some((f) => /\.test\.|tsbuildinfo|\.map$/.test(f)),
        `${name} ships build leftovers`,
      ).toBe(false);
      for (const f of files) expect(readFileSync(f, 'utf8').includes(repoRoot), `${f} names our checkout`).toBe(false);
    }
    // Our dev dependencies were not installed with it.
    for (const dev of ['typescript', 'vitest', 'vite']) expect(existsSync(join(project, 'node_modules', dev)), dev).toBe(false);
  });

  it("the stop guard's nudge, run by npx as a hook, works in the agent's shell (no node_modules/.bin on PATH, no TASKS_OWNER)", () => {
    // The task in progress, through the installed bin itself (npx, half a second of CPU each, is what the hook runs).
    const bin = join(project, 'node_modules', '.bin', 'tasks');
    sh(bin, ['create', 'Guarded work'], project);
    const id = JSON.parse(sh(bin, ['list', '--json'], project)).tasks.find((t: { subject: string }) => t.subject === 'Guarded work').id as number;
    sh(bin, ['start', String(id), '--owner', 'claude'], project);
    const answer = execFileSync('npx', ['--no-install', 'tasks', 'guard', '--hook', 'claude', '--owner', 'claude'], {
      cwd: project,
      env: cleanEnv(),
      input: JSON.stringify({ session_id: 'install', hook_event_name: 'Stop', stop_hook_active: false }),
      encoding: 'utf8',
    });
    const command = /run `([^`]+)`/.exec((JSON.parse(answer) as { reason: string }).reason)![1];
    expect(command).toBe(`npx --no-install tasks done ${id} --owner claude`);
    const env = cleanEnv();
    for (const key of Object.keys(env)) if (key.startsWith('npm_')) delete env[key];
    env.PATH = (env.PATH ?? '')
      .split(':')
      .filter((dir) => !dir.includes('node_modules'))
      .join(':');
    execFileSync('sh', ['-c', command], { cwd: project, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(JSON.parse(readFileSync(join(project, '.tasks', `task_${id}.json`), 'utf8'))).toMatchObject({ status: 'completed', owner: 'claude' });
  });
});
