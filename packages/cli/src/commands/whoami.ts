import { resolveOwner } from '@dotasks/core';
import type { CommandOutput, GlobalOptions } from '../context.js';
import { printable } from '../core-read.js';

/** The acting owner and where the name came from. */
export async function whoami(options: GlobalOptions): Promise<CommandOutput> {
  const { owner, source } = resolveOwner({ owner: options.owner, cwd: options.cwd });
  return { text: `${printable(owner)} (from ${source})`, json: { owner, source } };
}
