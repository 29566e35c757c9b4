import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENTS_FILE, loggedEventsOfTx, readLastSeq } from './events.js';

// The log read back from its end (readLastSeq, loggedEventsOfTx): lines longer than a read, lines cut where a read
// starts (inside a character of several bytes too), a torn last line and a missing log.
let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function log(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'dotasks-events-'));
  dirs.push(dir);
  writeFileSync(join(dir, EVENTS_FILE), lines.join(''));
  return join(dir, EVENTS_FILE);
}

const line = (seq: number, fields: Record<string, unknown> = {}) => JSON.stringify({ seq, at: '2025-01-01T00:00:00.000Z', type: 'updated', ...fields }) + '\n';

describe('the event log read from its end', () => {
  it('finds the last seq past a torn last line and a line longer than any read', () => {
    expect(readLastSeq(join(tmpdir(), 'dotasks-no-such-log', EVENTS_FILE))).toBe(0);
    const long = 'é'.repeat(50_000); // 100 KB of two-byte characters: reads start inside them
    expect(readLastSeq(log([line(1), line(2, { note: long }), '{"seq": 3, "at": "2025-01-01T0']))).toBe(2);
    expect(readLastSeq(log([line(1), line(2, { note: long }), line(3), '\n\n']))).toBe(3);
    expect(readLastSeq(log(['not json\n', '{"seq": "x"}\n']))).toBe(0);
  });

  it("counts a transaction's events back to its time, whatever their length", () => {
    const long = 'é'.repeat(50_000);
    const old = { at: '2024-01-01T00:00:00.000Z' };
    const file = log([
      line(1, { tx: 'a', ...old }),
      line(2, { tx: 'b', ...old }),
      line(3, { tx: 'a', note: long }),
      line(4),
      line(5, { tx: 'a', type: 'recovered' }),
      line(6, { tx: 'a' }),
    ]);
    const runtime = join(file, '..');
    expect(loggedEventsOfTx(runtime, 'a', '2025-01-01T00:00:00.000Z')).toBe(2);
    expect(loggedEventsOfTx(runtime, 'a', '2024-01-01T00:00:30.000Z')).toBe(3);
    expect(loggedEventsOfTx(runtime, 'c', '2025-01-01T00:00:00.000Z')).toBe(0);
  });
});
