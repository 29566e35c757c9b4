/**
 * What doctor says: the kinds of finding (stable codes, for `--json`), a
 * finding and a repair, what a scan is asked (DoctorOptions) and what it
 * reports. The checks (checks/) and doctor.ts both read these; the checks
 * import nothing else of doctor.ts, so no import circles back.
 */
import type { PendingReconcile } from '../git/branch-reconcile.js';
import type { GitAnswers } from './git-answers.js';

/** What kind of problem a finding is; stable, for `--json`. */
export type FindingCode =
  | 'invalid_json'
  | 'merge_conflict'
  | 'invalid_field'
  | 'bad_file_name'
  | 'id_mismatch'
  | 'duplicate_id'
  | 'string_id'
  | 'one_sided_edge'
  | 'missing_task'
  | 'cycle'
  | 'closed_blocker'
  | 'one_sided_link'
  | 'bad_link'
  | 'parent_cycle'
  | 'missing_parent'
  | 'completed_parent_open_children'
  | 'non_canonical'
  | 'highwatermark'
  | 'stale_lock'
  | 'expired_lease'
  | 'temp_file'
  | 'merge_driver'
  | 'untracked_claim'
  | 'not_a_file'
  | 'unfinished_change'
  | 'two_homes'
  | 'id_clash'
  | 'bad_scope';

/** One problem: where it is, what is wrong, and one line that says how to fix it. */
export interface DoctorFinding {
  code: FindingCode;
  /** Absolute path of the file concerned, when there is one. */
  file?: string;
  line?: number;
  column?: number;
  /** The task the finding is about. */
  task?: number;
  /** For cycles: the ids in order, first == last. */
  cycle?: number[];
  message: string;
  /** One line: what to do about it. */
  fix: string;
  /** True when `tasks doctor --fix` repairs it. */
  fixable: boolean;
}

/** One repair `--fix` made. */
export interface DoctorChange {
  code: FindingCode;
  file: string;
  task?: number;
  message: string;
}

export interface DoctorOptions {
  /** Clock for lock, temp-file and lease ages (tests). */
  now?: number;
  /** Check the git merge driver registration (default true). */
  git?: boolean;
  /** Where the command runs (the git worktree whose merge or cherry-pick is looked at); default the process's. */
  cwd?: string;
  /** An id clash to settle (found once per command: it asks git). */
  pending?: PendingReconcile;
  /** What the checks asked git, shared by the scans of one command (the scans under the board lock ask it nothing). */
  answers?: GitAnswers;
}

export interface DoctorReport {
  findings: DoctorFinding[];
  /** Task files seen (valid or not). */
  files: number;
}

export interface RepairReport {
  changes: DoctorChange[];
  /** What is still wrong after the repairs (doctor exits 1 while this is not empty). */
  remaining: DoctorFinding[];
}
