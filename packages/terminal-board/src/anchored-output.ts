import { displayWidth, graphemes } from '@dotasks/core/terminal';

/**
 * Ink lays a frame out with the width function (display-width.ts), and a
 * terminal draws it with its own, which for some clusters is another:
 * tmux 3.3 draws 👍🏽 in four cells (the hand, then the tone) and ❤️ in one,
 * xterm and VTE add up the code points of a ZWJ sequence, kitty and
 * iTerm2 draw them in two. No table is right for every terminal, so after
 * such a cluster the board says where the next cell is (CHA, `ESC [ n G`,
 * the column Ink meant): a cluster drawn wider or narrower shifts nothing
 * after it, and the columns of the board line up on every terminal
 * (docs/decisions.md, "Terminal text"). Plain text (ASCII, CJK, accented
 * letters, one code point of no emoji) needs no anchor.
 */

// A cluster whose width terminals disagree on: more than one code point (combining, modifier, ZWJ, variation, keycap, flag sequences) or an emoji.
const CONTESTED = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;

function isContested(cluster: string): boolean {
  return CONTESTED.test(cluster) || cluster.length > (cluster.codePointAt(0)! > 0xffff ? 2 : 1);
}

// An escape sequence: CSI (with its parameters), OSC and the like (up to BEL or ST), or ESC and one character.
const ESCAPE = /\u001b\[([0-?]*)[ -/]*([@-~])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[^[\]]/y;

/**
 * A writer's filter: text in, the same text with a CHA after each contested
 * cluster. It follows the cursor's column through the escape sequences Ink
 * and log-update write (cursor to column, erase, up, next line); after one
 * it cannot follow it adds nothing until the column is known again.
 */
export function createAnchor(): (chunk: string) => string {
  // The column Ink's frame is at (0-based), undefined when unknown; `pending`: a contested cluster was drawn since the last anchor.
  let column: number | undefined;
  let pending = false;
  const text = (run: string): string => {
    let out = '';
    for (const cluster of graphemes(run)) {
      if (cluster === '\n' || cluster === '\r' || cluster === '\r\n') {
        out += cluster;
        column = 0;
        pending = false;
        continue;
      }
      if (pending && column !== undefined) out += `\u001b[${column + 1}G`;
      pending = false;
      out += cluster;
      // Ink gives every cluster at least one cell (output.js: Math.max(1, stringWidth(character))).
      if (column !== undefined) column += Math.max(1, displayWidth(cluster));
      if (isContested(cluster)) pending = true;
    }
    return out;
  };
  // What an escape sequence does to the column; styles, erasing, modes and moving up or down leave it (and an anchor still owed).
  const escape = (params: string | undefined, final: string | undefined) => {
    if (params?.startsWith('?') || (final !== undefined && 'mKJABSTX'.includes(final))) return;
    const numbers = (params ?? '').split(';').map((p) => (p === '' ? undefined : Number(p)));
    const n = numbers[0] ?? 1;
    if (final === 'G') column = n - 1;
    else if (final === 'E' || final === 'F' || final === 'r') column = 0;
    else if (final === 'C' && column !== undefined) column += n;
    else if (final === 'D' && column !== undefined) column = Math.max(0, column - n);
    else if (final === 'H' || final === 'f') column = (numbers[1] ?? 1) - 1;
    else column = undefined; // ESC 7 and 8, save and restore, anything else: not followed
    pending = false;
  };
  return (chunk) => {
    let out = '';
    let at = 0;
    while (at < chunk.length) {
      const esc = chunk.indexOf('\u001b', at);
      const end = esc === -1 ? chunk.length : esc;
      if (end > at) out += text(chunk.slice(at, end));
      if (esc === -1) break;
      ESCAPE.lastIndex = esc;
      const match = ESCAPE.exec(chunk);
      if (!match) {
        // A sequence cut at the end of the write: passed on, the column no longer known.
        out += chunk.slice(esc);
        column = undefined;
        break;
      }
      out += match[0];
      if (match[0][1] === '[') escape(match[1], match[2]);
      else if (match[0][1] !== ']') escape(undefined, undefined);
      at = esc + match[0].length;
    }
    return out;
  };
}

/**
 * Sends what is written to the stream through createAnchor until the
 * returned function is called (the board's terminal, for as long as Ink
 * draws on it).
 */
export function anchorWrites(stream: NodeJS.WriteStream): () => void {
  const anchor = createAnchor();
  const write = stream.write;
  stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
    return (write as (...args: unknown[]) => boolean).call(this, typeof chunk === 'string' ? anchor(chunk) : chunk, ...rest);
  } as typeof stream.write;
  return () => {
    stream.write = write;
  };
}
