// The checks of `tasks doctor`, in the order they run and their findings are
// listed (findings sort by file and position first; among findings at one
// spot, by this order: the graph's before the canonical form they would
// change, an id mismatch before the duplicate it causes).
import type { FindingCode } from '../findings.js';
import { badScopes } from './bad-scope.js';
import { boardHome } from './board-home.js';
import { canonicalForm } from './canonical-form.js';
import type { DoctorCheck } from './check.js';
import { duplicateIds } from './duplicate-ids.js';
import { graph } from './graph.js';
import { hierarchy } from './hierarchy.js';
import { highWaterMark } from './high-water-mark.js';
import { idClashes } from './id-clashes.js';
import { unfinishedChanges } from './journals.js';
import { expiredLeases } from './leases.js';
import { leftovers } from './leftovers.js';
import { links } from './links.js';
import { mergeDriver } from './merge-driver.js';
import { taskFiles } from './task-files.js';
import { untrackedClaims } from './untracked-claims.js';

export { canonicalText } from './check.js';
export type { DoctorCheck, FileChange, Plan, PlannedWrite, Scan, ScannedFile } from './check.js';

/** Every check, in order; task-files first (the others look at what it read), graph before canonical-form. */
export const DOCTOR_CHECKS: readonly DoctorCheck[] = [
  taskFiles,
  idClashes,
  duplicateIds,
  graph,
  links,
  hierarchy,
  badScopes,
  canonicalForm,
  highWaterMark,
  leftovers,
  expiredLeases,
  untrackedClaims,
  unfinishedChanges,
  mergeDriver,
  boardHome,
];

/** The order of finding codes, derived from the checks. */
export const FINDING_ORDER: readonly FindingCode[] = DOCTOR_CHECKS.flatMap((check) => check.codes);
