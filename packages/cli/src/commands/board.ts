import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import { wantsColor } from '../style.js';

export type BoardOptions = GlobalOptions;

/**
 * `tasks board`: the live full-screen board (@dotasks/terminal-board, Ink and React,
 * loaded only here). Off a terminal, or with --json, it prints what
 * `tasks list` prints, so a pipe or a script gets something it can read.
 */
export async function board(options: BoardOptions): Promise<CommandOutput> {
  if (options.json || !process.stdout.isTTY || !process.stdin.isTTY) return (await import('./list.js')).list(options);
  const store = openStore(options);
  void store.config; // a broken config.json stops every command, this one too, before the screen is taken
  const owner = actingOwner(options);
  // The keys write through the same commands as `tasks start|done|release|note ID --owner OWNER`.
  const as = { ...options, owner };
  // A refusal that is output, not a throw (a check before done that failed): its first line is the error the status line shows.
  const text = (out: CommandOutput) => {
    if (out.exitCode && out.warnings?.length) throw new Error(out.warnings[0].replace(/^tasks: /, ''));
    return out.text ?? '';
  };
  const { runBoard } = await import('@dotasks/terminal-board');
  const signal = await runBoard({
    store,
    owner,
    color: wantsColor(false),
    actions: {
      start: async (id) => text(await (await import('./start.js')).start({ ...as, id: String(id) })),
      done: async (id) => text(await (await import('./done.js')).done({ ...as, id: String(id), quietCheck: true })),
      release: async (id) => text(await (await import('./release.js')).release({ ...as, id: String(id) })),
      note: async (id, note) => text(await (await import('./note.js')).note({ ...as, id: String(id), text: [note] })),
      approve: async (id) => text(await (await import('./review.js')).approve({ ...as, id: String(id) })),
      reject: async (id, note) => text(await (await import('./review.js')).reject({ ...as, id: String(id), note })),
    },
  });
  return signal ? { exitCode: signal === 'SIGTERM' ? 143 : 129 } : {};
}
