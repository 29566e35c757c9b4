import { fitWidth } from '@dotasks/core/terminal';
import {
  ancestorsOf,
  boardLookup,
  hierarchyOf,
  inReview,
  isClosed,
  openBlockers,
  planningTags,
  priorityOf,
  rankTasks,
  shortBranchStatus,
  type BoardSnapshot,
  type BranchStatus,
  type Lease,
  type Progress,
  type Task,
  type TaskEvent,
  type TaskLookup,
} from '@dotasks/core/internal';

/**
 * What the board shows, computed from a snapshot: no Ink, no files, so it is
 * tested in process. The view (board-view.ts) only lays these out.
 */

export const COLUMN_KEYS = ['ready', 'blocked', 'in_progress', 'review', 'done'] as const;
export type ColumnKey = (typeof COLUMN_KEYS)[number];

export const COLUMN_TITLES: Record<ColumnKey, string> = {
  ready: 'Ready',
  blocked: 'Blocked',
  in_progress: 'In progress',
  review: 'Review',
  done: 'Done',
};

/** One card: the task, and what its column says about it. */
export interface Card {
  task: Task;
  /** Open blockers (pending tasks only). */
  waitsFor: number[];
  /** The claim record of an in-progress task, when there is one (of a task in review: its reviewer's). */
  lease?: Lease;
  /** How deep the card stands under a parent in its column: 0 (or absent) for a card of its own, 1 for a child right under its parent. */
  depth?: number;
  /** A parent's progress (its children's, deleted ones not counted). */
  progress?: Progress;
  /** The parent of a card that does not stand under it in the column (the parent is in another column, filtered out, or missing). */
  parentRef?: { id: number; subject?: string };
  /** Its task branch against the merge target, on the cards of In progress, Review and Done. */
  branch?: BranchStatus;
}

/**
 * The cards of each column, and the columns on screen: Review only on a
 * board that uses review (docs/protocol.md, "Review"). `pending`: the
 * board's pending tasks as Ready and Blocked stand them, whatever the
 * search or priority filter shows, for the footer.
 */
export type Columns = Record<ColumnKey, Card[]> & { readonly shown: readonly ColumnKey[]; readonly pending: { ready: number; blocked: number } };

/** Options for buildColumns. */
export interface ColumnOptions {
  /** Claim records by task id. */
  leases?: ReadonlyMap<number, Lease>;
  /** Seq of each task's last `completed` event: Done lists the latest first. */
  completedSeq?: ReadonlyMap<number, number>;
  /** Only cards whose subject or description contains this (case-insensitive). */
  search?: string;
  /** Only cards of this priority (the `p` key cycles it); undefined: all. */
  priority?: number;
  /** Show the Review column even while nothing waits for review (the board's config.json requires review). */
  reviewLane?: boolean;
  /** Each task branch against the merge target, by task id (the source's `branches`). */
  branches?: ReadonlyMap<number, BranchStatus>;
}

/** The priority filters the `p` key cycles through: all, then P0 … P4, then all again. */
export function nextPriorityFilter(current: number | undefined): number | undefined {
  if (current === undefined) return 0;
  return current >= 4 ? undefined : current + 1;
}

/** A card's first line: `#3 Subject P0 #ui`. */
export function cardTitle(task: Task): string {
  return `#${task.id} ${task.subject}${planningTags(task)}`;
}

/** True when the task's subject or description contains the text, ignoring case. */
export function matchesSearch(task: Task, search: string | undefined): boolean {
  const needle = search?.trim().toLowerCase();
  if (!needle) return true;
  return task.subject.toLowerCase().includes(needle) || task.description.toLowerCase().includes(needle);
}

/**
 * Sorts the board into the four columns. Ready holds the pending tasks with
 * no open blocker (docs/protocol.md, "Ready"), assigned ones included since
 * they are ready for their assignee, in the order `claim --next` takes them
 * (docs/protocol.md, "Order": priority, the chain behind, id; the core's
 * rankTasks, so an agent's next task is the first one it may take); Blocked
 * the pending tasks that wait, by id;
 * In progress by id; Done the completed ones, latest completion first
 * (by the event log; tasks it does not know, e.g. completed by hand before
 * the log began, follow by descending id). Deleted tasks are not shown.
 */
