import { describe, expect, it } from 'vitest';
import { printable, printableLines, printableTask } from './printable.js';
import { cutGraphemes } from './graphemes.js';
import * as read from '../read.js';

describe('printable', () => {
  it('shows controls and escape sequences escaped: OSC 2, OSC 52, CSI, C1', () => {
    expect(printable('a\u001b]2;PWNED\u0007b\u001b]52;c;UFdORUQ=\u001b\\c\u001b[2Jd\u009b6n\u007f\n\r\t')).toBe(
      'a\\x1b]2;PWNED\\x07b\\x1b]52;c;UFdORUQ=\\x1b\\c\\x1b[2Jd\\u009b6n\\x7f\\n\\r\\t',
    );
  });

  it('neutralises every bidi control by showing it escaped', () => {
    const bidi = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];
    for (const c of bidi) expect(printable(`x${c}y`)).toBe(`x\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}y`);
    // Right-to-left letters are text, not controls: they stay.
    expect(printable('עברית عربي')).toBe('עברית عربي');
  });

  it('shows invisible characters on their own escaped, keeps what sits on a letter or an emoji', () => {
    expect(printable('zero\u200bwidth\u2060join\ufeff\u00ad\u2028\u3164')).toBe('zero\\u200bwidth\\u2060join\\ufeff\\u00ad\\u2028\\u3164');
    expect(printable('\u0301lead')).toBe('\\u0301lead'); // a combining mark with no letter
    expect(printable('\ud800 lone')).toBe('\\ud800 lone');
    expect(printable('x\u{e0041}\u{e0042}')).toBe('x\\u{e0041}\\u{e0042}'); // tags hiding text
    for (const kept of [
      'cafe\u0301',
      'नमस्ते',
      '👨‍👩‍👧‍👦',
      '🇯🇵',
      '👍🏽',
      '❤️',
      '1️⃣',
      '🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}',
      'می\u200cخواهم',
      '漢字',
    ])
      expect(printable(kept), kept).toBe(kept);
  });

  it('printableLines keeps newlines and tabs', () => {
    expect(printableLines('one\r\n\ttwo\u001b[A\u202e')).toBe('one\\r\n\ttwo\\x1b[A\\u202e');
  });

  it('printableTask returns the task itself when nothing needs escaping, else a copy', () => {
    const clean = { subject: 'Parse AST', owner: 'ann', description: 'a\nb', notes: [{ at: 'x', owner: 'ann', text: 'ok' }] };
    expect(printableTask(clean)).toBe(clean);
    const hostile = { ...clean, subject: 'a\u202eb', notes: [{ at: 'x', owner: 'm\u001b', text: 'l1\nl2\u0007' }] };
    expect(printableTask(hostile)).toEqual({ ...clean, subject: 'a\\u202eb', notes: [{ at: 'x', owner: 'm\\x1b', text: 'l1\nl2\\x07' }] });
    expect(hostile.subject).toBe('a\u202eb');
  });

  it("is what the read entry exports, for the CLI's fast path", () => {
    expect(read.printable).toBe(printable);
  });
});

describe('cutGraphemes', () => {
  it('cuts to a length between grapheme clusters', () => {
    expect(cutGraphemes('abcdef', 4)).toBe('abc…');
    expect(cutGraphemes('ab👍🏽cd', 5)).toBe('ab…'); // the emoji takes four units: whole or not at all
    expect(cutGraphemes('abc', 3)).toBe('abc');
  });
});
