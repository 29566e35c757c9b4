/**
 * The board as text and counts: which tasks a listing shows (filter,
 * search), their lines, trees and summary, a task in full (`tasks show`),
 * and a board's counts. A task's JSON shape is task-view.ts's.
 */
import { DEFAULT_PRIORITY, inReview, priorityOf, type Task, type TaskStatus } from '../format/format.js';
import { presentLinks } from '../format/task-links.js';
import { openBlockers, readyWith, type TaskLookup } from '../graph/graph.js';
import { ancestorsOf, boardLookup, hierarchyOf, type Hierarchy, type Progress } from '../graph/hierarchy.js';
import { firstRanked } from '../graph/ready-order.js';
import type { ReadySummaryCache } from '../runtime/list-summary.js';
import type { BoardSnapshot, TaskProblem } from '../store.js';
import { toTaskView, type TaskView } from './task-view.js';

const MARKS: Record<TaskStatus, string> = { pending: '[ ]', in_progress: '[>]', completed: '[x]', deleted: '[-]' };
/** A task waiting for review (docs/protocol.md, "Review"): in progress, its work finished. */
const REVIEW_MARK = '[?]';

/**
 * How a line is decorated. The core knows nothing of terminals: the CLI
 * passes colours when stdout is a terminal, and plain text is the default.
 */
export interface RenderStyle {
  completed(text: string): string;
  inProgress(text: string): string;
  ready(text: string): string;
  blocked(text: string): string;
  muted(text: string): string;
  problem(text: string): string;
}

const identity = (text: string) => text;
/** No decoration: what agents, pipes and `--json` get. */
export const PLAIN_STYLE: RenderStyle = {
  completed: identity,
  inProgress: identity,
  ready: identity,
  blocked: identity,
  muted: identity,
  problem: identity,
};

/** The documented JSON shape of a board listing. */
export interface BoardView {
  tasks: TaskView[];
  problems: TaskProblem[];
  counts: BoardCounts;
}

export interface BoardCounts {
  total: number;
  pending: number;
  in_progress: number;
  completed: number;
  deleted: number;
  ready: number;
  blocked: number;
}

/** Which tasks a listing shows. */
export interface ListFilter {
  /** Include deleted tasks (hidden by default). */
  all?: boolean;
  status?: TaskStatus[];
  owner?: string;
  ready?: boolean;
  /** Only tasks with one of these labels. */
  labels?: string[];
  /** Only tasks of one of these priorities. */
  priorities?: number[];
  /** Only tasks whose subject, description, labels or notes contain this, ignoring case (see searchTasks). */
  grep?: string;
  /** Only these tasks (`tasks ready --parallel`: the set that can start at once). */
  ids?: ReadonlySet<number>;
}

/** Applies a listing filter to a snapshot's tasks. */
export function filterTasks(snapshot: BoardSnapshot, filter: ListFilter = {}): Task[] {
  const lookup = boardLookup(snapshot);
  const children = lookup.openChildren;
  return snapshot.tasks.filter((t) => {
    if (filter.ids && !filter.ids.has(t.id)) return false;
    if (filter.status?.length) {
      if (!filter.status.includes(t.status)) return false;
    } else if (!filter.all && t.status === 'deleted') return false;
    if (filter.owner !== undefined && t.owner !== filter.owner) return false;
    if (filter.ready && !readyWith(t, lookup, undefined, children)) return false;
    if (filter.labels?.length && !t.labels?.some((l) => filter.labels!.includes(l))) return false;
    if (filter.priorities?.length && !filter.priorities.includes(priorityOf(t))) return false;
    if (filter.grep !== undefined && matchField(t, filter.grep.toLowerCase()) === undefined) return false;
    return true;
  });
}

/** Where a search matched, best first: the order searchTasks ranks by. */
export const SEARCH_FIELDS = ['subject', 'labels', 'description', 'notes'] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

/** The best field of `task` that contains `needle` (already lower case), or undefined. */
function matchField(task: Task, needle: string): SearchField | undefined {
  if (task.subject.toLowerCase().includes(needle)) return 'subject';
  if (task.labels?.some((l) => l.toLowerCase().includes(needle))) return 'labels';
  if (task.description.toLowerCase().includes(needle)) return 'description';
  if (task.notes?.some((n) => n.text.toLowerCase().includes(needle))) return 'notes';
  return undefined;
}

