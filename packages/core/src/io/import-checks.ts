/**
 * What an import refuses and warns about: every imported task passes the
 * limits of `tasks create` and the readers' parser (a refusal names the
 * source and the task, and nothing is imported), no cycle may close through
 * it, and work in progress the commands would not allow is a warning.
 */
import { ownerFlag } from '../hints.js';
import { CorruptTaskError, TasksError } from '../errors.js';
import { MAX_TASK_FILE_BYTES, inReview, normalizeIds, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { checkLabels, checkNesting, checkNoteText, checkPaths, checkPriority, checkSubject } from '../engine/rules.js';
import { checkResult, checkVerifyCommand } from '../engine/outcome-fields.js';
import { readReviewField } from '../format/task-review.js';
import { BoardGraph } from '../consistency/reconcile.js';
import { parentCycles } from '../graph/hierarchy.js';
import type { ForeignList, ForeignTask, ImportTarget } from './import-shapes.js';

/** A subject in a message: cut short. */
export function shortSubject(subject: string): string {
  return subject.length > 60 ? `${subject.slice(0, 60)}…` : subject;
}

/**
 * An import applies the limits of `tasks create` to each task the source
 * gives (subject, priority, labels, paths, notes, the check before done, the
 * result, nesting); labels and paths come out as create writes them.
 */
export function checkLimits(task: Task): void {
  checkSubject(task.subject);
  if (task.priority !== undefined) checkPriority(task.priority);
  if (task.labels !== undefined) {
    const labels = checkLabels(task.labels);
    if (labels.length) task.labels = labels;
    else delete task.labels;
  }
  if (task.paths !== undefined) {
    const paths = checkPaths(task.paths);
    if (paths.length) task.paths = paths;
    else delete task.paths;
  }
  for (const note of task.notes ?? []) checkNoteText(note.text);
  if (task.verify !== undefined) task.verify = checkVerifyCommand(task.verify);
  if (task.result !== undefined) task.result = checkResult(task.result);
  if (task.review !== undefined) {
    const review = readReviewField(
      { review: task.review },
      (_key, problem) => {
        throw new TasksError('E_INVALID', problem);
      },
      JSON.stringify,
    );
    if (review) task.review = review;
    else delete task.review;
  }
  if (task.metadata !== undefined) checkNesting(task.metadata, 'metadata');
}

/** Then the task as it will be written is read back by the readers' own parser, size limit included: nothing they refuse is written. */
export function checkReadable(task: Task): void {
  const text = serializeTask(task);
  const size = Buffer.byteLength(text);
  if (size > MAX_TASK_FILE_BYTES)
    throw new TasksError(
      'E_INVALID',
      `the task would be ${(size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task file`,
    );
  parseTask(text, taskFileName(task.id));
}

/** Runs a check on an imported task; its refusal names the source and the task, and says that nothing was imported. */
export function checkImported(source: string, t: ForeignTask, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof TasksError)) throw error;
    const problem = error instanceof CorruptTaskError ? String(error.details.problem) : error.message;
    throw new TasksError(
      'E_INVALID',
      `${source}: ${t.sourceId} (${shortSubject(t.subject)}): ${problem}; nothing was imported`,
      { ...error.details, source },
      { cause: error },
    );
  }
}

/**
 * What an import would leave in a state the commands do not reach: a task in
 * progress while open tasks block it, and, under singleInProgress, an owner
 * with more than one task in progress. Imported as the source has them (it
 * records work already under way), with a warning that says how to settle it.
 */
export function workInProgressWarnings(touched: readonly Task[], created: ReadonlySet<number>, names: Map<number, string>, target: ImportTarget): string[] {
  const warnings: string[] = [];
  for (const t of touched) {
    if (t.status !== 'in_progress' || t.blockedBy.length === 0) continue;
    const ids = t.blockedBy.map((id) => `#${id}`).join(', ');
    warnings.push(
      `${names.get(t.id)}: in progress while blocked by ${ids}, which ${t.blockedBy.length === 1 ? 'is' : 'are'} open; it was imported as the source has it ('tasks release ${t.id}${ownerFlag(t.owner)}', or finish ${ids} first)`,
    );
  }
  if (!target.singleInProgress) return warnings;
  const byOwner = new Map<string, number[]>();
  for (const t of [...(target.board ?? []), ...touched.filter((t) => created.has(t.id))])
    // A task waiting for review does not count against its owner (docs/protocol.md, "Review").
    if (t.status === 'in_progress' && t.owner !== '' && !inReview(t)) byOwner.set(t.owner, [...(byOwner.get(t.owner) ?? []), t.id]);
  for (const [owner, ids] of [...byOwner].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (ids.length < 2 || !ids.some((id) => created.has(id))) continue;
    const sorted = normalizeIds(ids);
    warnings.push(
      `${owner} has ${sorted.length} tasks in progress (${sorted.map((id) => `#${id}`).join(', ')}) and the board allows one per owner (singleInProgress); release all but one ('tasks release ID${ownerFlag(owner)}')`,
    );
  }
  return warnings;
}

/** Refuses an import that would close a cycle, among its tasks or through the board's, spelled with the source's ids. */
export function checkNoCycle(list: ForeignList, tasks: Task[], ids: number[], target: ImportTarget): void {
  const mine = new Set(ids);
  const graph = BoardGraph.fromTasks([...(target.board ?? []).filter((t) => !mine.has(t.id)), ...tasks]);
  // Only a cycle through the import's tasks is its doing (doctor reports one the board had already).
  const component = graph.cyclicComponents().find((c) => c.some((id) => mine.has(id)));
  if (!component) return;
  const cycle =
    graph.cycleThrough(
      component.find((id) => mine.has(id))!,
      component,
    ) ?? component;
  const fromNew = new Map(list.tasks.map((t, i) => [ids[i], t.sourceId]));
  throw new TasksError(
    'E_CYCLE',
    `${list.source} has a cycle ${cycle.map((id) => (fromNew.has(id) ? JSON.stringify(fromNew.get(id)) : `#${id}`)).join(' -> ')}; remove one of its edges in the source, nothing was imported`,
    { cycle },
  );
}

/** Refuses an import that would close a cycle of parents (docs/protocol.md, "Parents"), spelled with the source's ids. */
export function checkNoParentCycle(list: ForeignList, tasks: Task[], ids: number[], target: ImportTarget): void {
  const mine = new Set(ids);
  const cycle = parentCycles([...(target.board ?? []).filter((t) => !mine.has(t.id)), ...tasks]).find((c) => c.some((id) => mine.has(id)));
  if (!cycle) return;
  const fromNew = new Map(list.tasks.map((t, i) => [ids[i], t.sourceId]));
  throw new TasksError(
    'E_CYCLE',
    `${list.source} has a cycle of parents ${cycle.map((id) => (fromNew.has(id) ? JSON.stringify(fromNew.get(id)) : `#${id}`)).join(' -> ')}; take one of them out of it in the source, nothing was imported`,
    { cycle, kind: 'parent' },
  );
}
