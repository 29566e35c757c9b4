import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // The end-to-end tests spawn the built `tasks`; build once before any test runs.
    globalSetup: ['./scripts/vitest-global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // 2 cores: concurrency tests start many real processes themselves.
    maxWorkers: 2,
  },
});