/** A task a search found, and the best field it was found in. */
export interface SearchHit {
  task: Task;
  field: SearchField;
}

/**
 * The tasks whose subject, labels, description or notes contain `text`,
 * ignoring case, ranked by the best field that matched (subject, labels,
 * description, notes), then by id. Deleted tasks only with `all`.
 */
export function searchTasks(snapshot: BoardSnapshot, text: string, options: { all?: boolean } = {}): SearchHit[] {
  const needle = text.trim().toLowerCase();
  if (needle === '') return [];
  const hits: SearchHit[] = [];
  for (const task of snapshot.tasks) {
    if (!options.all && task.status === 'deleted') continue;
    const field = matchField(task, needle);
    if (field) hits.push({ task, field });
  }
  return hits.sort((a, b) => SEARCH_FIELDS.indexOf(a.field) - SEARCH_FIELDS.indexOf(b.field) || a.task.id - b.task.id);
}

/** Counts of a board, for summaries. */
export function countTasks(snapshot: BoardSnapshot): BoardCounts {
  const counts = countWith(snapshot.tasks, openBlockersOf(snapshot), hierarchyOf(snapshot));
  if (snapshot.history) {
    counts.completed += snapshot.history.completed;
    counts.deleted += snapshot.history.deleted;
    counts.total += snapshot.history.completed + snapshot.history.deleted;
  }
  return counts;
}

/** A parent with open children is neither ready nor blocked: it waits for its children (docs/protocol.md, "Parents"). */
function countWith(tasks: readonly Task[], open: (task: Task) => readonly number[], hierarchy: Hierarchy): BoardCounts {
  const counts: BoardCounts = { total: 0, pending: 0, in_progress: 0, completed: 0, deleted: 0, ready: 0, blocked: 0 };
  for (const t of tasks) {
    counts.total++;
    counts[t.status]++;
    if (t.status === 'pending') {
      if (open(t).length) counts.blocked++;
      else if (t.owner === '' && hierarchy.openChildren(t.id).length === 0) counts.ready++;
    }
  }
  return counts;
}

// Internal: no open blockers. Never handed out (the public functions return fresh arrays).
const NONE: readonly number[] = [];

/**
 * openBlockers for the tasks of one snapshot, each computed once: a listing
 * needs them for its lines, its counts and its ready list, which on 10,000
 * tasks cost as much as reading the board through its index.
 */
function openBlockersOf(snapshot: BoardSnapshot): (task: Task) => readonly number[] {
  const lookup: TaskLookup = (id) => snapshot.byId.get(id);
  const memo = new Map<Task, number[]>();
  return (task) => {
    if (task.blockedBy.length === 0) return NONE;
    let open = memo.get(task);
    if (open === undefined) memo.set(task, (open = openBlockers(task, lookup)));
    return open;
  };
}

/** `[>] #2: Transform AST (agent-1: transforming)`, `[ ] #4: Run tests (blocked by: #2, #3)` (docs/protocol.md, "Output"). */
export function renderTaskLine(task: Task, lookup: TaskLookup, style: RenderStyle = PLAIN_STYLE, progress?: Progress): string {
  return taskLine(task, task.status === 'pending' ? openBlockers(task, lookup) : NONE, style, progress);
}

/** renderTaskLine with the task's open blockers already known (only a pending task's are used), and its children's progress when it has children. */
function taskLine(task: Task, open: readonly number[], style: RenderStyle, progress?: Progress): string {
  let notes = '';
  let paint = style.muted;
  if (inReview(task)) {
    notes = `${task.owner || 'unowned'}: waits for review`;
    paint = style.inProgress;
  } else if (task.status === 'in_progress') {
    const who = task.owner || 'unowned';
    notes = task.activeForm ? `${who}: ${task.activeForm}` : who;
    paint = style.inProgress;
  } else if (task.status === 'pending') {
    if (open.length) notes = `blocked by: ${open.map((id) => `#${id}`).join(', ')}`;
    if (task.owner) notes = notes ? `${notes}; owner: ${task.owner}` : `owner: ${task.owner}`;
    paint = open.length || task.owner ? style.blocked : style.ready;
  } else if (task.status === 'deleted') notes = 'deleted';
  else paint = style.completed;
  if (progress) {
    // `3/5 done`: a parent waits for its open children, so a pending one is not ready (docs/protocol.md, "Parents").
    notes = notes ? `${notes}; ${progress.done}/${progress.total} done` : `${progress.done}/${progress.total} done`;
    if (task.status === 'pending' && progress.done < progress.total) paint = style.blocked;
  }
  return paint(`${inReview(task) ? REVIEW_MARK : MARKS[task.status]} #${task.id}: ${task.subject}${planningTags(task)}${notes ? ` (${notes})` : ''}`);
}

