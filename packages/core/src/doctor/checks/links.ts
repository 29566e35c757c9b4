import { brokenLinkProblem, checkLinks, removeLinkHint, settleLink, type LinkVerdict } from '../../consistency/link-check.js';
import { copyTask } from '../../format/format.js';
import { findTopLevelKey, positionAt } from '../../format/json-locate.js';
import { LINK_OTHER_SIDE, type LinkField } from '../../format/task-links.js';
import type { DoctorCheck, Scan } from './check.js';

/**
 * Soft links (docs/protocol.md, "Links"): a link stated on one side only,
 * or kept by a live task towards a task deleted by hand, is repaired; a link
 * to a missing or deleted task, or to the task itself, is reported. Judged
 * by `checkLinks` (link-check.ts), as the watcher judges them.
 */
export const links: DoctorCheck = {
  name: 'links',
  codes: ['one_sided_link', 'bad_link'],
  run: diagnoseLinks,
};

function diagnoseLinks(scan: Scan): void {
  const { byId, present } = scan;
  const unreadable = new Set([...present].filter((id) => !byId.has(id)));
  for (const v of checkLinks([...byId.values()], { unreadable })) {
    if (v.kind === 'broken') brokenLink(scan, v);
    else repairLink(scan, v);
  }
}

/** Where the key `field` of task `id`'s file is (its start when the key is not there yet). */
function keyAt({ fileOf }: Scan, id: number, field: LinkField) {
  const f = fileOf.get(id)!;
  return { file: f.path, ...positionAt(f.text, Math.max(0, findTopLevelKey(f.text, field))) };
}

function brokenLink(scan: Scan, v: Extract<LinkVerdict, { kind: 'broken' }>): void {
  scan.findings.push({
    code: 'bad_link',
    ...keyAt(scan, v.task, v.field),
    task: v.task,
    message: `#${v.task}: ${brokenLinkProblem(v, false)}`,
    fix: removeLinkHint(v.task, v.field, v.other),
    fixable: false,
  });
}

/** A link doctor --fix repairs: the missing side written, or a deleted task's id dropped from the live side. */
function repairLink(scan: Scan, v: Exclude<LinkVerdict, { kind: 'broken' }>): void {
  let e = scan.edits.get(v.task);
  if (!e) scan.edits.set(v.task, (e = { task: copyTask(scan.byId.get(v.task)!), changes: [] }));
  if (!settleLink(v, e.task)) return;
  const where = v.kind === 'add-side' ? v.other : v.task;
  const message =
    v.kind === 'add-side'
      ? `#${v.other} names #${v.task} as a link, but #${v.task} does not list #${v.other} in "${v.field}"`
      : `#${v.task} lists #${v.other} in "${v.field}", but #${v.other} is deleted`;
  scan.findings.push({
    code: 'one_sided_link',
    ...keyAt(scan, where, v.kind === 'add-side' ? LINK_OTHER_SIDE[v.field] : v.field),
    task: where,
    message,
    fix: v.kind === 'add-side' ? 'add the missing side (tasks doctor --fix)' : `drop it (tasks doctor --fix)`,
    fixable: true,
  });
  e.changes.push({
    code: 'one_sided_link',
    text:
      v.kind === 'add-side' ? `added #${v.other} to "${v.field}" (the other side of #${v.other}'s link)` : `dropped #${v.other} (deleted) from "${v.field}"`,
  });
}
