import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, longest first (seconds on the 2-core machine,
 * measured in a full run of `.ci/run` on a fresh clone). Vitest starts the longest files first when it has
 * their durations from an earlier run; a fresh checkout (CI) has none, and
 * vitest then starts the biggest files first, which put a 35-second file
 * among the last to start. Files not named here follow, in vitest's order.
 */
const SLOWEST: readonly string[] = [
  'packages/cli/test/e2e/sync.test.ts', // 65
  'packages/core/src/sync/remote-faults.test.ts', // 35
  'packages/cli/test/e2e/machines-remote.test.ts', // 34
  'packages/cli/test/e2e/machines-clocks.test.ts', // 31
  'packages/cli/test/e2e/clients-live.test.ts', // 29
  'packages/cli/test/e2e/board.test.ts', // 27
  'packages/cli/test/e2e/branches.test.ts', // 27
  'packages/cli/test/e2e/install.test.ts', // 10-35 (npm pack and install)
  'packages/cli/test/e2e/doctor.test.ts', // 26
  'packages/cli/test/e2e/machines-claim-refs.test.ts', // 26
  'packages/watch/test/watch.test.ts', // 25
  'packages/cli/test/e2e/workers.test.ts', // 25
  'packages/cli/test/e2e/machines-join.test.ts', // 20
  'packages/cli/test/e2e/one-writer.test.ts', // 20
  'packages/cli/test/e2e/hierarchy.test.ts', // 20
  'packages/cli/test/e2e/merge.test.ts', // 19
  'packages/cli/test/e2e/jobs.test.ts', // 19
  'packages/core/src/graph/board-size.test.ts', // 19
  'packages/cli/test/e2e/history.test.ts', // 16
  'packages/cli/test/e2e/review-workers.test.ts', // 14
  'packages/cli/test/e2e/board-tui.test.ts', // 14
  'packages/cli/test/e2e/messages.test.ts', // 13
  'packages/cli/test/e2e/scopes.test.ts', // 12
  'packages/cli/test/e2e/whole-board.test.ts', // 12
  'packages/cli/test/e2e/machines-review.test.ts', // 10
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
