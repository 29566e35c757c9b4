/**
 * A block of lines between two marker comments in a file a person also
 * edits (CLAUDE.md, AGENTS.md, GEMINI.md, .codex/config.toml): setup writes
 * only between its markers, so everything outside them keeps its bytes.
 */

/** The comment syntax of a file: how a marker line is written. */
export type CommentSyntax = 'markdown' | 'toml';

const BEGIN = 'BEGIN dotasks (tasks setup)';
const END = 'END dotasks';

function markerLine(syntax: CommentSyntax, word: string): string {
  return syntax === 'markdown' ? `<!-- ${word} -->` : `# ${word}`;
}

/** The markers of a block, for messages. */
export function markers(syntax: CommentSyntax): { begin: string; end: string } {
  return { begin: markerLine(syntax, BEGIN), end: markerLine(syntax, END) };
}

/** Where the block is in `text`: the offsets of its first and past its last line (newline included), and its body. */
export type Located = { found: false } | { found: true; start: number; end: number; body: string } | { found: 'broken'; message: string };

/** Finds the block: a begin marker line, then an end marker line. */
export function locateBlock(text: string, syntax: CommentSyntax): Located {
  const { begin, end } = markers(syntax);
  const lines = text.split('\n');
  let offset = 0;
  let start = -1;
  let bodyStart = -1;
  for (const line of lines) {
    const next = offset + line.length + 1;
    if (line.trim() === begin) {
      if (start >= 0) return { found: 'broken', message: `two '${begin}' lines` };
      start = offset;
      bodyStart = Math.min(next, text.length);
    } else if (line.trim() === end) {
      if (start < 0) return { found: 'broken', message: `'${end}' without '${begin}' before it` };
      return { found: true, start, end: Math.min(next, text.length), body: text.slice(bodyStart, offset) };
    }
    offset = next;
  }
  return start >= 0 ? { found: 'broken', message: `'${begin}' without '${end}' after it` } : { found: false };
}

/** The block as written: markers around `body` (which ends with a newline). */
export function renderBlock(syntax: CommentSyntax, body: string): string {
  const { begin, end } = markers(syntax);
  return `${begin}\n${body}${end}\n`;
}

/**
 * `text` with the block holding `body`: replaced where it is, else appended
 * after a blank line (a file that does not end with a newline gets one first).
 */
export function writeBlock(text: string, syntax: CommentSyntax, body: string): string {
  const located = locateBlock(text, syntax);
  const block = renderBlock(syntax, body);
  if (located.found === true) return text.slice(0, located.start) + block + text.slice(located.end);
  if (text === '') return block;
  const ended = text.endsWith('\n') ? text : `${text}\n`;
  return `${ended}\n${block}`;
}

/** `text` without the block and the blank line `writeBlock` put before it. */
export function removeBlock(text: string, syntax: CommentSyntax): string {
  const located = locateBlock(text, syntax);
  if (located.found !== true) return text;
  let before = text.slice(0, located.start);
  const after = text.slice(located.end);
  if (after === '' && before.endsWith('\n\n')) before = before.slice(0, -1);
  return before + after;
}
