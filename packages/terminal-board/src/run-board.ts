import type { TaskStore } from '@dotasks/core';
import { anchorWrites } from './anchored-output.js';
import { createBoardSource } from './board-source.js';
import type { BoardActions } from './board-view.js';

/** Options for runBoard. */
export interface RunBoardOptions {
  store: TaskStore;
  actions: BoardActions;
  /** The acting owner, for the header. */
  owner: string;
  /** Colours on (false under NO_COLOR). */
  color: boolean;
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
}

// The alternate screen: the board takes the whole terminal and gives the
// scroll-back back as it was when it quits, as less and top do.
const ENTER_ALT_SCREEN = '\u001b[?1049h\u001b[H';
const LEAVE_ALT_SCREEN = '\u001b[?1049l';

/**
 * Ink decides once, when it is first imported, whether it runs "in CI"
 * (CI or CONTINUOUS_INTEGRATION set), and then draws only the last frame and
 * ignores resizes. The board runs only on a terminal, where a live view is
 * what was asked for, so Ink is loaded with those two variables hidden.
 */
async function importInk(): Promise<typeof import('ink')> {
  const saved = { CI: process.env.CI, CONTINUOUS_INTEGRATION: process.env.CONTINUOUS_INTEGRATION };
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  try {
    return await import('ink');
  } finally {
    for (const [key, value] of Object.entries(saved)) if (value !== undefined) process.env[key] = value;
  }
}

/**
 * Shows the live board full-screen until `q` (or Ctrl-C); resolves once the
 * terminal is given back, with the signal that ended it (SIGTERM, SIGHUP) if one did.
 */
export async function runBoard(options: RunBoardOptions): Promise<NodeJS.Signals | undefined> {
  const stdout = options.stdout ?? process.stdout;
  const stdin = options.stdin ?? process.stdin;
  const { render } = await importInk();
  const { createElement } = await import('react');
  const { BoardApp } = await import('./board-view.js');
  const source = createBoardSource(options.store);
  // From the cursor's home on, every frame is anchored (anchored-output.ts), so a terminal's own emoji widths shift no column.
  const unanchor = anchorWrites(stdout);
  stdout.write(ENTER_ALT_SCREEN);
  try {
    const props = {
      source,
      actions: options.actions,
      owner: options.owner,
      boardDir: options.store.dir,
      color: options.color,
      reviewLane: options.store.config.review,
    };
    const app = render(createElement(BoardApp, props), {
      stdout,
      stdin,
      exitOnCtrlC: true,
      patchConsole: true,
    });
    // A signal unmounts like `q` does, so the terminal leaves the alternate screen and raw mode either way.
    let signal: NodeJS.Signals | undefined;
    const onSignal = (name: NodeJS.Signals) => {
      signal ??= name;
      app.unmount();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGHUP', onSignal);
    try {
      await app.waitUntilExit();
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGHUP', onSignal);
    }
    return signal;
  } finally {
    unanchor();
    stdout.write(LEAVE_ALT_SCREEN);
    await source.close();
  }
}
