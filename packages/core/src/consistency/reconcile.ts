import { CorruptTaskError, formatCycle } from '../errors.js';
import { isClosed, normalizeIds, taskFileName, type Task } from '../format/format.js';
import type { BoardSnapshot, TaskProblem, TaskStore } from '../store.js';
import { BoardGraph, rotateCycle } from './board-graph.js';
import { checkChangedLinks, checkLinks, linkFinding, linksNamed, type LinkLookup } from './link-check.js';
import type { BoardFinding, EdgeField, EdgeNode, EdgeVerdict, GraphVerdict } from './verdicts.js';

export { BoardGraph } from './board-graph.js';
export type { BoardFinding, EdgeField, EdgeNode, EdgeVerdict, GraphVerdict } from './verdicts.js';

/**
 * Board consistency (docs/protocol.md, "Status, edges and readiness") for
 * changes that did not go through our commands: hand edits, scripts, git.
 * Finds what needs fixing — a completion not yet propagated, an edge stated
 * on one side only — and what cannot be fixed without a person (a cycle, a
 * missing task, a file that does not parse).
 * `checkBoard` looks at the whole board; `checkChangedTask` looks at one file
 * and follows only its edges; repair.ts fixes what they find.
 */

/** Undefined = no such file; UNREADABLE = a file that does not parse (reported on its own). */
const UNREADABLE = Symbol('unreadable');
type Lookup = (id: number) => Task | EdgeNode | undefined | typeof UNREADABLE;
/** How one check sees the board. */
interface EdgeContext {
  lookup: Lookup;
  /** The cycle the edge "blocker blocks waiter" lies on (`[blocker, waiter, …, blocker]`), if any. */
  cycle(blocker: number, waiter: number): number[] | undefined;
  /**
   * What a file said when last looked at: an edge side that was there and is
   * gone was removed by hand (mirror the removal); one never seen was not
   * (write it). Undefined when there is no history (first look).
   */
  before(id: number): EdgeNode | undefined;
  /** In a per-change check: the task whose file changed. */
  changedId?: number;
}

function fileOf(id: number): string {
  return taskFileName(id);
}

function invalid(id: number, problem: string): BoardFinding {
  return { kind: 'invalid', file: fileOf(id), task: id, problem };
}

/**
 * The verdict on the edge "blocker blocks waiter", if it needs anything.
 * Cases a person must settle (self-edge, missing or deleted task, cycle) are
 * `broken`; a side removed by hand in the changed file is mirrored
 * (`remove-side`); any other one-sided edge gets its missing side (`add-side`).
 */
function judgeEdge(blocker: number, waiter: number, ctx: EdgeContext): EdgeVerdict | undefined {
  const a = ctx.lookup(blocker);
  const w = ctx.lookup(waiter);
  const inBlocks = typeof a === 'object' && a.blocks.includes(waiter);
  const inBlockedBy = typeof w === 'object' && w.blockedBy.includes(blocker);
  if (!inBlocks && !inBlockedBy) return undefined;
  if (a === UNREADABLE || w === UNREADABLE) return undefined; // that file is reported on its own
  const broken = (reason: 'self' | 'missing' | 'deleted' | 'cycle', field: EdgeField, cycle?: number[]): EdgeVerdict => ({
    kind: 'broken',
    reason,
    blocker,
    waiter,
    task: field === 'blocks' ? blocker : waiter,
    field,
    ...(cycle ? { cycle: rotateCycle(cycle) } : {}),
  });
  if (blocker === waiter) return broken('self', inBlocks ? 'blocks' : 'blockedBy');
  if (!a) return broken('missing', 'blockedBy');
  if (!w) return isClosed(a.status) ? undefined : broken('missing', 'blocks');
  const changed = ctx.changedId;
  if (inBlocks && inBlockedBy) {
    if (isClosed(a.status)) return { kind: 'propagate', blocker, waiter };
    const isNew =
      (changed === blocker && !ctx.before(blocker)?.blocks.includes(waiter)) || (changed === waiter && !ctx.before(waiter)?.blockedBy.includes(blocker));
    if (isNew && w.status !== 'deleted') {
      const cycle = ctx.cycle(blocker, waiter);
      if (cycle) return broken('cycle', changed === blocker ? 'blocks' : 'blockedBy', cycle);
    }
    return undefined;
  }
  if (inBlocks) {
    // Only `blocker.blocks` names the edge.
    if (isClosed(a.status)) return undefined; // a finished task's blocks is history
    if (w.status === 'deleted') return undefined; // a tombstone waits for nothing
    if (ctx.before(waiter)?.blockedBy.includes(blocker)) return { kind: 'remove-side', blocker, waiter, task: blocker, field: 'blocks' };
    if (w.status === 'completed') return undefined;
    const cycle = ctx.cycle(blocker, waiter);
    if (cycle) return broken('cycle', 'blocks', cycle);
    return { kind: 'add-side', blocker, waiter, task: waiter, field: 'blockedBy' };
  }
  // Only `waiter.blockedBy` names the edge.
  if (w.status === 'deleted') return undefined;
  if (ctx.before(blocker)?.blocks.includes(waiter)) return { kind: 'remove-side', blocker, waiter, task: waiter, field: 'blockedBy' };
  if (a.status === 'deleted') return broken('deleted', 'blockedBy');
  if (a.status !== 'completed') {
    const cycle = ctx.cycle(blocker, waiter);
    if (cycle) return broken('cycle', 'blockedBy', cycle);
  }
  return { kind: 'add-side', blocker, waiter, task: blocker, field: 'blocks' };
}

