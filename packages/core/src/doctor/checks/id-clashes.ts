import type { DoctorCheck, Scan } from './check.js';

/**
 * An id two branches handed out to two different tasks, not settled yet
 * (docs/protocol.md, "Ids across branches"): the merge driver kept one of
 * them and no hook brought the other back, or a merge or cherry-pick is in
 * progress with task files git could not merge. Its one fix is the
 * whole-board merge of both sides (tasks doctor --fix), never an edge added
 * to whichever task holds the id now.
 */
export const idClashes: DoctorCheck = {
  name: 'id clashes',
  codes: ['id_clash'],
  run({ store, options, findings }: Scan): void {
    const pending = options.pending;
    if (!pending) return;
    const inProgress = 'mode' in pending.how && (pending.how.mode === 'merging' || pending.how.mode === 'cherry-pick') ? pending.how.mode : undefined;
    const then = inProgress === 'merging' ? ', then git commit' : inProgress === 'cherry-pick' ? ', then git cherry-pick --continue' : '';
    for (const id of pending.ids) {
      const clash = pending.clashes.find((c) => c.id === id);
      findings.push({
        code: 'id_clash',
        file: store.taskPath(id),
        task: id,
        message: clash
          ? `#${id} was created on two branches as two different tasks: ${JSON.stringify(clash.oursSubject)} kept #${id}, ${JSON.stringify(clash.theirsSubject)} was set aside`
          : `#${id} is in the middle of a ${inProgress === 'cherry-pick' ? 'cherry-pick' : 'merge'} that git could not merge`,
        fix: `tasks doctor --fix (merges the board of both sides: a task set aside comes back under a free id, with the edges and mentions of its side)${then}`,
        fixable: true,
      });
    }
  },
};