export function buildColumns(snapshot: BoardSnapshot, options: ColumnOptions = {}): Columns {
  // Knows each task's open children: a parent waits for them as for its blockers (docs/protocol.md, "Parents").
  const lookup = boardLookup(snapshot);
  const cards: Record<ColumnKey, Card[]> = { ready: [], blocked: [], in_progress: [], review: [], done: [] };
  // The Review column shows on a board that uses review: its config says so, or a task requires it or waits for it.
  const usesReview = options.reviewLane === true || snapshot.tasks.some((t) => inReview(t) || (!isClosed(t.status) && t.review?.required === true));
  const pending = { ready: 0, blocked: 0 };
  const columns: Columns = { ...cards, shown: COLUMN_KEYS.filter((key) => key !== 'review' || usesReview), pending };
  for (const task of snapshot.tasks) {
    const waitsFor = task.status === 'pending' ? [...openBlockers(task, lookup), ...(lookup.openChildren?.(task.id) ?? [])] : undefined;
    if (waitsFor) pending[waitsFor.length ? 'blocked' : 'ready']++;
    if (task.status === 'deleted' || !matchesSearch(task, options.search)) continue;
    if (options.priority !== undefined && priorityOf(task) !== options.priority) continue;
    if (waitsFor) columns[waitsFor.length ? 'blocked' : 'ready'].push({ task, waitsFor });
    else columns[inReview(task) ? 'review' : task.status === 'in_progress' ? 'in_progress' : 'done'].push(workCard(task, options));
  }
  for (const key of COLUMN_KEYS) if (key !== 'done') columns[key].sort((a, b) => a.task.id - b.task.id);
  const rank = new Map(
    rankTasks(
      columns.ready.map((c) => c.task),
      lookup,
    ).map((r, at) => [r.id, at]),
  );
  columns.ready.sort((a, b) => rank.get(a.task.id)! - rank.get(b.task.id)!);
  // The review queue's order: the one that entered review first, first (as `tasks review` lists it).
  columns.review.sort((a, b) => (a.task.review?.since ?? '').localeCompare(b.task.review?.since ?? '') || a.task.id - b.task.id);
  const seq = (card: Card) => options.completedSeq?.get(card.task.id) ?? -1;
  columns.done.sort((a, b) => seq(b) - seq(a) || b.task.id - a.task.id);
  const hierarchy = hierarchyOf(snapshot);
  if (!hierarchy.empty) for (const key of COLUMN_KEYS) columns[key] = groupColumn(columns[key], snapshot, hierarchy);
  return columns;
}

/** The card of a task past pending: its claim record (none in Done) and its branch's status. */
function workCard(task: Task, options: ColumnOptions): Card {
  const card: Card = { task, waitsFor: [] };
  const lease = task.status === 'completed' ? undefined : options.leases?.get(task.id);
  if (lease) card.lease = lease;
  const branch = options.branches?.get(task.id);
  if (branch) card.branch = branch;
  return card;
}

/**
 * A column's cards with each child right under its parent when both stand
 * in it (docs/decisions.md, "Parents on the boards"): a group takes the
 * place of its best-placed member (Ready's claim order, Done's latest
 * first), and so do the children within it. A parent card gets its
 * progress; a child whose parent is not above it gets a `parentRef`. A
 * cycle of parents made by hand is cut at its first task in the column's
 * order, after the other cards.
 */
function groupColumn(cards: Card[], snapshot: BoardSnapshot, hierarchy: ReturnType<typeof hierarchyOf>): Card[] {
  const column = new Map(cards.map((card, i) => [card.task.id, i]));
  const under = new Map<number, Card[]>();
  for (const card of cards) {
    const parent = card.task.parent;
    if (parent === undefined || !column.has(parent)) continue;
    const list = under.get(parent);
    if (list) list.push(card);
    else under.set(parent, [card]);
  }
  // Each card's best-placed member of the group under it: walking the column in its order, a card's place reaches every ancestor not reached before.
  const best = new Map<number, number>();
  cards.forEach((card, i) => {
    for (let at: Card | undefined = card; at && !best.has(at.task.id); at = cards[at.task.parent === undefined ? -1 : (column.get(at.task.parent) ?? -1)])
      best.set(at.task.id, i);
  });
  const byBest = (list: Card[]) => [...list].sort((a, b) => best.get(a.task.id)! - best.get(b.task.id)!);
  const out: Card[] = [];
  const placed = new Set<number>();
  const place = (card: Card, depth: number) => {
    placed.add(card.task.id);
    const progress = hierarchy.progress(card.task.id);
    const parent = card.task.parent;
    const parentTask = parent === undefined ? undefined : snapshot.byId.get(parent);
    const parentRef = depth === 0 && parent !== undefined && parentTask?.status !== 'deleted' ? { id: parent, subject: parentTask?.subject } : undefined;
    if (!depth && !progress && !parentRef) out.push(card);
    else {
      const grouped: Card = { task: card.task, waitsFor: card.waitsFor };
      if (card.lease) grouped.lease = card.lease;
      if (card.branch) grouped.branch = card.branch;
      if (depth) grouped.depth = depth;
      if (progress) grouped.progress = progress;
      if (parentRef) grouped.parentRef = parentRef;
      out.push(grouped);
    }
    for (const child of byBest(under.get(card.task.id) ?? [])) if (!placed.has(child.task.id)) place(child, depth + 1);
  };
  for (const root of byBest(cards.filter((c) => c.task.parent === undefined || !column.has(c.task.parent)))) place(root, 0);
  // What is left stands in a cycle of parents: each from where the column has it.
  for (const card of cards) if (!placed.has(card.task.id)) place(card, 0);
  return out;
}

