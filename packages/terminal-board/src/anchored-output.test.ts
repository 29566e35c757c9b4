import { createRequire } from 'node:module';
import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAnchor } from './anchored-output.js';

const CHA = (column: number) => `\u001b[${column}G`;

describe('createAnchor', () => {
  it('leaves plain text alone: ASCII, CJK, accented letters', () => {
    const frame = '┃  #1 plain ┃│\n┃  #2 漢字 café ┃│\n';
    expect(createAnchor()(frame)).toBe(frame);
  });

  it('after an emoji or a cluster of several code points, says where the next cell is (the column Ink meant)', () => {
    const anchor = createAnchor();
    // Until the cursor is put somewhere, its column is not known: nothing is added.
    expect(anchor('👍🏽 ok')).toBe('👍🏽 ok');
    // "┃  #5 " takes 6 cells from the cursor's home, 👍🏽 two: the next cell is the 9th.
    expect(anchor('\u001b[H┃  #5 👍🏽 ok┃\n')).toBe(`\u001b[H┃  #5 👍🏽${CHA(9)} ok┃\n`);
    expect(anchor('❤️x\n')).toBe(`❤️${CHA(3)}x\n`);
    expect(anchor('a👨‍👩‍👧‍👦🇯🇵b')).toBe(`a👨‍👩‍👧‍👦${CHA(4)}🇯🇵${CHA(6)}b`);
    expect(anchor('\ne\u0301!')).toBe(`\ne\u0301${CHA(2)}!`);
  });

  it('follows the column through the escape sequences Ink writes, and adds nothing where it lost it', () => {
    const anchor = createAnchor();
    // Styles between the emoji and the next cell: the anchor comes before the cell.
    expect(anchor('\u001b[2K\u001b[1A\u001b[Gab👍🏽\u001b[39m\u001b[1mc')).toBe(`\u001b[2K\u001b[1A\u001b[Gab👍🏽\u001b[39m\u001b[1m${CHA(5)}c`);
    // Cursor to column 10 (1-based), then an emoji: the next cell is the 12th.
    expect(anchor('\u001b[10G👍x')).toBe(`\u001b[10G👍${CHA(12)}x`);
    expect(anchor('\u001b[?25l\u001b[?2026h\u001b[3;4H👍x')).toBe(`\u001b[?25l\u001b[?2026h\u001b[3;4H👍${CHA(6)}x`);
    // Save and restore: the column is not known until a line starts.
    expect(anchor('\u001b7👍x\u001b8👍y\n👍z')).toBe(`\u001b7👍x\u001b8👍y\n👍${CHA(3)}z`);
    // An OSC sequence (our own: the task's are escaped before Ink sees them) moves nothing.
    expect(anchor('\u001b]8;;x\u0007👍z')).toBe(`\u001b]8;;x\u0007👍${CHA(6)}z`);
  });
});

describe('the width Ink lays out with', () => {
  it('is the string-width the core measures with: one module, so the board cuts where Ink measures', () => {
    const fromInk = createRequire(createRequire(import.meta.url).resolve('ink')).resolve('string-width');
    const fromCore = createRequire(createRequire(import.meta.url).resolve('@dotasks/core/terminal')).resolve('string-width');
    expect(realpathSync(fromInk)).toBe(realpathSync(fromCore));
  });
});