/** The watcher's finding for a verdict. */
function verdictFinding(verdict: GraphVerdict): BoardFinding {
  switch (verdict.kind) {
    case 'propagate':
      return { kind: 'propagate', task: verdict.blocker };
    case 'add-side':
    case 'remove-side':
      return { kind: verdict.kind, blocker: verdict.blocker, waiter: verdict.waiter, task: verdict.task, field: verdict.field };
    case 'cycle':
      return invalid(verdict.cycle[0], `dependency cycle ${formatCycle(verdict.cycle)}; nothing was written (remove one edge of the cycle)`);
  }
  const { reason, task, field } = verdict;
  const other = task === verdict.blocker ? verdict.waiter : verdict.blocker;
  switch (reason) {
    case 'self':
      return invalid(task, `#${task} names itself in ${field}; a task cannot wait for itself`);
    case 'missing':
      return invalid(task, `"${field}" names #${other}, which does not exist`);
    case 'deleted':
      return invalid(task, `"${field}" names #${other}, which is deleted; a deleted task blocks nobody`);
    case 'cycle':
      return invalid(
        task,
        `"${field}" names #${other}, which closes the cycle ${formatCycle(verdict.cycle!)}; nothing was written (remove one edge of the cycle)`,
      );
  }
}

function problemFinding(problem: TaskProblem, dir: string): BoardFinding {
  const file = problem.file.startsWith(dir) ? problem.file.slice(dir.length + 1) : problem.file;
  const out: BoardFinding = { kind: 'invalid', file, problem: problem.message };
  if (problem.id !== undefined) out.task = problem.id;
  if (problem.line !== undefined) out.line = problem.line;
  if (problem.column !== undefined) out.column = problem.column;
  return out;
}

function corruptFinding(error: CorruptTaskError, id: number, dir: string): BoardFinding {
  return problemFinding({ file: error.file, id, line: error.line, column: error.column, message: String(error.details.problem) }, dir);
}

