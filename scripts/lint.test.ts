import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The lint's docs check, run as `npm run lint` runs it, on a small tree of its
// own: clean as written, and each reference broken in turn is refused with
// the file, the line and what is missing.
const LINT = fileURLToPath(new URL('./lint.mjs', import.meta.url));

const TREE: Record<string, string> = {
  'README.md': ['# Demo', '', 'Read [the guide](docs/guide.md#writes-atomic-locked-never-lost), then `docs/guide.md:3`.', ''].join('\n'),
  'CHANGELOG.md': '# Changelog\n\n- Locks start over when two take a stale one (proper-lockfile #121).\n',
  'docs/guide.md': [
    '# Guide',
    '',
    '## Writes: atomic, locked, never lost',
    '',
    '## `tasks board`',
    '',
    "## The web board's edges",
    '',
    '## Imports that cannot be turned against the board (items 7–9)',
    '',
    '## Usage',
    '',
    '**One writer for every change.** A decision opens with its bold words.',
    '',
    '## Usage',
    '',
    '```sh',
    '# not a heading',
    '```',
    '',
    // Headings slugged as GitHub slugs them: markup and punctuation dropped, a repeat numbered.
    'Back to [the top](#guide), [the board](#tasks-board), [its edges](#the-web-boards-edges),',
    '[imports](#imports-that-cannot-be-turned-against-the-board-items-79), the [second usage](#usage-1) and [the readme](../README.md).',
    '',
  ].join('\n'),
  'packages/demo/README.md': '# demo\n\nSee [usage](../../docs/guide.md#usage) and `packages/demo/src/index.ts`.\n',
  'packages/demo/src/index.ts': "// Task #3 (#3) is a task id here, not a tracker's number.\nexport const demo = 1;\n",
  'scripts/tool.mjs': [
    '// Writes what `docs/guide.md#usage` describes ([guide](../docs/guide.md)),',
    '// atomically (docs/guide.md, "Writes"), with one writer (docs/guide.md,',
    '// "One writer for every change").',
    'export {};',
    '',
  ].join('\n'),
  'docs/other.md': '# Other\n\nAs guide.md, "Usage" says.\n',
};

function lint(changes: Record<string, string>): { code: number | null; output: string } {
  const root = mkdtempSync(join(tmpdir(), 'dotasks-lint-'));
  roots.push(root);
  for (const [path, text] of Object.entries({ ...TREE, ...changes })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const r = spawnSync(process.execPath, [LINT, root], { encoding: 'utf8' });
  return { code: r.status, output: r.stderr + r.stdout };
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('the lint: docs that cite only what exists', () => {
  it('passes the tree as written', () => {
    expect(lint({})).toEqual({ code: 0, output: 'lint: clean\n' });
  });

  const broken: [string, Record<string, string>, string][] = [
    [
      'a link to a missing file',
      { 'README.md': 'See [gone](docs/gone.md).\n' },
      'README.md:1: the link to docs/gone.md names a file that does not exist (docs/gone.md)',
    ],
    [
      'a link to a missing heading',
      { 'README.md': 'See [it](docs/guide.md#claims).\n' },
      'README.md:1: the link to docs/guide.md#claims: docs/guide.md has no heading #claims',
    ],
    [
      'a link to a "heading" inside a code block',
      { 'README.md': '\n\nSee [it](docs/guide.md#not-a-heading).\n' },
      'README.md:3: the link to docs/guide.md#not-a-heading: docs/guide.md has no heading #not-a-heading',
    ],
    [
      'a link from a package README',
      { 'packages/demo/README.md': 'See [it](../docs/guide.md).\n' },
      'packages/demo/README.md:1: the link to ../docs/guide.md names a file that does not exist (packages/docs/guide.md)',
    ],
    [
      'a missing path in backticks',
      { 'docs/extra.md': 'Pinned by `packages/demo/src/gone.test.ts`.\n' },
      'docs/extra.md:1: `packages/demo/src/gone.test.ts` names a file that does not exist',
    ],
    ['a line past the end', { 'docs/extra.md': 'As `docs/guide.md:99` says.\n' }, 'docs/extra.md:1: `docs/guide.md:99`: docs/guide.md has no line 99'],
    [
      'a missing path in a script comment',
      { 'scripts/tool.mjs': 'export {}; // see `scripts/gone.mjs`\n' },
      'scripts/tool.mjs:1: `scripts/gone.mjs` names a file that does not exist',
    ],
    [
      'a missing anchor in a script comment',
      { 'scripts/tool.mjs': '/* see `docs/guide.md#claims` */\n' },
      'scripts/tool.mjs:1: `docs/guide.md#claims`: docs/guide.md has no heading #claims',
    ],
    [
      'a section cited by a name it does not have',
      { 'docs/extra.md': 'Claims are exclusive (docs/guide.md, "Claims").\n' },
      'docs/extra.md:1: docs/guide.md, "Claims": docs/guide.md has no section of that name',
    ],
    [
      'a wrapped section name in a block comment',
      { 'scripts/tool.mjs': '/**\n * Writes (docs/guide.md, "Writes\n * first")\n */\n' },
      'scripts/tool.mjs:2: docs/guide.md, "Writes first": docs/guide.md has no section of that name',
    ],
    ['a section of a missing file', { 'docs/extra.md': 'See claims.md, "Claims".\n' }, 'docs/extra.md:1: claims.md, "Claims" cites a file that does not exist'],
    ["a tracker's number in the changelog", { 'CHANGELOG.md': '- Fixed the lock (see Issue 12).\n' }, 'CHANGELOG.md:1: "Issue 12" cites an issue tracker'],
    ['a bare number in parentheses in the docs', { 'docs/extra.md': 'Locks start over (#121).\n' }, 'docs/extra.md:1: "(#121)" cites an issue tracker'],
    [
      "a tracker's number in a test name",
      { 'packages/demo/src/demo.test.ts': "it('claims once (PR #7)', () => {});\n" },
      'packages/demo/src/demo.test.ts:1: "PR #7" cites an issue tracker',
    ],
  ];
  for (const [what, changes, message] of broken)
    it(`refuses ${what}`, () => {
      const r = lint(changes);
      expect(r.code).toBe(1);
      expect(r.output).toContain(message);
      expect(r.output).toContain('1 problem(s)');
    });
});

describe('the lint: files that fit in a head', () => {
  const lines = (n: number) => 'export const a = 1;\n'.repeat(n);

  it('refuses a source file over 500 lines, and lets its tests and the named tables be longer', () => {
    expect(lint({ 'packages/demo/src/long.ts': lines(500), 'packages/demo/src/long.test.ts': lines(900) })).toEqual({ code: 0, output: 'lint: clean\n' });
    expect(lint({ 'packages/cli/src/command-table.ts': lines(900) })).toEqual({ code: 0, output: 'lint: clean\n' });
    const r = lint({ 'packages/demo/src/long.ts': lines(501) });
    expect(r.code).toBe(1);
    expect(r.output).toContain('packages/demo/src/long.ts: 501 lines; cut it along its seams into files of at most 500');
    expect(r.output).toContain('1 problem(s)');
  });

  it('refuses a named table that is no longer long, so the list of exceptions stays true', () => {
    const r = lint({ 'packages/cli/src/command-table.ts': lines(20) });
    expect(r.code).toBe(1);
    expect(r.output).toContain('packages/cli/src/command-table.ts: 20 lines, no longer over 500: take it off LONG_FILES in scripts/lint.mjs');
  });
});
