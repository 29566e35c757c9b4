import stringWidth from 'string-width';
import { graphemes } from './graphemes.js';

/**
 * The one width function for text on a terminal: how many cells it takes,
 * by grapheme cluster (Intl.Segmenter) and East Asian width: wide and
 * fullwidth characters 2, combining marks and zero-width characters 0, emoji
 * (presentation sequences, modifier and ZWJ sequences, flags, keycaps) 2. It
 * is string-width, which Ink measures and lays out the terminal board with:
 * a second opinion would make our truncation and Ink's layout disagree
 * (docs/decisions.md, "Terminal text"). Give it printable text (printable.ts):
 * escape sequences are not counted.
 */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/**
 * The text cut to at most `width` cells with an ellipsis, between grapheme
 * clusters (an accent stays on its letter, a flag or a family emoji is kept
 * or dropped whole); the text itself when it fits.
 */
export function fitWidth(text: string, width: number, ellipsis = '…'): string {
  if (width <= 0) return '';
  if (displayWidth(text) <= width) return text;
  const room = width - displayWidth(ellipsis);
  if (room < 0) return '';
  let out = '';
  let used = 0;
  for (const cluster of graphemes(text)) {
    const w = displayWidth(cluster);
    if (used + w > room) break;
    out += cluster;
    used += w;
  }
  return out + ellipsis;
}
