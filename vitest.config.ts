import { defineConfig } from 'vitest/config';
import SlowestFirst from './scripts/vitest-sequencer.js';

/**
 * CI, or output to a pipe or file: no live summary window. The default
 * reporter then prints one line per test file as it finishes, with its test
 * count and duration; a test gets a line of its own only when it fails or
 * takes over 10 s (at the default 300 ms almost every end-to-end test would),
 * and the run ends with the slowest files.
 */
const plainOutput = Boolean(process.env.CI) || !process.stdout.isTTY;

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'scripts/**/*.test.ts'],
    // The end-to-end tests spawn the built `tasks`; build once before any test runs.
    globalSetup: ['./scripts/vitest-global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // 2 cores, 3 files at a time: much of the end-to-end suite waits (stale locks, leases, polls), and a third
    // file fills those waits (the suite then keeps both cores busy); concurrency tests start their own processes.
    maxWorkers: 3,
    // The slowest files start first, also on a fresh checkout without vitest's timings (scripts/vitest-sequencer.ts).
    sequence: { sequencer: SlowestFirst },
    // `npm run coverage`: what the in-process tests reach (the end-to-end tests' own processes are not counted).
    coverage: { provider: 'v8', include: ['packages/*/src/**/*.ts'], exclude: ['**/*.test.ts', '**/*.d.ts'], reporter: ['text-summary'] },
    ...(plainOutput ? { reporters: ['default', './scripts/vitest-slowest-files.ts'], slowTestThreshold: 10_000 } : {}),
  },
});
