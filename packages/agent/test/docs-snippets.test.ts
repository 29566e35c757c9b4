import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const DOC = 'docs/agents-integration.md';
/** The SDKs the doc's snippets are written for: each must have one, and it must compile against that SDK's types. */
const SDKS = ['openai', '@anthropic-ai/sdk', 'ai', '@openai/agents'];

const snippets = [...readFileSync(join(root, DOC), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
// Inside the repository, so `dotasks` and the SDKs resolve from its node_modules as they would in a user's project.
const dir = mkdtempSync(join(root, 'packages/agent/test/.snippets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe(`the TypeScript snippets of ${DOC}`, () => {
  it('cover each SDK the doc names and import the tool from the installed package, dotasks', () => {
    const imported = snippets.map((s) => [...s.matchAll(/from '([^']+)'/g)].map((m) => m[1]));
    for (const sdk of SDKS)
      expect(
        imported.some((names) => names.includes(sdk)),
        sdk,
      ).toBe(true);
    for (const names of imported) {
      expect(names).toContain('dotasks');
      expect(names.filter((n) => n.startsWith('@dotasks/'))).toEqual([]);
    }
  });

  it('type-check against those SDKs with strict TypeScript', () => {
    snippets.forEach((text, i) => writeFileSync(join(dir, `snippet-${i + 1}.ts`), text));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        },
        include: ['*.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});
