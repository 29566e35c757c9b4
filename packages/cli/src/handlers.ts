/**
 * Each command's handler, loaded when the command runs, and the run of a
 * command through them. The bundle (bundle-entry.ts) does not import this
 * module: its commands are in bundled-commands.ts, and this table's other
 * imports would make the bundle a copy of every command.
 */
import { BUNDLED_HANDLERS } from './bundled-commands.js';
import type { CommandName, CommandSpec, Handler } from './command-table.js';
import { runHandler, type Args } from './run.js';

/** Each command's handler, loaded when the command runs; the compiler checks it takes what the table declares. */
export const HANDLERS: { readonly [N in CommandName]: () => Promise<Handler<N>> } = {
  ...BUNDLED_HANDLERS,
  completion: async () => (await import('./completion.js')).completionCommand,
  init: async () => (await import('./commands/init.js')).init,
  clear: async () => (await import('./commands/clear.js')).clear,
  whoami: async () => (await import('./commands/whoami.js')).whoami,
  reap: async () => (await import('./commands/reap.js')).reap,
  events: async () => {
    const { events } = await import('./commands/events.js');
    return (args) => events(args);
  },
  'tool-schema': async () => (await import('./commands/tool-schema.js')).toolSchema,
  mcp: async () => (await import('./commands/mcp.js')).mcp,
  prime: async () => (await import('./commands/prime.js')).prime,
  guard: async () => (await import('./commands/guard.js')).guard,
  setup: async () => (await import('./commands/setup.js')).setup,
  run: async () => (await import('./commands/run.js')).runJob,
  jobs: async () => (await import('./commands/jobs.js')).jobs,
  logs: async () => (await import('./commands/logs.js')).logs,
  kill: async () => (await import('./commands/kill.js')).kill,
  doctor: async () => (await import('./commands/doctor.js')).doctor,
  graph: async () => (await import('./commands/graph.js')).graph,
  'merge-driver': async () => (await import('./commands/merge-driver.js')).mergeDriver,
  'git-hook': async () => (await import('./commands/git-hook.js')).gitHook,
  import: async () => (await import('./commands/import.js')).importCommand,
  export: async () => (await import('./commands/export.js')).exportCommand,
  worktree: async () => (await import('./commands/worktree.js')).worktree,
  merge: async () => (await import('./commands/merge.js')).merge,
  worker: async () => (await import('./commands/worker.js')).worker,
  watch: async () => {
    const { watch } = await import('./commands/watch.js');
    return (args) => watch(args);
  },
  wait: async () => {
    const { wait } = await import('./commands/wait.js');
    return (args) => wait(args);
  },
  sync: async () => (await import('./commands/sync.js')).sync,
  board: async () => (await import('./commands/board.js')).board,
  serve: async () => (await import('./commands/serve.js')).serve,
};

/** Runs a command of the table with its handler from the ES modules. */
export function runCommand(spec: CommandSpec, args: Args): Promise<void> {
  return runHandler(spec, args, HANDLERS[spec.name as CommandName]);
}