/** A card's first line as its column shows it: indented under its parent (`└ #5 …`), a parent with its progress (`(3/5 done)`). */
export function cardHeading(card: Card): string {
  const depth = card.depth ?? 0;
  const indent = depth ? `${'  '.repeat(depth - 1)}└ ` : '';
  const progress = card.progress ? ` (${card.progress.done}/${card.progress.total} done)` : '';
  return `${indent}${cardTitle(card.task)}${progress}`;
}

/** The line of a child whose parent stands elsewhere: `↑ #4 Epic…`, the subject cut short (columns are narrow). */
function parentLine(ref: NonNullable<Card['parentRef']>): string {
  return ref.subject === undefined ? `↑ #${ref.id} (missing)` : `↑ #${ref.id} ${fitWidth(ref.subject, 22)}`;
}

/** `14:59 left`, `1h02m left`, `expired`, or `no expiry` for a person's claim; undefined without a record. */
export function leaseLeft(lease: Lease | undefined, now = Date.now()): string | undefined {
  if (!lease) return undefined;
  if (lease.expiresAt === null) return 'no expiry';
  const ms = Date.parse(lease.expiresAt) - now;
  if (!Number.isFinite(ms)) return undefined;
  if (ms <= 0) return 'expired';
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}h${pad(m)}m left` : `${m}:${pad(s)} left`;
}

/** The worktree a task is worked on in: the claim record's, else the task's `metadata.worktree`. */
export function worktreeOf(card: Card): string | undefined {
  const fromTask = card.task.metadata?.worktree;
  return card.lease?.worktree ?? (typeof fromTask === 'string' && fromTask ? fromTask : undefined);
}

/** The lines of a card below its title, for its column. */
export function cardDetails(card: Card, column: ColumnKey, now = Date.now()): string[] {
  const own = columnDetails(card, column, now);
  return card.parentRef ? [parentLine(card.parentRef), ...own] : own;
}

/** A card's branch line: `⎇ ↑2 ↓1 task/4`, `⎇ conflicts …`, `⎇ merged task/4`; the status first, so a narrow column cuts the name, not the status. */
export function branchLine(status: BranchStatus): string {
  return `⎇ ${shortBranchStatus(status)} ${status.branch}`;
}

function columnDetails(card: Card, column: ColumnKey, now: number): string[] {
  const lines = workDetails(card, column, now);
  return card.branch && (column === 'in_progress' || column === 'review' || column === 'done') ? [...lines, branchLine(card.branch)] : lines;
}

function workDetails(card: Card, column: ColumnKey, now: number): string[] {
  const { task } = card;
  if (column === 'blocked') return [`waits for ${card.waitsFor.map((id) => `#${id}`).join(', ')}${task.owner ? `; for ${task.owner}` : ''}`];
  if (column === 'ready') return task.owner ? [`for ${task.owner}`] : [];
  if (column === 'review') {
    // Short: five columns share the width.
    const lines = [task.owner ? `${task.owner}'s work` : 'nobody owns it'];
    if (card.lease?.review) lines.push(`reviewing: ${card.lease.owner}`);
    return lines;
  }
  if (column === 'in_progress') {
    const lines = [task.activeForm ? `${task.owner || 'unowned'}: ${task.activeForm}` : task.owner || 'unowned'];
    const left = leaseLeft(card.lease, now);
    if (left) lines.push(`lease ${left}`);
    const worktree = worktreeOf(card);
    if (worktree) lines.push(`wt ${worktree}`);
    return lines;
  }
  return [];
}

