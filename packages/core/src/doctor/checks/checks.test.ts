import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FindingCode } from '../doctor.js';
import type { DoctorCheck } from './check.js';
import { DOCTOR_CHECKS, FINDING_ORDER } from './index.js';

// Every FindingCode, once: the compiler refuses this object when a code is
// added to the type and not here (and so, by the test below, not to a check).
const ALL_CODES: Record<FindingCode, true> = {
  invalid_json: true,
  merge_conflict: true,
  invalid_field: true,
  bad_file_name: true,
  id_mismatch: true,
  duplicate_id: true,
  string_id: true,
  one_sided_edge: true,
  missing_task: true,
  cycle: true,
  parent_cycle: true,
  missing_parent: true,
  completed_parent_open_children: true,
  closed_blocker: true,
  one_sided_link: true,
  bad_link: true,
  non_canonical: true,
  highwatermark: true,
  stale_lock: true,
  expired_lease: true,
  temp_file: true,
  merge_driver: true,
  untracked_claim: true,
  not_a_file: true,
  unfinished_change: true,
  two_homes: true,
  id_clash: true,
  bad_scope: true,
};

const dir = fileURLToPath(new URL('./', import.meta.url));
/** The finding codes a source file names as literals: `code: 'x'` and `push('x', …)`. */
function codesIn(source: string): string[] {
  return [...source.matchAll(/(?:code:\s*|push\(\s*)'([a-z_]+)'/g)].map((m) => m[1]);
}

describe('the checks of doctor', () => {
  it('give every finding code exactly one place in the order', () => {
    expect([...FINDING_ORDER].sort()).toEqual(Object.keys(ALL_CODES).sort());
    expect(new Set(FINDING_ORDER).size).toBe(FINDING_ORDER.length);
  });

  it('declare every code they can emit', async () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'check.ts' && f !== 'index.ts');
    expect(files.length).toBe(DOCTOR_CHECKS.length);
    for (const file of files) {
      // The name is computed, so vite cannot see it coming; vitest still resolves it at run time.
      const module = (await import(/* @vite-ignore */ `./${file.replace(/\.ts$/, '.js')}`)) as Record<string, unknown>;
      const checks = Object.values(module).filter((v): v is DoctorCheck => DOCTOR_CHECKS.includes(v as DoctorCheck));
      expect(checks.length, `${file} exports a check of DOCTOR_CHECKS`).toBeGreaterThan(0);
      const declared = new Set(checks.flatMap((c) => c.codes));
      const emitted = codesIn(readFileSync(`${dir}${file}`, 'utf8'));
      expect(emitted.length, file).toBeGreaterThan(0);
      for (const code of emitted) expect(declared.has(code as FindingCode), `${file} emits ${code}`).toBe(true);
    }
  });

  it('doctor itself names only codes in the order (its repairs and planned writes)', () => {
    for (const code of codesIn(readFileSync(`${dir}../doctor.ts`, 'utf8'))) expect(FINDING_ORDER, code).toContain(code);
  });

  it('list findings that can share a spot in the order they always had', () => {
    const before = (a: FindingCode, b: FindingCode) => expect(FINDING_ORDER.indexOf(a), `${a} before ${b}`).toBeLessThan(FINDING_ORDER.indexOf(b));
    before('merge_conflict', 'invalid_json');
    before('bad_file_name', 'not_a_file'); // both on a misnamed folder, without a position
    before('id_mismatch', 'duplicate_id'); // both at the "id" key
    before('missing_task', 'cycle'); // graph findings at one edge key
    before('cycle', 'one_sided_edge');
    before('one_sided_edge', 'closed_blocker');
    before('closed_blocker', 'non_canonical');
  });
});
