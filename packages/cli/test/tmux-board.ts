import { spawnSync } from 'node:child_process';
import { vi } from 'vitest';
import { TASKS_BIN, cleanEnv } from './helpers.js';

/**
 * `tasks board` through a real pseudo-terminal, for the tests that drive it:
 * tmux runs it on a server of the test's own (-L), the test types with
 * send-keys and reads the screen with capture-pane.
 *
 * A frame of the board is larger than what tmux reads from the terminal at
 * once, so a capture can hold a frame that is still being drawn: the lines
 * above as new, the lines below erased. Every wait here therefore also waits
 * for the frame's last line (the key line, never empty) before the check, so
 * what a test asserts after a wait is a whole frame.
 */

export const hasTmux = spawnSync('tmux', ['-V']).status === 0;

export interface TmuxBoards {
  tmux(...args: string[]): string;
  /** Starts `tasks board` in session `name`; after it exits the pane says `board exited N`. */
  start(name: string, board: string, owner: string, size?: { width?: number; height?: number }): void;
  /** What the pane shows now, drawn or not. */
  screen(name: string): string;
  /** Waits until a whole frame (or the shell after the board) passes `check`, which throws until then; returns that screen. */
  screenWhere(name: string, check: (text: string) => void, timeout?: number): Promise<string>;
  /** Ends the tmux server and every board in it. */
  killServer(): void;
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/** Boards on tmux server `socket` of `width` × `height` cells unless a start says otherwise. */
export function tmuxBoards(socket: string, defaults: { width: number; height: number }): TmuxBoards {
  const tmux = (...args: string[]): string => {
    const r = spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env: cleanEnv() });
    if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const screen = (name: string) => tmux('capture-pane', '-p', '-t', name);
  // The board's frame is one row shorter than the pane (the cursor's row is the last): its key line is the pane's last row but one.
  const wholeFrame = (name: string, text: string): boolean => {
    if (text.includes('board exited')) return true;
    const rows = Number(tmux('display-message', '-p', '-t', name, '#{pane_height}').trim());
    return (text.split('\n')[rows - 2] ?? '').trim() !== '';
  };
  return {
    tmux,
    screen,
    start(name, board, owner, size = {}) {
      const command = `${quote(process.execPath)} ${quote(TASKS_BIN)} board --dir ${quote(board)}; echo "board exited $?"; sleep 600`;
      const width = String(size.width ?? defaults.width);
      const height = String(size.height ?? defaults.height);
      tmux('new-session', '-d', '-s', name, '-x', width, '-y', height, '-e', `TASKS_OWNER=${owner}`, '-e', 'NO_COLOR=1', command);
    },
    screenWhere(name, check, timeout = 10_000) {
      return vi.waitFor(
        () => {
          const text = screen(name);
          if (!wholeFrame(name, text)) throw new Error(`the frame on ${name} is still being drawn:\n${text}`);
          check(text);
          return text;
        },
        { timeout, interval: 20 },
      );
    },
    killServer() {
      spawnSync('tmux', ['-L', socket, 'kill-server'], { env: cleanEnv() });
    },
  };
}

/** The text of each column, found by slicing the screen where the column titles are. */
export function columnsOf<T extends string>(text: string, titles: readonly T[]): Record<T, string> {
  const lines = text.split('\n');
  const titleLine = lines.find((l) => l.includes('Ready (')) ?? '';
  const starts = titles.map((t) => titleLine.indexOf(`${t} (`) - 1);
  const out = {} as Record<T, string>;
  titles.forEach((title, i) => {
    const end = i + 1 < starts.length ? starts[i + 1] : undefined;
    out[title] = lines.map((l) => l.slice(starts[i], end)).join('\n');
  });
  return out;
}