/** What a finish that put the task in review says (docs/protocol.md, "Review"): who may approve it, and how. Plain text: the caller makes it printable. */
export function renderReviewWait(task: Task): string {
  const who = task.owner ? `someone other than ${task.owner}` : 'someone';
  return `#${task.id} waits for review; it completes when ${who} approves it ('tasks approve ${task.id}')`;
}

/** A task's review for `tasks show`: where it stands, and whether it is required; '' when the file says nothing of it. */
function reviewLine(task: Task): string {
  const r = task.review;
  if (!r) return '';
  const standing = inReview(task)
    ? `waiting since ${r.since ?? '?'}`
    : r.state === 'approved' || r.state === 'rejected'
      ? `${r.state} by ${r.by || '(nobody)'} at ${r.at ?? '?'}`
      : '';
  const rule = r.required === true ? 'required' : r.required === false ? 'not required' : '';
  return [standing, rule].filter(Boolean).join('; ');
}

/** ` P0 #ui #parser`: a priority other than the default, and the labels; '' for a task with neither. */
export function planningTags(task: Task): string {
  let tags = task.priority !== undefined && task.priority !== DEFAULT_PRIORITY ? ` P${task.priority}` : '';
  for (const label of task.labels ?? []) tags += ` #${label}`;
  return tags;
}

/** One line per problem file: `! path:line:col: message`. */
export function renderProblem(problem: TaskProblem, style: RenderStyle = PLAIN_STYLE): string {
  const at = problem.line !== undefined ? `:${problem.line}:${problem.column}` : '';
  return style.problem(`! ${problem.file}${at}: ${problem.message}`);
}

/** The summary line under a board: counts, and which tasks are ready right now. */
export function renderSummary(snapshot: BoardSnapshot): string {
  return summaryWith(snapshot, openBlockersOf(snapshot));
}

/**
 * The summary of `tasks` (a filtered listing's, or the whole board's):
 * counts, and the first ten ready tasks in the order claim --next takes
 * them (docs/protocol.md, "Order"), the one order "ready" has everywhere.
 * A filtered listing says first how many of the board's tasks it shows.
 */
function summaryWith(snapshot: BoardSnapshot, open: (task: Task) => readonly number[], matched?: readonly Task[], cache?: ReadySummaryCache): string {
  const tasks = matched ?? snapshot.tasks;
  const hierarchy = hierarchyOf(snapshot);
  const c = countWith(tasks, open, hierarchy);
  // A folded history (docs/protocol.md, "A board's history") is counted, not read.
  const folded = snapshot.history;
  if (folded && !matched) {
    c.completed += folded.completed;
    c.deleted += folded.deleted;
    c.total += folded.completed + folded.deleted;
  }
  const live = c.total - c.deleted;
  const lookup = boardLookup(snapshot);
  // Ready as isReady has it, from the blockers the listing computed already (and the open children: a parent waits for them).
  // The whole board's first ten come from the cache when its index is unchanged; a filtered listing ranks what it shows.
  const kept = matched ? undefined : cache;
  let first: readonly number[] = [];
  if (c.ready && kept?.known) first = kept.known;
  else if (c.ready) {
    const candidates = tasks.filter((t) => t.status === 'pending' && t.owner === '' && open(t).length === 0 && hierarchy.openChildren(t.id).length === 0);
    first = firstRanked(candidates, lookup, 10);
    kept?.found(first);
  }
  const ready = first.map((id) => `#${id}`);
  const parts: string[] = [];
  if (matched) {
    const onBoard = snapshot.tasks.reduce((n, t) => (t.status === 'deleted' ? n : n + 1), 0) + (folded?.completed ?? 0);
    parts.push(`${matched.length} of ${onBoard} task${onBoard === 1 ? '' : 's'} on the board`);
  }
  parts.push(`${c.completed}/${live} done`);
  const reviewing = c.in_progress ? tasks.reduce((n, t) => (inReview(t) ? n + 1 : n), 0) : 0;
  if (c.in_progress > reviewing) parts.push(`${c.in_progress - reviewing} in progress`);
  if (reviewing) parts.push(`${reviewing} in review`);
  parts.push(c.ready ? `ready: ${ready.join(', ')}${c.ready > 10 ? ` (+${c.ready - 10})` : ''}` : 'nothing ready');
  if (c.blocked) parts.push(`${c.blocked} blocked`);
  if (snapshot.problems.length) parts.push(`${snapshot.problems.length} bad file${snapshot.problems.length > 1 ? 's' : ''}`);
  return parts.join(' · ');
}

