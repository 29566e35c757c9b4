/**
 * The commands agents call all day: the reads, the claims, the writes
 * create, update, note, dep and delete, the guard their hooks run at
 * every stop and edit, and the sync of a board shared across machines. The entry runs them from a bundle
 * (bundle-entry.ts, built into dist/bundle by scripts/build-bundle.mjs),
 * where each `import()` below becomes a CommonJS chunk of its own that only
 * its command loads. The yargs command line runs the same handlers from the
 * ES modules (command-table.ts's HANDLERS).
 */
import type { CommandName, Handler } from './command-table.js';

type BundledName =
  | 'list'
  | 'ready'
  | 'show'
  | 'search'
  | 'create'
  | 'update'
  | 'note'
  | 'dep'
  | 'delete'
  | 'start'
  | 'done'
  | 'claim'
  | 'release'
  | 'heartbeat'
  | 'guard'
  | 'review'
  | 'approve'
  | 'reject'
  | 'sync'
  | 'prime'
  | 'git-hook'
  | 'merge-driver';

export const BUNDLED_HANDLERS: { readonly [N in BundledName]: () => Promise<Handler<N>> } = {
  create: async () => (await import('./commands/create.js')).create,
  list: async () => (await import('./commands/list.js')).list,
  ready: async () => {
    const { list } = await import('./commands/list.js');
    return (args) => list({ ...args, ready: true });
  },
  show: async () => (await import('./commands/show.js')).show,
  search: async () => (await import('./commands/search.js')).search,
  note: async () => (await import('./commands/note.js')).note,
  update: async () => (await import('./commands/update.js')).update,
  start: async () => (await import('./commands/start.js')).start,
  done: async () => (await import('./commands/done.js')).done,
  dep: async () => (await import('./commands/dep.js')).dep,
  delete: async () => (await import('./commands/delete.js')).deleteCommand,
  claim: async () => (await import('./commands/claim.js')).claim,
  release: async () => (await import('./commands/release.js')).release,
  heartbeat: async () => (await import('./commands/heartbeat.js')).heartbeat,
  guard: async () => (await import('./commands/guard.js')).guard,
  review: async () => (await import('./commands/review.js')).review,
  approve: async () => (await import('./commands/review.js')).approve,
  reject: async () => (await import('./commands/review.js')).reject,
  sync: async () => (await import('./commands/sync.js')).sync,
  prime: async () => (await import('./commands/prime.js')).prime,
  'git-hook': async () => (await import('./commands/git-hook.js')).gitHook,
  'merge-driver': async () => (await import('./commands/merge-driver.js')).mergeDriver,
};

/** The bundled handler of a command, if it has one. */
export function bundledHandler(name: CommandName): (() => Promise<Handler<BundledName>>) | undefined {
  return Object.hasOwn(BUNDLED_HANDLERS, name) ? (BUNDLED_HANDLERS[name as BundledName] as () => Promise<Handler<BundledName>>) : undefined;
}
