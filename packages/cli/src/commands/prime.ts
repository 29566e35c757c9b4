import type { CommandOutput, GlobalOptions } from '../context.js';
import { actingOwner, openStore } from '../context.js';
import { printableLines } from '../core-read.js';

/**
 * What an agent needs to work the board at the start of a session or after
 * its context was compacted: the protocol, who it is, what it holds and the
 * open board (the `todo` tool's own board). Setup wires it to the clients'
 * session-start hooks.
 */
export async function prime(options: GlobalOptions): Promise<CommandOutput> {
  const { renderPrime } = await import('@dotasks/agent');
  const primer = renderPrime(openStore(options), actingOwner(options));
  return { text: printableLines(primer.text), json: primer };
}
