import { describe, expect, it } from 'vitest';
import stringWidth from 'string-width';
import { displayWidth, fitWidth } from './display-width.js';
import { printable } from './printable.js';
import * as terminal from '../terminal.js';

describe('displayWidth', () => {
  it('counts cells by grapheme cluster and East Asian width', () => {
    const widths: [string, number][] = [
      ['abc', 3],
      ['漢字', 4],
      ['Ａ', 2], // fullwidth
      ['ｱ', 1], // halfwidth
      ['cafe\u0301', 4], // combining
      ['a\u200bb', 2], // zero-width
      ['👨‍👩‍👧‍👦', 2], // ZWJ sequence
      ['🇯🇵', 2], // flag
      ['👍🏽', 2], // skin tone
      ['❤️', 2], // emoji presentation
      ['1️⃣', 2], // keycap
      ['가', 2],
      ['عربي', 4],
    ];
    expect(widths.map(([text]) => [text, displayWidth(text)])).toEqual(widths);
  });

  it('is what Ink measures with (string-width), on the board texts that matter', () => {
    for (const text of ['漢字', '👨‍👩‍👧‍👦 ok', '🇯🇵🇫🇷', '👍🏽👋🏿', '❤️', 'cafe\u0301', 'zero\\u200bwidth']) expect(displayWidth(text)).toBe(stringWidth(text));
  });
});

describe('fitWidth', () => {
  it('cuts between grapheme clusters, never inside one, to at most the width', () => {
    expect(fitWidth('ab👨‍👩‍👧‍👦cd', 4)).toBe('ab…');
    expect(fitWidth('ab👨‍👩‍👧‍👦cd', 5)).toBe('ab👨‍👩‍👧‍👦…');
    expect(fitWidth('🇯🇵🇫🇷🇩🇪', 5)).toBe('🇯🇵🇫🇷…');
    expect(fitWidth('e\u0301e\u0301e\u0301e\u0301', 3)).toBe('e\u0301e\u0301…');
    expect(fitWidth('漢字のタスク', 7)).toBe('漢字の…');
    expect(fitWidth('short', 5)).toBe('short');
    expect(fitWidth('anything', 0)).toBe('');
    for (let width = 1; width < 12; width++) expect(displayWidth(fitWidth('x漢👍🏽e\u0301🇯🇵y', width))).toBeLessThanOrEqual(width);
  });
});

describe('the terminal entry', () => {
  it('holds the one sanitizer and the one width function', () => {
    expect(terminal.printable).toBe(printable);
    expect(terminal.displayWidth).toBe(displayWidth);
    expect(terminal.fitWidth).toBe(fitWidth);
  });
});
