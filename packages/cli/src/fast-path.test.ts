import { describe, expect, it } from 'vitest';
import { parseFast } from './fast-path.js';

describe('the fast path', () => {
  it.each([
    [['list'], {}],
    [['ls', '-a', '--json', '--status', 'pending', '--status=in_progress', '--dir', '/b'], { all: true, json: true, status: ['pending', 'in_progress'], dir: '/b' }],
    [['show', '#3', '--owner=ann'], { id: '#3', owner: 'ann' }],
    [['done', '3', '--force'], { id: '3', force: true }],
    [['start', '2', '--active-form', 'parsing'], { id: '2', activeForm: 'parsing' }],
    [['claim', '--next', '--lease', '60', '--pid', '42'], { next: true, lease: 60, pid: 42 }],
    [['heartbeat'], {}],
  ])('answers %j without yargs', (argv, args) => {
    expect(parseFast(argv)?.args).toEqual(args);
  });

  it.each([
    [['create', 'x']],
    [['list', '--help']],
    [['list', '-h']],
    [['done']],
    [['done', '1', '2']],
    [['claim', '3', '--worktree']],
    [['claim', '--lease', 'soon']],
    [['list', '--dir']],
    [['done', '1', '--owner', 'a', '--owner', 'b']],
    [['show', '1', '--', 'x']],
    [['list', '--frobnicate']],
  ])('leaves %j to yargs', (argv) => {
    expect(parseFast(argv)).toBeUndefined();
  });
});
