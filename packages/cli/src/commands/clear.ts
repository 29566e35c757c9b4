import { actingOwner, openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks clear` takes, as declared in the command table. */
export interface ClearOptions extends CommandArgs<'clear'>, GlobalOptions {}

/** Removes every task file (ids are never handed out again); needs --yes. */
export async function clear(options: ClearOptions): Promise<CommandOutput> {
  const store = openStore(options);
  const { removed } = await store.clearBoard({ confirm: options.yes === true, actor: actingOwner(options) });
  return { text: `removed ${removed.length} task file${removed.length === 1 ? '' : 's'}`, json: { removed } };
}
