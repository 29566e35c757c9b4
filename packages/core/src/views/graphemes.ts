/** Grapheme clusters (what a reader sees as one character), through Intl.Segmenter; no width tables, so the read path can load it. */

let segmenter: Intl.Segmenter | undefined;

/** The grapheme clusters of a text, in order. */
export function* graphemes(text: string): Generator<string> {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of segmenter.segment(text)) yield segment;
}

/**
 * The text cut to at most `length` UTF-16 units, the ellipsis included,
 * between grapheme clusters (an accent stays on its letter, an emoji is kept
 * or dropped whole); the text itself when it is not longer. For limits of a
 * format; a limit on the screen is fitWidth's (display-width.ts).
 */
export function cutGraphemes(text: string, length: number, ellipsis = '…'): string {
  if (text.length <= length) return text;
  let out = '';
  for (const cluster of graphemes(text)) {
    if (out.length + cluster.length + ellipsis.length > length) break;
    out += cluster;
  }
  return out + ellipsis;
}