/**
 * A task's place in the hierarchy for its detail: the chain of its parents
 * (`parent: #2 Story (pending) · under #1 Epic (pending)`) and its children
 * with their status, under their progress (`children: 1/2 done`).
 */
export function familyLines(task: Task, snapshot: BoardSnapshot): string[] {
  const lookup = (id: number) => snapshot.byId.get(id);
  const ref = (id: number) => {
    const t = lookup(id);
    return t ? `#${id} ${t.subject} (${t.status.replace('_', ' ')})` : `#${id} (missing)`;
  };
  const lines: string[] = [];
  const chain = ancestorsOf(task, lookup);
  if (chain.length) lines.push(`parent: ${chain.map((id, i) => (i ? `under ${ref(id)}` : ref(id))).join(' · ')}`);
  const hierarchy = hierarchyOf(snapshot);
  const children = hierarchy.children(task.id).filter((t) => t.status !== 'deleted');
  if (children.length) {
    const progress = hierarchy.progress(task.id);
    lines.push(`children: ${progress ? `${progress.done}/${progress.total} done` : ''}`);
    for (const child of children) lines.push(`  ${ref(child.id)}`);
  }
  return lines;
}

/** The notes of a task as lines (`2026-01-01T09:00:00.000Z ann: text`), oldest first; undefined when it has none. */
export function notesOf(task: Task): string[] | undefined {
  const notes: unknown = task.notes ?? task.extra?.notes;
  if (!Array.isArray(notes) || notes.length === 0) return undefined;
  return notes.map((note: unknown) => {
    if (typeof note === 'string') return note;
    const n = note as Partial<Record<'at' | 'owner' | 'text', unknown>>;
    if (n && typeof n.at === 'string' && typeof n.owner === 'string' && typeof n.text === 'string') return `${n.at} ${n.owner || '(nobody)'}: ${n.text}`;
    return JSON.stringify(note);
  });
}

/** One event for the status line, at local time: `12:01:33 completed #2 by ann`. */
export function describeEvent(event: TaskEvent): string {
  const at = new Date(event.at);
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = Number.isNaN(at.getTime()) ? event.at : `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
  return `${time} ${event.type}${event.task !== undefined ? ` #${event.task}` : ''}${event.owner ? ` by ${event.owner}` : ''}`;
}

/** Where the selection is: a column, and an index into it (the task id keeps it on its card across redraws). */
export interface Selection {
  column: ColumnKey;
  index: number;
  id?: number;
}

/** The selection after the board changed: on the same task if it is still in that column, else at the same place. */
export function settleSelection(selection: Selection, columns: Columns): Selection {
  const cards = columns[selection.column];
  const at = selection.id === undefined ? -1 : cards.findIndex((c) => c.task.id === selection.id);
  const index = at >= 0 ? at : Math.max(0, Math.min(selection.index, cards.length - 1));
  return { column: selection.column, index, id: cards[index]?.task.id };
}

/** Moves the selection: dx across columns, dy within one. */
export function moveSelection(selection: Selection, columns: Columns, dx: number, dy: number): Selection {
  const current = settleSelection(selection, columns);
  if (dx !== 0) {
    const shown = columns.shown;
    const at = Math.max(0, shown.indexOf(current.column));
    const column = shown[Math.max(0, Math.min(shown.length - 1, at + dx))];
    return settleSelection({ column, index: current.index }, columns);
  }
  const cards = columns[current.column];
  const index = Math.max(0, Math.min(cards.length - 1, current.index + dy));
  return { column: current.column, index, id: cards[index]?.task.id };
}

/** The first card to draw so that the selected one is visible, given each card's height and the room. */
export function scrollStart(heights: number[], selected: number, room: number, previous = 0): number {
  let start = Math.max(0, Math.min(previous, selected));
  const fits = (from: number) => {
    let used = from > 0 ? 1 : 0; // the "↑ N more" line
    for (let i = from; i <= selected; i++) used += heights[i] ?? 0;
    if (selected < heights.length - 1) used += 1; // the "↓ N more" line
    return used <= room;
  };
  while (start < selected && !fits(start)) start++;
  return start;
}