/** Propagations first (they unblock), then repairs, then problems; no duplicates. */
function sortFindings(findings: BoardFinding[]): BoardFinding[] {
  const seen = new Set<string>();
  const rank = { propagate: 0, 'remove-side': 1, 'add-side': 2, 'link-side': 2, invalid: 3 } as const;
  return findings
    .filter((f) => {
      const key = JSON.stringify(f);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((x, y) => rank[x.kind] - rank[y.kind]);
}

/** The verdicts on a set of tasks, and their graph. */
export interface GraphCheck {
  graph: BoardGraph;
  verdicts: GraphVerdict[];
}

export interface GraphCheckOptions {
  /** Ids whose files exist but could not be read: edges to them are left to those files' own reports. */
  unreadable?: ReadonlySet<number>;
  /** The graph of an earlier check: tells a side removed by hand from one being added (without it, one being added). */
  previous?: BoardGraph;
}

/**
 * Judges every edge of `tasks` (O(tasks + edges)): completions not
 * propagated, one-sided edges, self-edges, edges naming missing or deleted
 * tasks, and cycles — each cycle reported once, on a one-sided edge that
 * closes it or else as a cycle of its own. Reads no files: the watcher and
 * `tasks doctor` both decide board consistency here.
 */
export function checkGraph(tasks: readonly Task[], options: GraphCheckOptions = {}): GraphCheck {
  const graph = BoardGraph.fromTasks(tasks);
  return { graph, verdicts: judgeEdges(tasks, options, () => graph) };
}

/**
 * `checkGraph`'s verdicts without its graph, for a caller that keeps none
 * (doctor): the graph, the biggest part of the work on a large board, is
 * built only when the board may hold a cycle, whose path it finds.
 */
export function judgeGraph(tasks: readonly Task[], options: GraphCheckOptions = {}): GraphVerdict[] {
  let graph: BoardGraph | undefined;
  return judgeEdges(tasks, options, () => (graph ??= BoardGraph.fromTasks(tasks)));
}

function judgeEdges(tasks: readonly Task[], options: GraphCheckOptions, graphOf: () => BoardGraph): GraphVerdict[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const component = new Map<number, number>();
  // Tarjan's walk finds no component when nothing is left of the graph after peeling off its tasks without a blocker.
  const components = holdsCycle(byId) ? graphOf().cyclicComponents() : [];
  components.forEach((ids, i) => ids.forEach((id) => component.set(id, i)));
  const ctx: EdgeContext = {
    lookup: (id) => byId.get(id) ?? (options.unreadable?.has(id) ? UNREADABLE : undefined),
    cycle: (blocker, waiter) => {
      const c = component.get(blocker);
      if (c === undefined || c !== component.get(waiter)) return undefined;
      const path = graphOf().findPath(waiter, blocker);
      return path ? [blocker, ...path] : undefined;
    },
    before: (id) => options.previous?.get(id),
  };
  const verdicts: GraphVerdict[] = [];
  const reported = new Set<number>();
  const judge = (blocker: number, waiter: number, stated: number) => {
    const verdict = judgeEdge(blocker, waiter, ctx);
    if (!verdict) return;
    verdicts.push(verdict);
    if (verdict.kind === 'broken' && component.has(stated)) reported.add(component.get(stated)!);
  };
  for (const task of tasks) {
    for (const blocker of task.blockedBy) judge(blocker, task.id, task.id);
    for (const waiter of task.blocks) {
      if (byId.get(waiter)?.blockedBy.includes(task.id)) continue; // seen from the waiter's side
      judge(task.id, waiter, task.id);
    }
  }
  // A cycle made of edges stated on both sides: no one-sided edge reported it.
  components.forEach((ids, i) => {
    if (reported.has(i)) return;
    const cycle = graphOf().cycleThrough(ids[0], ids);
    if (cycle) verdicts.push({ kind: 'cycle', cycle });
  });
  return verdicts;
}

/**
 * Whether the edges of the tasks that are not deleted (either side stating
 * one, as BoardGraph counts them) may close a cycle: Kahn's peeling, over
 * arrays, of every task nothing live blocks, then of those only peeled tasks
 * blocked. A task left over lies on a cycle or behind one. O(tasks + edges).
 */
function holdsCycle(byId: ReadonlyMap<number, EdgeNode>): boolean {
  const index = new Map<number, number>();
  const live: EdgeNode[] = [];
  for (const [id, task] of byId) {
    if (task.status === 'deleted') continue;
    index.set(id, live.length);
    live.push(task);
  }
  const n = live.length;
  // Edges as index pairs, from blocker to waiter, in the order found.
  const from: number[] = [];
  const to: number[] = [];
  const waiting = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const task = live[i];
    for (const w of task.blocks) {
      const j = index.get(w);
      if (j === undefined) continue;
      from.push(i);
      to.push(j);
      waiting[j]++;
    }
    for (const b of task.blockedBy) {
      const j = index.get(b);
      if (j === undefined) continue;
      from.push(j);
      to.push(i);
      waiting[i]++;
    }
  }
  // Each task's edges out, together (a counting sort by blocker).
  const start = new Int32Array(n + 1);
  for (const i of from) start[i + 1]++;
  for (let i = 0; i < n; i++) start[i + 1] += start[i];
  const next = new Int32Array(from.length);
  const fill = start.slice(0, n);
  for (let e = 0; e < from.length; e++) next[fill[from[e]]++] = to[e];
  const queue = new Int32Array(n);
  let tail = 0;
  for (let i = 0; i < n; i++) if (waiting[i] === 0) queue[tail++] = i;
  for (let head = 0; head < tail; head++) {
    const i = queue[head];
    for (let e = start[i]; e < start[i + 1]; e++) if (--waiting[next[e]] === 0) queue[tail++] = next[e];
  }
  return tail < n;
}

/** The whole board's findings, and its graph for later per-change checks. */
export interface BoardCheck {
  graph: BoardGraph;
  findings: BoardFinding[];
  /** Task files read. */
  tasks: number;
  /** The board as it was read for the check. */
  snapshot: BoardSnapshot;
}

/**
 * Checks every task file (O(tasks + edges)): bad files, and `checkGraph`'s
 * verdicts on the tasks that parse. `previous` (the graph of an earlier
 * check) tells a side removed by hand from one being added; without it, a
 * one-sided edge is taken as being added.
 */
export function checkBoard(store: TaskStore, options: { previous?: BoardGraph } = {}): BoardCheck {
  const snapshot = store.loadBoard();
  const unreadable = new Set(snapshot.problems.map((p) => p.id).filter((id): id is number => id !== undefined));
  const { graph, verdicts } = checkGraph(snapshot.tasks, { unreadable, previous: options.previous });
  const links = checkLinks(snapshot.tasks, { unreadable, before: (id) => options.previous?.get(id) }).map(linkFinding);
  const findings = [...snapshot.problems.map((p) => problemFinding(p, store.dir)), ...verdicts.map(verdictFinding), ...links];
  return { graph, findings: sortFindings(findings), tasks: snapshot.tasks.length + snapshot.problems.length, snapshot };
}

/**
 * Checks one task file after it changed (or vanished), updating its entry
 * in `graph`. Looks at the task's own edges, those it had before, and the
 * edges other tasks state towards it, reading each neighbour fresh from
 * disk: the work follows the changed file's edges, not the board's size.
 * Neighbours' entries are left as last seen: when their own change is
 * checked, that is what tells a removal from an addition. `read` is the
 * file's text when the caller has read it already (so one reading decides).
 */
export function checkChangedTask(store: TaskStore, graph: BoardGraph, id: number, read?: { text: string | undefined }): BoardFinding[] {
  const before = graph.get(id);
  let task: Task | undefined;
  try {
    const text = read ? read.text : store.readTaskText(id);
    task = text === undefined ? undefined : store.parseTaskText(id, text);
  } catch (error) {
    if (error instanceof CorruptTaskError) return [corruptFinding(error, id, store.dir)];
    throw error;
  }
  const blockers = new Set([...graph.blockersNaming(id), ...(before?.blockedBy ?? [])]);
  const waiters = new Set([...graph.waitersNaming(id), ...(before?.blocks ?? [])]);
  const lookup = freshLookup(store, id, task);
  // Links: the changed task's own, those it stated before, and the other tasks' that name it.
  const linkCtx = { lookup: (n: number) => linkLookup(lookup, n), before: (n: number) => (n === id ? before : graph.get(n)) };
  const links = () => checkChangedLinks(id, [...graph.links.tasksNaming(id), ...linksNamed(before), ...linksNamed(task)], linkCtx).map(linkFinding);
  if (!task) {
    const linkFindings = links();
    graph.delete(id);
    // Files that still name the vanished task (completed ones' `blocks` are history).
    const naming = normalizeIds([...graph.waitersNaming(id), ...graph.blockersNaming(id).filter((b) => !isClosed(graph.get(b)?.status ?? 'pending'))]);
    if (naming.length === 0) return sortFindings(linkFindings);
    return sortFindings([
      ...linkFindings,
      invalid(
        id,
        `${fileOf(id)} is gone but ${naming.map((n) => `#${n}`).join(', ')} still name${naming.length === 1 ? 's' : ''} it; restore the file, or remove the edges with 'tasks dep rm'`,
      ),
    ]);
  }
  const linkFindings = links();
  graph.set(id, task);
  for (const b of task.blockedBy) blockers.add(b);
  for (const w of task.blocks) waiters.add(w);
  const ctx: EdgeContext = {
    lookup,
    cycle: (blocker, waiter) => {
      const path = graph.findPath(waiter, blocker);
      return path ? [blocker, ...path] : undefined;
    },
    before: (n) => (n === id ? before : graph.get(n)),
    changedId: id,
  };
  const findings: BoardFinding[] = [];
  for (const b of blockers) lookup(b);
  for (const w of waiters) lookup(w);
  for (const b of blockers) {
    const verdict = judgeEdge(b, id, ctx);
    if (verdict) findings.push(verdictFinding(verdict));
  }
  for (const w of waiters) {
    const verdict = judgeEdge(id, w, ctx);
    if (verdict) findings.push(verdictFinding(verdict));
  }
  return sortFindings([...findings, ...linkFindings]);
}

/** Looks tasks up fresh from disk, each once (`id` is the changed task, as read). */
function freshLookup(store: TaskStore, id: number, task: Task | undefined): Lookup {
  const fresh = new Map<number, Task | typeof UNREADABLE | undefined>([[id, task]]);
  return (n) => {
    if (!fresh.has(n)) {
      let value: Task | typeof UNREADABLE | undefined;
      try {
        value = store.peekTask(n) ?? (store.hasTask(n) ? UNREADABLE : undefined);
      } catch (error) {
        if (!(error instanceof CorruptTaskError)) throw error;
        value = UNREADABLE;
      }
      fresh.set(n, value);
    }
    return fresh.get(n);
  };
}

/** An edge lookup as link-check.ts reads it. */
function linkLookup(lookup: Lookup, id: number): ReturnType<LinkLookup> {
  const found = lookup(id);
  return found === UNREADABLE ? 'unreadable' : found;
}
