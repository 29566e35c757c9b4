import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecord, type Task } from '../format/format.js';
import { encodeIndex } from './index-encode.js';
import type { IndexLine } from './index-file.js';
import { parseEntries, readIndex, readIndexHead } from './index-read.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function line(id: number, subject: string): IndexLine {
  const task: Task = { id, subject, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: createRecord() };
  return { id, status: 'pending', line: JSON.stringify([id, 1, 2, 3, 4, task]) };
}

describe('the index file', () => {
  it('names its open part exactly at every length, also where the header crosses a power of ten', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dotasks-index-file-'));
    dirs.push(dir);
    const file = join(dir, 'index');
    // Subjects of every length from 1 to 400 characters: the file's head passes 1,000 bytes on the way.
    for (let n = 1; n <= 400; n++) {
      const entries = [line(1, 'x'.repeat(n)), line(2, 'y')];
      writeFileSync(file, encodeIndex({ dir: null, hwm: 2, bad: [], stamp: null, git: null }, entries, { ref: null, holds: () => false }));
      const head = readIndexHead(file);
      expect(head?.open.size, `subject of ${n}`).toBe(2);
      const whole = readIndex(file);
      expect(whole && parseEntries(whole).items.map((i) => i[0]), `subject of ${n}`).toEqual([1, 2]);
    }
  });
});
