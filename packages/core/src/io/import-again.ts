/**
 * Importing a source again: the tasks of the board imported before from the
 * same source (by `metadata.importedFrom`), refreshed in what they say and
 * kept in where they stand, with a warning where the source differs.
 */
import { ownerFlag } from '../hints.js';
import { copyTask, createRecord, normalizeNotes, serializeTask, setOwn, type Task } from '../format/format.js';
import type { ForeignList, ImportTarget } from './import-shapes.js';

/** Where a task on the board came from, as its `metadata.importedFrom` says. */
export function originOf(task: Task): { tool: string; id: string; source?: string } | undefined {
  const from = task.metadata?.importedFrom as Record<string, unknown> | undefined;
  if (from === null || typeof from !== 'object' || typeof from.tool !== 'string' || typeof from.id !== 'string') return undefined;
  return { tool: from.tool, id: from.id, ...(typeof from.source === 'string' ? { source: from.source } : {}) };
}

/**
 * The tasks on the board imported before from this list, by source id: the
 * same tool, the same source and the same id in `importedFrom`. A task
 * imported before sources were recorded (no `source`) counts when no task
 * records this source and its subject is the source's too (ids such as
 * `task-1` or an export's `3` repeat from one project to the next: another
 * project's task must not be overwritten). Of several, the lowest id, with a
 * warning.
 */
export function findImportedBefore(list: ForeignList, target: ImportTarget, warnings: string[]): Map<string, Task> {
  const found = new Map<string, Task>();
  if (list.tool === undefined || target.board === undefined) return found;
  const exact = new Map<string, Task[]>();
  const legacy = new Map<string, Task[]>();
  for (const task of target.board) {
    const origin = originOf(task);
    if (origin?.tool !== list.tool) continue;
    const into = origin.source === undefined ? legacy : origin.source === target.source ? exact : undefined;
    into?.set(origin.id, [...(into.get(origin.id) ?? []), task]);
  }
  for (const t of list.tasks) {
    const candidates = (exact.get(t.sourceId) ?? legacy.get(t.sourceId)?.filter((c) => c.subject === t.subject) ?? []).sort((a, b) => a.id - b.id);
    if (candidates.length === 0) continue;
    if (candidates.length > 1)
      warnings.push(
        `${t.sourceId}: imported more than once before (${candidates.map((c) => `#${c.id}`).join(', ')}); this import updates #${candidates[0].id} ('tasks delete' the others)`,
      );
    found.set(t.sourceId, candidates[0]);
  }
  return found;
}

/**
 * A task imported before, refreshed from the source: what it says (subject,
 * description, and the priority, labels, paths, check, result, metadata keys and unknown
 * keys the source gives; its notes are added) is the source's; where it
 * stands (status, owner, activeForm, edges) stays the board's, which its
 * claims, completions and dependencies moved on purpose.
 */
export function refreshTask(current: Task, fresh: Task): Task {
  const task = copyTask(current);
  task.subject = fresh.subject;
  task.description = fresh.description;
  if (fresh.priority !== undefined) task.priority = fresh.priority;
  if (fresh.labels !== undefined) task.labels = [...fresh.labels];
  if (fresh.paths !== undefined) task.paths = [...fresh.paths];
  if (fresh.verify !== undefined) task.verify = fresh.verify;
  if (fresh.result !== undefined) task.result = fresh.result;
  if (fresh.notes?.length) task.notes = normalizeNotes([...(task.notes ?? []), ...fresh.notes]);
  if (fresh.metadata !== undefined) {
    const metadata = task.metadata ?? createRecord();
    for (const [k, v] of Object.entries(fresh.metadata)) setOwn(metadata, k, v);
    task.metadata = metadata;
  }
  for (const [k, v] of Object.entries(fresh.extra)) setOwn(task.extra, k, v);
  return task;
}

/** What the source says of a task imported before that the board has otherwise, and that a re-import leaves as it is. */
export function standingWarning(name: string, fresh: Task, current: Task, edgesDiffer: boolean): string | undefined {
  const differ: string[] = [];
  if (fresh.status !== current.status) differ.push(`the source has it ${fresh.status}, the board ${current.status}`);
  if (fresh.owner !== current.owner) differ.push(`the source's owner is ${fresh.owner || 'nobody'}, the board's ${current.owner || 'nobody'}`);
  if (edgesDiffer) differ.push("the source's edges among the tasks imported before differ from the board's");
  if (differ.length === 0) return undefined;
  const id = current.id;
  const hint =
    fresh.status === current.status || current.status === 'completed' || current.status === 'deleted'
      ? ''
      : fresh.status === 'completed'
        ? ` ('tasks done ${id}${ownerFlag(current.owner)}' to follow the source)`
        : fresh.status === 'deleted'
          ? ` ('tasks delete ${id}' to follow the source)`
          : fresh.status === 'in_progress'
            ? ` ('tasks start ${id}${ownerFlag(fresh.owner)}' to follow the source)`
            : ` ('tasks release ${id}${ownerFlag(current.owner)}' to follow the source)`;
  return `${name}: ${differ.join('; ')}; a re-import leaves status, owner and edges as the board has them${hint}`;
}

/** The fields of `after` that differ from `before`, for the `updated` event. */
export function changedFields(before: Task, after: Task): string[] {
  const a = JSON.parse(serializeTask(before)) as Record<string, unknown>;
  const b = JSON.parse(serializeTask(after)) as Record<string, unknown>;
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}
