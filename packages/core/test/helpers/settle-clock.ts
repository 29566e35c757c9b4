// Waiting for the file system's clock: the board index trusts a file's
// identity only once its ctime is older than a clock reading taken before the
// file was looked at (as git does with racily clean entries), so a test that
// wants an entry trusted first waits until the clock has moved past them.
import { readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, vi } from 'vitest';

/** Waits until a new file in `probeDir` gets a ctime newer than the folder `dir` and every entry in it. */
export async function settleClock(probeDir: string, dir: string): Promise<void> {
  const newest = Math.max(statSync(dir).ctimeMs, ...readdirSync(dir).map((n) => statSync(join(dir, n)).ctimeMs));
  const probe = join(probeDir, 'clock-probe');
  await vi.waitFor(
    () => {
      writeFileSync(probe, '');
      const now = statSync(probe).ctimeMs;
      unlinkSync(probe);
      expect(now).toBeGreaterThan(newest);
    },
    { timeout: 5000, interval: 2 },
  );
}