/** 99900 as `99,900`, without toLocaleString, whose first call loads Intl's data (15 ms of a listing). */
export function thousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The line a listing shows for a folded history: what it holds, and how to see it. */
export function historyLine(history: { completed: number; deleted: number }): string {
  const parts = [`${thousands(history.completed)} completed`];
  if (history.deleted) parts.push(`${thousands(history.deleted)} deleted`);
  return `… ${parts.join(' and ')} not listed: tasks list --all lists them`;
}

/** Whether a filter leaves out more than the deleted tasks (`--all` only adds them back). */
function isFiltered(filter: ListFilter): boolean {
  return Boolean(
    filter.status?.length || filter.owner !== undefined || filter.ready || filter.labels?.length || filter.priorities?.length || filter.grep !== undefined,
  );
}

/**
 * The board for people: one line per task, ascending id, then problems and a
 * summary. With `tree`, each task's children follow it, indented by two
 * spaces a level (`tasks list --tree`).
 */
export function renderBoard(
  snapshot: BoardSnapshot,
  filter: ListFilter = {},
  options: { summary?: boolean; style?: RenderStyle; tree?: boolean; readyCache?: ReadySummaryCache } = {},
): string {
  const style = options.style ?? PLAIN_STYLE;
  const open = openBlockersOf(snapshot);
  const hierarchy = hierarchyOf(snapshot);
  const matched = filterTasks(snapshot, filter);
  const line = (t: Task) => taskLine(t, t.status === 'pending' ? open(t) : NONE, style, hierarchy.progress(t.id));
  const lines = options.tree ? treeLines(matched, line) : matched.map(line);
  if (lines.length === 0)
    lines.push(snapshot.tasks.length || snapshot.history ? '(no tasks match)' : '(no tasks yet: add one with \'tasks create "subject"\')');
  // Where closed tasks would have been listed: `tasks ready` and a listing of open statuses list none.
  if (snapshot.history && !filter.ready && !filter.status?.length) lines.push(style.muted(historyLine(snapshot.history)));
  for (const p of snapshot.problems) lines.push(renderProblem(p, style));
  if (options.summary !== false && (snapshot.tasks.length || snapshot.history))
    lines.push(style.muted(summaryWith(snapshot, open, isFiltered(filter) ? matched : undefined, options.readyCache)));
  return lines.join('\n');
}

/**
 * `tasks`, in their order, each task's children (those among them) after it,
 * indented two spaces a level; a task whose parent is not among them is at
 * the top level, and so is each task of a cycle of parents made by hand
 * (which has no top), once.
 */
export function treeLines(tasks: readonly Task[], line: (task: Task) => string): string[] {
  const shown = new Set(tasks.map((t) => t.id));
  const children = new Map<number, Task[]>();
  for (const t of tasks) {
    if (t.parent === undefined || t.parent === t.id || !shown.has(t.parent)) continue;
    const list = children.get(t.parent);
    if (list) list.push(t);
    else children.set(t.parent, [t]);
  }
  const out: string[] = [];
  const seen = new Set<number>();
  const roots = tasks.filter((t) => t.parent === undefined || t.parent === t.id || !shown.has(t.parent));
  for (const root of [...roots, ...tasks]) {
    const stack: [Task, number][] = [[root, 0]];
    while (stack.length) {
      const [task, depth] = stack.pop()!;
      if (seen.has(task.id)) continue;
      seen.add(task.id);
      out.push(`${'  '.repeat(depth)}${line(task)}`);
      const kids = children.get(task.id) ?? [];
      for (let i = kids.length - 1; i >= 0; i--) stack.push([kids[i], depth + 1]);
    }
  }
  return out;
}

