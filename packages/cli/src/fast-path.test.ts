import { describe, expect, it } from 'vitest';
import { checkArgs } from './command-table.js';
import { parseFast } from './fast-path.js';

describe('the fast path', () => {
  it.each([
    [['list'], {}],
    [
      ['ls', '-a', '--json', '--status', 'pending', '--status=in_progress', '--dir', '/b'],
      { all: true, json: true, status: ['pending', 'in_progress'], dir: '/b' },
    ],
    [['show', '#3', '--owner=ann'], { id: '#3', owner: 'ann' }],
    [['done', '3', '--force'], { id: '3', force: true }],
    [['start', '2', '--active-form', 'parsing'], { id: '2', activeForm: 'parsing' }],
    [['claim', '--next', '--lease', '60', '--pid', '42'], { next: true, lease: 60, pid: 42 }],
    [['heartbeat'], {}],
    [['ready', '--status', 'pending', '-a', '--filter-owner', 'ann'], { status: ['pending'], all: true, filterOwner: 'ann' }],
    [['claim', '3', '--worktree'], { id: '3', worktree: true }],
    [['create', 'x', '--blocked-by', '1,2'], { subject: 'x', blockedBy: ['1,2'] }],
    [['note', '3', 'the', 'parser', '--stdin'], { id: '3', text: ['the', 'parser'], stdin: true }],
    [['note', '3', '--', '--force', 'is', 'wrong'], { id: '3', text: ['--force', 'is', 'wrong'] }],
    // The last of a repeated option wins, as in yargs (duplicate-arguments-array off).
    [['done', '1', '--owner', 'a', '--owner', 'b'], { id: '1', owner: 'b' }],
  ])('answers %j without yargs', (argv, args) => {
    expect(parseFast(argv)?.args).toEqual(args);
  });

  it.each([
    [['watch']],
    [['run', '3', '--', 'make', 'test']],
    [['note', '3', '--', '--help']],
    [['list', '--help']],
    [['list', '-h']],
    [['done']],
    [['done', '1', '2']],
    [['list', '--dir']],
    [['claim', '--next', 'true']],
    [['show', '1', '--', 'x']],
    [['list', '--frobnicate']],
  ])('leaves %j to yargs', (argv) => {
    expect(parseFast(argv)).toBeUndefined();
  });

  it('reads a number that is not one as NaN, which checkArgs refuses, as yargs does', () => {
    const fast = parseFast(['claim', '--lease', 'soon'])!;
    expect(fast.args).toEqual({ lease: NaN });
    expect(checkArgs(fast.spec, fast.args)).toBe('--lease takes a positive number of seconds');
  });
});
