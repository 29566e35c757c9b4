import { describe, expect, it } from 'vitest';
import { braceCount, globProblem, scopeProblem } from './glob-limits.js';
import { expandScope, scopesOverlap } from './scopes.js';

describe('glob limits', () => {
  it('passes the globs people write', () => {
    for (const glob of [
      'src/**',
      '**/*.test.ts',
      'packages/{a,b}/src/**',
      '*.{js,ts}',
      'src/[abc]*.ts',
      '!src/gen/**',
      'docs/parser.md',
      'src/{1..9}/x',
      '{a,b}{c,d}',
      'a/**/b/**/c',
      'src/*foo*bar*',
      './src/a/',
      '.github/**',
    ])
      expect(globProblem(glob), glob).toBeUndefined();
  });

  it('counts brace sets without expanding them', () => {
    expect(braceCount('src/{a,b,c}/{x,y}')).toBe(6);
    expect(braceCount('{1..10}')).toBe(10);
    expect(braceCount('{1..10..3}')).toBe(4);
    expect(braceCount('{a..e}')).toBe(5);
    expect(braceCount('{a,{b,c}}')).toBe(3);
    expect(braceCount('{a}')).toBe(1); // a set of one is literal
    expect(braceCount('\\{a,b}')).toBe(1); // escaped
    expect(braceCount('{a,b')).toBe(1); // never closed: literal
    expect(braceCount('src/{1..100000}')).toBe(Infinity);
    // Twenty sets of three would be 3.5 billion globs in memory; counting stops at the limit.
    expect(braceCount('{a,b,c}'.repeat(20))).toBe(Infinity);
    expect(braceCount('{1..99999999999999999999}')).toBe(Infinity);
  });

  it('refuses what leaves the repository, even through a brace set or an escape', () => {
    expect(globProblem('/etc/**')).toMatch(/^is absolute/);
    expect(globProblem('C:\\Users\\**')).toMatch(/^is absolute/);
    expect(globProblem('~/x')).toMatch(/^starts with ~/);
    expect(globProblem('../../**')).toMatch(/^climbs out/);
    expect(globProblem('src/../../x')).toMatch(/^climbs out/);
    expect(globProblem('{src,..}/x')).toMatch(/^climbs out/);
    expect(globProblem('{{..}}/x')).toBeUndefined(); // `{..}` is a literal name to micromatch, not a parent
    expect(globProblem('\\.\\./x')).toMatch(/^climbs out/);
    expect(globProblem('{x,/etc}/**')).toMatch(/^is absolute/);
    expect(globProblem('!../x')).toMatch(/^climbs out/);
    expect(globProblem('src/..x/y')).toBeUndefined();
  });

  it('refuses wildcards that make matching slow, repeated globstars, control characters and long globs', () => {
    expect(globProblem('src/*a*a*a*b')).toMatch(/more than 3 wildcards/);
    expect(globProblem('src/+(a)*a*a*b')).toMatch(/more than 3 wildcards/);
    expect(globProblem('src/{x,*a*a*a*b}')).toMatch(/more than 3 wildcards/);
    expect(globProblem('**/**/x')).toMatch(/repeats \*\*/);
    expect(globProblem('src/\u001b]2;x\u0007')).toMatch(/control character/);
    expect(globProblem('x'.repeat(501))).toMatch(/501 characters long/);
  });

  it('bounds a whole scope: its globs and their expansions together', () => {
    expect(scopeProblem(Array.from({ length: 100 }, (_, i) => `f${i}`))).toBeUndefined();
    expect(scopeProblem(Array.from({ length: 101 }, (_, i) => `f${i}`))?.reason).toMatch(/at most 100/);
    expect(scopeProblem(['{1..200}', '{1..56}'])).toBeUndefined();
    expect(scopeProblem(['{1..200}', '{1..57}'])).toEqual({ glob: '{1..57}', reason: expect.stringMatching(/past 256/) as string });
  });

  it('a scope past the limits overlaps nothing and takes no file: only its own claim is held back', () => {
    const files = ['src/1', 'src/2'];
    expect(scopesOverlap(['src/**'], ['src/{1..100000}'], files)).toBe(false);
    expect(expandScope(['{a,b,c}'.repeat(20)], files)).toEqual([]);
    expect(scopesOverlap(['src/**'], ['src/{1..9}'], files)).toBe(true);
  });
});
