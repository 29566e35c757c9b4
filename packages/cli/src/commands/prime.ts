import type { CommandOutput, GlobalOptions } from '../context.js';
import { actingOwner, openStore } from '../context.js';
import { printableLines } from '../core-read.js';

/**
 * What an agent needs to work the board at the start of a session or after
 * its context was compacted: the protocol, who it is, what it holds and the
 * open board (the `todo` tool's own board). Setup wires it to the clients'
 * session-start hooks.
 */
export async function prime(options: GlobalOptions & { hook?: string }): Promise<CommandOutput> {
  const { renderPrime } = await import('@dotasks/agent');
  const primer = renderPrime(openStore(options), actingOwner(options));
  if (options.hook !== undefined) {
    // Codex and Gemini CLI take context from a SessionStart hook only in this shape (plain text is shown to the user).
    const answer = { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: primer.text } };
    return { text: JSON.stringify(answer), json: answer };
  }
  return { text: printableLines(primer.text), json: primer };
}
