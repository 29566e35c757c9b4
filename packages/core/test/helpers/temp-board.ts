// The core's tests' temp board, one helper for every test file (execa's
// test/helpers/ is the model): a fresh folder under the OS temp folder
// holding an initialised `.tasks/`, removed when the test that made it
// finishes, pass or fail.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { TaskStore } from '../../src/store.js';

export interface TempBoard {
  /** The temp folder (real path), the board's parent. */
  root: string;
  /** The board folder, `root/.tasks`. */
  dir: string;
  store: TaskStore;
}

/** A new board in a temp folder named `prefix…`, removed after the current test. */
export function tempBoard(prefix = 'dotasks-core-'): TempBoard {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  const dir = join(root, '.tasks');
  return { root, dir, store: TaskStore.init(dir) };
}