/** One line per task of one snapshot, each task's open blockers computed once (for the agents' board). */
export function createLineRenderer(snapshot: BoardSnapshot): { line(task: Task): string; summary(): string } {
  const open = openBlockersOf(snapshot);
  const hierarchy = hierarchyOf(snapshot);
  return {
    line: (task) => taskLine(task, task.status === 'pending' ? open(task) : NONE, PLAIN_STYLE, hierarchy.progress(task.id)),
    summary: () => summaryWith(snapshot, open),
  };
}

/**
 * A task in full, for `tasks show`; `boardVerify` is the board's check, shown
 * for a task without one of its own; with the board's `hierarchy`, its parents
 * and its children with their progress.
 */
export function renderTaskDetail(task: Task, lookup: TaskLookup, options: { boardVerify?: string; hierarchy?: Hierarchy } = {}): string {
  const hierarchy = options.hierarchy;
  const view = toTaskView(task, lookup);
  const progress = hierarchy?.progress(task.id);
  const waits = task.status === 'pending' && !!lookup.openChildren?.(task.id).length;
  const lines = [
    renderTaskLine(task, lookup, PLAIN_STYLE, progress),
    `  status:      ${task.status}${view.ready ? ' (ready)' : waits ? ' (waits for its children)' : inReview(task) ? ' (waits for review)' : ''}`,
  ];
  lines.push(`  owner:       ${task.owner || '(none)'}`);
  if (task.activeForm) lines.push(`  activeForm:  ${task.activeForm}`);
  if (task.parent !== undefined) lines.push(`  parent:      ${parentChain(task, lookup)}`);
  lines.push(`  blockedBy:   ${task.blockedBy.length ? task.blockedBy.map((id) => `#${id}`).join(', ') : '(none)'}`);
  lines.push(`  blocks:      ${task.blocks.length ? task.blocks.map((id) => `#${id}`).join(', ') : '(none)'}`);
  lines.push(`  priority:    P${priorityOf(task)}${task.priority === undefined || task.priority === DEFAULT_PRIORITY ? ' (default)' : ''}`);
  if (task.labels?.length) lines.push(`  labels:      ${task.labels.join(', ')}`);
  if (task.paths?.length) lines.push(`  paths:       ${task.paths.join(', ')}`);
  if (task.verify !== undefined) lines.push(`  verify:      ${task.verify}`);
  else if (options.boardVerify !== undefined) lines.push(`  verify:      ${options.boardVerify} (the board's)`);
  if (task.result !== undefined) {
    const [first, ...rest] = task.result.split('\n');
    lines.push(`  result:      ${first}`, ...rest.map((l) => `               ${l}`));
  }
  const review = reviewLine(task);
  if (review) lines.push(`  review:      ${review}`);
  const links = presentLinks(task);
  if (links.related) lines.push(`  related:     ${links.related.map((id) => `#${id}`).join(', ')}`);
  if (links.discoveredFrom) lines.push(`  discoveredFrom: ${links.discoveredFrom.map((id) => `#${id}`).join(', ')} (found while working on it)`);
  if (links.discovered) lines.push(`  discovered:  ${links.discovered.map((id) => `#${id}`).join(', ')} (found while working on this one)`);
  if (hierarchy && progress) {
    lines.push(`  children:    ${progress.done}/${progress.total} done`);
    for (const child of hierarchy.children(task.id))
      if (child.status !== 'deleted') lines.push(`    ${renderTaskLine(child, lookup, PLAIN_STYLE, hierarchy.progress(child.id))}`);
  }
  if (task.metadata && Object.keys(task.metadata).length) {
    for (const key of Object.keys(task.metadata)) lines.push(`  meta.${key}: ${JSON.stringify(task.metadata[key])}`);
  }
  if (task.description) {
    lines.push('', ...task.description.split('\n').map((l) => `  ${l}`));
  }
  if (task.notes?.length) {
    lines.push('', `  notes (${task.notes.length}):`);
    for (const note of task.notes) {
      const [first, ...rest] = note.text.split('\n');
      lines.push(`  - ${note.at} ${note.owner || '(nobody)'}: ${first}`, ...rest.map((l) => `      ${l}`));
    }
  }
  return lines.join('\n');
}

/** `#2: Parser, under #1: Ship v2`: a task's parent, then each ancestor above it. */
function parentChain(task: Task, lookup: TaskLookup): string {
  const names = ancestorsOf(task, lookup).map((id) => {
    const parent = lookup(id);
    return parent ? `#${id}: ${parent.subject}` : `#${id} (missing)`;
  });
  return names.join(', under ');
}
