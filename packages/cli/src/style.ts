import { PLAIN_STYLE, type RenderStyle } from './core-read.js';

/**
 * Colour only when stdout is a terminal and NO_COLOR is not set (no-color.org);
 * FORCE_COLOR=1 forces it (for screenshots and tests). --json is never coloured.
 */
export function wantsColor(json: boolean | undefined, env: NodeJS.ProcessEnv = process.env, isTTY?: boolean): boolean {
  if (json) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== '') return true;
  return env.TERM !== 'dumb' && (isTTY ?? stdoutIsTerminal());
}

/**
 * Whether stdout is a terminal, without making process.stdout (its stream
 * costs the everyday commands 2 ms): a pipe or a file, which is how agents
 * read the output, is not a character device, nor is /dev/null a terminal;
 * only for another character device is node:tty asked.
 */
function stdoutIsTerminal(): boolean {
  const { fstatSync, statSync } = process.getBuiltinModule('node:fs');
  try {
    const out = fstatSync(1);
    if (!out.isCharacterDevice() || out.rdev === statSync('/dev/null', { throwIfNoEntry: false })?.rdev) return false;
  } catch {
    return false; // no stdout at all
  }
  return process.getBuiltinModule('node:tty').isatty(1);
}

const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

/** ANSI colours for the board: done green, in progress yellow, ready bold cyan, blocked dim. */
export const TERMINAL_STYLE: RenderStyle = {
  completed: sgr(32, 39),
  inProgress: sgr(33, 39),
  ready: (text) => sgr(1, 22)(sgr(36, 39)(text)),
  blocked: sgr(2, 22),
  muted: sgr(2, 22),
  problem: sgr(31, 39),
};

/** The style to render with for these options. */
export function styleFor(json: boolean | undefined): RenderStyle {
  return wantsColor(json) ? TERMINAL_STYLE : PLAIN_STYLE;
}
