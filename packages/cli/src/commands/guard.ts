import { TasksError, TaskStore, findBoard, resolveOwner } from '@dotasks/core';
import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';
import { printableLines } from '../printable.js';

/** What `tasks guard` takes, as declared in the command table. */
export interface GuardOptions extends CommandArgs<'guard'>, GlobalOptions {
  /** The hook payload; default: read from stdin. */
  input?: string;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text;
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
    const nudge = open.map(nudgeFor).join('\n');
    return { text: printableLines(nudge), json: { owner, inProgress: open.map((t) => t.id), nudge }, exitCode: 1 };
  }
  if (options.hook !== 'claude') throw new TasksError('E_USAGE', `unknown hook '${options.hook}'; use --hook claude`);

  const raw = options.input ?? (await readStdin());
  let payload: Record<string, unknown> = {};
  try {
    const parsed: unknown = raw.trim() ? JSON.parse(raw) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
  } catch {
    // A payload we cannot read must not keep the agent from stopping.
    return { warnings: ['tasks guard: the hook input is not JSON; letting the agent stop'] };
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
  const decision = await decideStopHook(store, owner, payload);
  if (!decision) return {};
  return { text: JSON.stringify(decision), json: decision };
}
