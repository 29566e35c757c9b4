import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';
import { TasksError, TaskStore, findBoard, resolveOwner } from '@dotasks/core';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printableLines } from '../core-read.js';

/** What `tasks guard` takes, as declared in the command table. */
export interface GuardOptions extends CommandArgs<'guard'>, GlobalOptions {
  /** The hook payload; default: read from stdin. */
  input?: string;
}

/** How long the hook waits for the first byte of its payload, and for all of it, ms. */
const FIRST_BYTE_MS = 2_000;
const WHOLE_PAYLOAD_MS = 10_000;

/**
 * The hook's payload. Claude Code writes it and closes stdin; a runner that
 * leaves stdin open without writing, or stops half-way, must not keep the
 * agent waiting: nothing in FIRST_BYTE_MS reads as no payload, and a complete
 * JSON object ends the read without waiting for the end of stdin.
 */
async function readStdin(): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) return '';
  return new Promise<string>((resolve) => {
    let text = '';
    let timer = setTimeout(() => finish(), FIRST_BYTE_MS);
    const finish = () => {
      clearTimeout(timer);
      stdin.off('data', onData).off('end', finish).off('error', finish);
      stdin.destroy(); // an open pipe must not keep the process alive
      resolve(text);
    };
    const onData = (chunk: string) => {
      if (text === '') {
        clearTimeout(timer);
        timer = setTimeout(() => finish(), WHOLE_PAYLOAD_MS);
      }
      text += chunk;
      try {
        JSON.parse(text);
        finish();
      } catch {
        // not complete yet
      }
    };
    stdin.setEncoding('utf8');
    stdin.on('data', onData).once('end', finish).once('error', finish);
  });
}

const isExecutable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const realpathOr = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/**
 * The words that run this very `tasks` from the agent's shell, which has
 * neither the hook's PATH nor its owner: `tasks` when the agent's PATH finds
 * this bin; `npx --no-install tasks` when the bin is installed in a project
 * (a devDependency: npx finds it from the project, and never fetches a
 * stranger's package); else node and the bin's absolute path. npm exec (npx)
 * puts node_modules/.bin folders on the hook's PATH only, so those do not
 * count as the agent's.
 */
export function tasksCommandForAgent(env: NodeJS.ProcessEnv = process.env, bin: string = process.argv[1] ?? ''): string[] {
  const self = realpathOr(bin);
  const underNpm = env.npm_command !== undefined || env.npm_execpath !== undefined || env.npm_lifecycle_event !== undefined;
  const agentPath = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && !(underNpm && /node_modules[\\/]\.bin$|node-gyp-bin$/.test(dir)));
  const onPath = (name: string) => agentPath.map((dir) => join(dir, name)).filter(isExecutable);
  if (onPath('tasks').some((found) => realpathOr(found) === self)) return ['tasks'];
  if (self.includes(`${sep}node_modules${sep}`)) return ['npx', '--no-install', 'tasks'];
  return [onPath('node').length ? 'node' : process.execPath, self];
}

/**
 * The stop guard. Plain: silent exit 0 when the owner has nothing in
 * progress, else the nudge and exit 1. `--hook claude`: answers a Claude Code
 * Stop hook on stdout (`{"decision":"block","reason":…}`) at most once per
 * task per session, and stays silent (exit 0) otherwise.
 */
export async function guard(options: GuardOptions): Promise<CommandOutput> {
  const { decideStopHook, nudgeFor, tasksInProgress } = await import('@dotasks/agent');
  if (options.hook === undefined) {
    const store = openStore(options);
    const owner = actingOwner(options);
    const open = tasksInProgress(store, owner);
    if (open.length === 0) return { json: { owner, inProgress: [] } };
    const how = { tasks: tasksCommandForAgent(), owner };
    const nudge = open.map((task) => nudgeFor(task, how)).join('\n');
    return { text: printableLines(nudge), json: { owner, inProgress: open.map((t) => t.id), nudge }, exitCode: 1 };
  }
  if (options.hook !== 'claude' && options.hook !== 'claude-edit')
    throw new TasksError('E_USAGE', `unknown hook '${options.hook}'; use --hook claude (Stop) or --hook claude-edit (PreToolUse)`);

  const raw = options.input ?? (await readStdin());
  let payload: Record<string, unknown> = {};
  try {
    const parsed: unknown = raw.trim() ? JSON.parse(raw) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
  } catch {
    // A payload we cannot read must not keep the agent from stopping (or from editing).
    return { warnings: [`tasks guard: the hook input is not JSON; letting the agent ${options.hook === 'claude-edit' ? 'edit' : 'stop'}`] };
  }
  const cwd = options.cwd ?? (typeof payload.cwd === 'string' ? payload.cwd : undefined);
  let store: TaskStore;
  try {
    store = new TaskStore(findBoard({ dir: options.dir, cwd }));
  } catch (error) {
    if (error instanceof TasksError && error.code === 'E_NO_BOARD') return {}; // no board, nothing to guard
    throw error;
  }
  const owner = resolveOwner({ owner: options.owner, cwd }).owner;
  if (options.hook === 'claude-edit') {
    const { decideEditHook } = await import('@dotasks/agent');
    const refusal = decideEditHook(store, owner, payload, { tasks: tasksCommandForAgent(), owner });
    return refusal ? { text: JSON.stringify(refusal), json: refusal } : {};
  }
  const decision = await decideStopHook(store, owner, payload, { tasks: tasksCommandForAgent(), owner });
  if (!decision) return {};
  return { text: JSON.stringify(decision), json: decision };
}
