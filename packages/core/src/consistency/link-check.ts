/**
 * Board consistency for soft links (docs/protocol.md, "Links"): a link
 * stated on one side only gets its other side, a side removed by hand is
 * mirrored, a live task still naming a deleted one that names it drops it,
 * and a link to a missing or deleted task, or to the task itself, is
 * reported for a person. Links are never cycles and never block, so nothing
 * here walks the graph. The watcher (reconcile.ts) and `tasks doctor`
 * (doctor/checks/links.ts) judge links here and repair with `settleLink`.
 */
import { CorruptTaskError } from '../errors.js';
import type { TaskEvent } from '../events/events.js';
import { copyTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { LINK_FIELDS, LINK_OTHER_SIDE, addLink, removeLink, type LinkField } from '../format/task-links.js';
import type { ActorOptions, TaskStore } from '../store.js';
import type { BoardFinding, LinkNode } from './verdicts.js';

/** Undefined = no such file; 'unreadable' = a file that does not parse (reported on its own). */
export type LinkLookup = (id: number) => LinkNode | undefined | 'unreadable';

/**
 * The verdict on one link as the files state it. `add-side`: write `other`
 * into `task`'s `field` (the other side states it). `remove-side`: drop
 * `other` from `task`'s `field` (its other side was removed by hand, or is a
 * task deleted by hand). `broken`: stated in `task`'s `field`, naming a
 * missing or deleted task or `task` itself; nothing is written.
 */
export type LinkVerdict =
  | { kind: 'add-side'; task: number; field: LinkField; other: number }
  | { kind: 'remove-side'; task: number; field: LinkField; other: number; reason: 'removed' | 'deleted' }
  | { kind: 'broken'; reason: 'self' | 'missing' | 'deleted'; task: number; field: LinkField; other: number };

/** How a check sees the board: the tasks now, and (in the watcher) what a file said when last looked at. */
export interface LinkContext {
  lookup: LinkLookup;
  before(id: number): LinkNode | undefined;
}

/** The link facts of a task: copies of its link fields that are present. */
export function linkFacts(task: LinkNode): Pick<LinkNode, LinkField> {
  const facts: { -readonly [K in LinkField]?: readonly number[] } = {};
  for (const field of LINK_FIELDS) if (task[field]?.length) facts[field] = [...task[field]];
  return facts;
}

/** id → the tasks whose link fields name id: what a change to one file must look at besides its own links. */
export class LinkIndex {
  private naming = new Map<number, Set<number>>();

  /** Records the links task `id` states now (`before`: what it stated until now). */
  set(id: number, node: LinkNode, before?: LinkNode): void {
    if (before) this.delete(id, before);
    for (const field of LINK_FIELDS) for (const other of node[field] ?? []) (this.naming.get(other) ?? this.naming.set(other, new Set()).get(other)!).add(id);
  }

  /** Forgets the links task `id` stated. */
  delete(id: number, before: LinkNode): void {
    for (const field of LINK_FIELDS)
      for (const other of before[field] ?? []) {
        const set = this.naming.get(other);
        set?.delete(id);
        if (set?.size === 0) this.naming.delete(other);
      }
  }

  /** The tasks whose links name `id`. */
  tasksNaming(id: number): number[] {
    return [...(this.naming.get(id) ?? [])];
  }
}

/** The verdict on "`id` states `other` in `field`", if it needs anything (undefined when `id` does not state it). */
export function judgeLink(id: number, field: LinkField, other: number, ctx: LinkContext): LinkVerdict | undefined {
  const self = ctx.lookup(id);
  if (typeof self !== 'object' || !self[field]?.includes(other)) return undefined;
  const them = ctx.lookup(other);
  if (them === 'unreadable') return undefined; // that file is reported on its own
  const broken = (reason: 'self' | 'missing' | 'deleted'): LinkVerdict => ({ kind: 'broken', reason, task: id, field, other });
  if (id === other) return broken('self');
  // A deleted task's own links are history (its deletion took it off the other side).
  if (!them) return self.status === 'deleted' ? undefined : broken('missing');
  const back = LINK_OTHER_SIDE[field];
  if (them[back]?.includes(id)) {
    // Both sides, and the other deleted (by hand: a deletion through dotasks takes it off this side): drop it here.
    return self.status !== 'deleted' && them.status === 'deleted' ? { kind: 'remove-side', task: id, field, other, reason: 'deleted' } : undefined;
  }
  if (self.status === 'deleted') return undefined;
  if (ctx.before(other)?.[back]?.includes(id)) return { kind: 'remove-side', task: id, field, other, reason: 'removed' };
  if (them.status === 'deleted') return broken('deleted');
  return { kind: 'add-side', task: other, field: back, other: id };
}

/** Every verdict on the links `id` states. */
function judgeLinksOf(id: number, ctx: LinkContext, out: LinkVerdict[]): void {
  const self = ctx.lookup(id);
  if (typeof self !== 'object') return;
  for (const field of LINK_FIELDS)
    for (const other of self[field] ?? []) {
      const verdict = judgeLink(id, field, other, ctx);
      if (verdict) out.push(verdict);
    }
}

/** Each verdict once: one link judged from both of its sides gives the same repair twice. */
function unique(verdicts: LinkVerdict[]): LinkVerdict[] {
  const seen = new Set<string>();
  return verdicts.filter((v) => {
    const key = JSON.stringify(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Judges every link of `tasks` (O(tasks + links)); reads no files. An id in
 * `unreadable` names a file that exists but does not parse: links to it are
 * left to that file's own report. `before`: what a file said at an earlier
 * look, which tells a side removed by hand from one being added.
 */
export function checkLinks(
  tasks: readonly Task[],
  options: { unreadable?: ReadonlySet<number>; before?: (id: number) => LinkNode | undefined } = {},
): LinkVerdict[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const ctx: LinkContext = {
    lookup: (id) => byId.get(id) ?? (options.unreadable?.has(id) ? 'unreadable' : undefined),
    before: options.before ?? (() => undefined),
  };
  const out: LinkVerdict[] = [];
  for (const task of tasks) judgeLinksOf(task.id, ctx, out);
  return unique(out);
}

/**
 * The verdicts after task `id`'s file changed: on its own links, and on the
 * links of the tasks in `naming` (those that named it, by the last look, and
 * those it names now or named before). Follows the changed file's links only.
 */
export function checkChangedLinks(id: number, naming: Iterable<number>, ctx: LinkContext): LinkVerdict[] {
  const out: LinkVerdict[] = [];
  judgeLinksOf(id, ctx, out);
  for (const other of new Set(naming)) {
    if (other === id) continue;
    const them = ctx.lookup(other);
    if (typeof them !== 'object') continue;
    for (const field of LINK_FIELDS) {
      const verdict = judgeLink(other, field, id, ctx);
      if (verdict) out.push(verdict);
    }
  }
  return unique(out);
}

/** The ids of the links a task states, all fields. */
export function linksNamed(node: LinkNode | undefined): number[] {
  return node ? LINK_FIELDS.flatMap((field) => [...(node[field] ?? [])]) : [];
}

/** The watcher's finding for a verdict: a repair, or a problem for a person. */
export function linkFinding(verdict: LinkVerdict): BoardFinding {
  if (verdict.kind !== 'broken') {
    const { task, field, other } = verdict;
    return { kind: 'link-side', change: verdict.kind === 'add-side' ? 'add' : 'remove', task, field, other };
  }
  return { kind: 'invalid', file: taskFileName(verdict.task), task: verdict.task, problem: brokenLinkProblem(verdict) };
}

/** What is wrong with a broken link, and (with `hint`) how to settle it. */
export function brokenLinkProblem(verdict: Extract<LinkVerdict, { kind: 'broken' }>, hint = true): string {
  const { task, field, other } = verdict;
  const what =
    verdict.reason === 'self'
      ? `#${task} names itself in "${field}"; a task cannot be linked to itself`
      : verdict.reason === 'missing'
        ? `"${field}" names #${other}, which does not exist`
        : `"${field}" names #${other}, which is deleted; a link may only name a task that is not deleted`;
  return hint ? `${what} (${removeLinkHint(task, field, other)})` : what;
}

/** The command that takes a link off both sides, or what to do where there is none. */
export function removeLinkHint(task: number, field: LinkField, other: number): string {
  if (field === 'related') return `remove it: tasks update ${task} --remove-related ${other}`;
  if (field === 'discoveredFrom') return `remove it: tasks update ${task} --remove-discovered-from ${other}`;
  return `remove #${other} from "discovered" in task_${task}.json by hand`;
}

/** Makes the edit a repair verdict asks for on `task` (a copy); true when it changed. */
export function settleLink(verdict: Exclude<LinkVerdict, { kind: 'broken' }>, task: Task): boolean {
  return verdict.kind === 'add-side' ? addLink(task, verdict.field, verdict.other) : removeLink(task, verdict.field, verdict.other);
}

/** Whether the files still show what a finding describes: re-read under the locks before repairing. */
function stillStated(finding: Extract<BoardFinding, { kind: 'link-side' }>, task: Task, other: Task | undefined): boolean {
  const back = LINK_OTHER_SIDE[finding.field];
  const here = task[finding.field]?.includes(finding.other) ?? false;
  const there = other?.[back]?.includes(finding.task) ?? false;
  if (finding.change === 'add') return !here && there && !!other && task.status !== 'deleted' && other.status !== 'deleted';
  return here && !!other && (!there || other.status === 'deleted');
}

/**
 * Settles one link finding in one transaction (the board lock and both
 * tasks' locks), re-reading both files first: when they no longer show it,
 * nothing is written. Logs `repaired`; `onWrite` sees the bytes before and
 * after, and `graph` learns what was written.
 */
export async function applyLinkFinding(
  store: TaskStore,
  finding: Extract<BoardFinding, { kind: 'link-side' }>,
  options: ActorOptions & { onWrite?: (id: number, before: string, after: string) => void; setNode?: (id: number, task: Task) => void } = {},
): Promise<TaskEvent[]> {
  const { task: id, other } = finding;
  if (id === other) return [];
  const result = await store.transact({ board: true, tasks: [id, other] }, (tx) => {
    let task: Task | undefined;
    let them: Task | undefined;
    try {
      task = tx.tryRead(id);
      them = tx.tryRead(other);
    } catch (error) {
      if (error instanceof CorruptTaskError) return undefined; // reported on its own
      throw error;
    }
    if (!task || !stillStated(finding, task, them)) return undefined;
    const edited = copyTask(task);
    if (finding.change === 'add') addLink(edited, finding.field, other);
    else removeLink(edited, finding.field, other);
    const before = tx.readText(id)!;
    tx.put(edited);
    tx.event({
      type: 'repaired',
      task: id,
      owner: options.actor,
      field: finding.field,
      ...(finding.change === 'add' ? { added: other } : { removed: other }),
      source: taskFileName(other),
    });
    return { before, after: serializeTask(edited), task: edited };
  });
  const w = result.value;
  if (w) {
    options.setNode?.(id, w.task);
    if (w.before !== w.after) options.onWrite?.(id, w.before, w.after);
  }
  return result.events;
}
