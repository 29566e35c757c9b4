import type { Reporter, TestModule, Vitest } from 'vitest/node';

/** How many files the list names. */
const SHOWN = 10;

/**
 * Ends a run with its slowest test files, so the files worth splitting or
 * speeding up are named in every CI log. Used beside the default reporter,
 * which prints each file (with its duration) as it finishes.
 */
export default class SlowestFilesReporter implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const timed = testModules
      .map((m) => ({ file: m.relativeModuleId, ms: m.diagnostic().duration, tests: [...m.children.allTests()].length }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SHOWN);
    if (timed.length < 2) return;
    const lines = timed.map(({ file, ms, tests }) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file} (${tests} test${tests === 1 ? '' : 's'})`);
    const log = (text: string) => (this.vitest ? this.vitest.logger.log(text) : console.log(text));
    log(`\nSlowest test files (time in tests and hooks):\n${lines.join('\n')}`);
  }
}
