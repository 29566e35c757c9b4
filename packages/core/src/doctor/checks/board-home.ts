import type { DoctorCheck, Scan } from './check.js';

/**
 * A board kept in two places (docs/decisions.md, "Where a synced board
 * lives"): it syncs through its board branch and git also tracks its task
 * files on the code branch, so a checkout of an older commit would roll the
 * board back and the next sync would publish that (unless `git: false`).
 */
export const boardHome: DoctorCheck = {
  name: 'board home',
  codes: ['two_homes'],
  run({ store, options, findings, git }: Scan): void {
    if (options.git === false || !store.config.sync) return;
    const tracked = git.trackedBoardFiles();
    if (tracked.length === 0) return;
    findings.push({
      code: 'two_homes',
      file: store.dir,
      message: `the board syncs through ${store.config.syncRemote}/${store.config.syncBranch} ("sync": true in config.json), and ${tracked.length} of its files are also committed on the code branch: checking out an older commit would roll the board back`,
      fix: 'tasks sync --adopt (untracks them in one commit you can review)',
      fixable: false,
    });
  },
};
