import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first (seconds on the 2-core machine,
 * measured in a full run). Vitest starts the longest files first when it has
 * their durations from an earlier run; a fresh checkout (CI) has none, and
 * vitest then starts the biggest files first, which put a 35-second file
 * among the last to start. Files not named here follow, in vitest's order.
 */
const SLOWEST: readonly string[] = [
  'packages/cli/test/e2e/sync.test.ts', // 75
  'packages/cli/test/e2e/workers.test.ts', // 40
  'packages/watch/test/watch.test.ts', // 40
  'packages/cli/test/e2e/one-writer.test.ts', // 35
  'packages/cli/test/e2e/install.test.ts', // 10-35 (npm pack and install)
  'packages/cli/test/e2e/doctor.test.ts', // 30
  'packages/cli/test/e2e/board.test.ts', // 30
  'packages/cli/test/e2e/jobs.test.ts', // 20
  'packages/cli/test/e2e/claims.test.ts', // 20
  'packages/cli/test/e2e/graph.test.ts', // 18
];

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root.replace(/\/?$/, '/');
    const rank = (spec: TestSpecification) => {
      const at = SLOWEST.indexOf(spec.moduleId.startsWith(root) ? spec.moduleId.slice(root.length) : spec.moduleId);
      return at < 0 ? SLOWEST.length : at;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
