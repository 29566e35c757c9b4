import type { DoctorCheck, Scan } from './check.js';

/** The git merge driver for task files, registered and named in .gitattributes (unless `git: false`). */
export const mergeDriver: DoctorCheck = {
  name: 'merge driver',
  codes: ['merge_driver'],
  run({ options, findings, git }: Scan): void {
    if (options.git !== false) {
      const driver = git.mergeDriver();
      if (driver.problem)
        findings.push({ code: 'merge_driver', file: driver.attributesFile, message: driver.problem, fix: driver.fix ?? 'tasks init --git', fixable: false });
    }
  },
};
