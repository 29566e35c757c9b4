import type { Column, WebEvent, WebState, WebTask } from '../src/wire.js';

export const COLUMNS: { id: Column; title: string }[] = [
  { id: 'ready', title: 'Ready' },
  { id: 'blocked', title: 'Blocked' },
  { id: 'in_progress', title: 'In progress' },
  { id: 'review', title: 'Review' },
  { id: 'done', title: 'Done' },
];

/** The columns on the page: Review only on a board that uses review (its config requires it, or a task waits for it or requires it). */
export function shownColumns(state: WebState): { id: Column; title: string }[] {
  const usesReview = state.reviewLane || state.tasks.some((t) => t.column === 'review' || (t.review?.required === true && t.column !== 'done'));
  return COLUMNS.filter((c) => c.id !== 'review' || usesReview);
}

/** What dropping a card on a column does: one command of the board, or a refusal in words. */
export type Move = { kind: 'call'; verb: 'start' | 'done' | 'release' | 'approve'; path: string } | { kind: 'refuse'; message: string } | { kind: 'none' };

const list = (ids: number[]) => ids.map((id) => `#${id}`).join(', ');

/**
 * The command behind a drag (docs/protocol.md, "Life cycle"): to In progress
 * is `tasks start`, to Done `tasks done`, from In progress back to Ready
 * `tasks release`. The server decides whether it may happen (a blocked task,
 * someone else's …) and its message is what the person sees. The other
 * moves have no command, and the page says why.
 */
export function planMove(task: WebTask, to: Column): Move {
  const from = task.column;
  if (from === to) return { kind: 'none' };
  if (from === 'done') return { kind: 'refuse', message: `#${task.id} is completed, and a closed task is never reopened; create a new task instead` };
  // A task waiting for review leaves it by a verdict (docs/protocol.md, "Review"): dropped on Done it is approved; sent back with its Reject button and a note.
  if (from === 'review') {
    if (to === 'done') return { kind: 'call', verb: 'approve', path: `/tasks/${task.id}/approve` };
    return { kind: 'refuse', message: `#${task.id} waits for review: approve it, or send it back with Reject and a note of what to fix` };
  }
  if (to === 'review') return { kind: 'refuse', message: `#${task.id} goes into review when it is finished (Done) and requires review` };
  if (to === 'done') return { kind: 'call', verb: 'done', path: `/tasks/${task.id}/done` };
  if (to === 'in_progress') return { kind: 'call', verb: 'start', path: `/tasks/${task.id}/start` };
  if (to === 'ready') {
    if (from === 'in_progress') return { kind: 'call', verb: 'release', path: `/tasks/${task.id}/release` };
    return { kind: 'refuse', message: `#${task.id} waits for ${list(task.openBlockers)}; finish those first, or remove the edge in the task's panel` };
  }
  if (from === 'in_progress')
    return { kind: 'refuse', message: `#${task.id} is in progress; a task is blocked only by the tasks it waits for: add one in its panel` };
  return { kind: 'refuse', message: `#${task.id} is blocked only by tasks it waits for: add one in its panel` };
}

export { matches } from '../src/task-match.js';

/** The priority a task has when none is set (docs/protocol.md, "Order"). */
export const DEFAULT_PRIORITY = 2;

/** `P0` … `P4`. */
export const PRIORITIES = [0, 1, 2, 3, 4] as const;

/** The Ready column in the order `claim --next` takes it (the server's claimOrder), the id breaking any tie. */
export function claimOrder(a: WebTask, b: WebTask): number {
  return (a.claimOrder ?? Infinity) - (b.claimOrder ?? Infinity) || a.id - b.id;
}

/** Labels typed as the CLI's `--label` takes them: `ui, parser` (a label may hold spaces, so only commas part them). */
export function typedLabels(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** True when the search text finds the event (its task, type, owner or other fields). */
export function eventMatches(event: WebEvent, query: string, found: Set<number> | undefined): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  if (event.task !== undefined && found?.has(event.task)) return true;
  return JSON.stringify(event).toLowerCase().includes(q);
}

/** Keeps the previous object of every task that did not change, so unchanged cards are not drawn again. */
export function keepUnchanged(previous: WebState | undefined, next: WebState): WebState {
  if (!previous) return next;
  const before = new Map(previous.tasks.map((t) => [t.id, t]));
  const keys = new Map<WebTask, string>();
  const key = (t: WebTask) => keys.get(t) ?? (keys.set(t, JSON.stringify(t)), keys.get(t)!);
  const tasks = next.tasks.map((t) => {
    const old = before.get(t.id);
    return old && key(old) === key(t) ? old : t;
  });
  return { ...next, tasks };
}

/** `4m 05s`, `1h 12m`, `expired 3s ago`. */
export function formatLeft(ms: number): string {
  if (ms <= 0) return `expired ${formatSpan(-ms)} ago`;
  return `${formatSpan(ms)} left`;
}

function formatSpan(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d`;
}

/** `2026-01-02 10:15` in local time, from an ISO time. */
export function dateTime(at: string): string {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return at;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** `10:15:03` from an ISO time. */
export function clock(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? at : d.toTimeString().slice(0, 8);
}

/** One event in a few words (the fields `tasks events` prints after the type). */
export function describeEvent(e: WebEvent): string {
  const { seq: _seq, at: _at, type: _type, task: _task, owner: _owner, tx: _tx, ...rest } = e;
  return Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
}

/** The Done column shows the latest completions first: by the event that completed them, else the highest id. */
export function doneOrder(a: WebTask, b: WebTask): number {
  return (b.completedSeq ?? 0) - (a.completedSeq ?? 0) || b.id - a.id;
}

/**
 * The kanban's columns: each in its order (Ready in claim order, Review by
 * when it entered, Done latest first, the others by id), only what the
 * search found, with the children under their parents.
 */
export function kanbanColumns(tasks: WebTask[], found: Set<number> | undefined): Record<Column, GroupedCard[]> {
  const by: Record<Column, WebTask[]> = { ready: [], blocked: [], in_progress: [], review: [], done: [] };
  for (const t of tasks) if (!found || found.has(t.id)) by[t.column].push(t);
  by.ready.sort(claimOrder);
  by.review.sort((a, b) => (a.review?.since ?? '').localeCompare(b.review?.since ?? '') || a.id - b.id);
  by.done.sort(doneOrder);
  const grouped = {} as Record<Column, GroupedCard[]>;
  for (const column of Object.keys(by) as Column[]) grouped[column] = groupUnderParents(by[column]);
  return grouped;
}

/** A card as its column stands it: under its parent (`depth` 1 for a child right under it), or on its own with its parent elsewhere (`parentElsewhere`). */
export interface GroupedCard {
  task: WebTask;
  depth: number;
  /** The parent's id, for a child whose parent does not stand above it in the column. */
  parentElsewhere?: number;
}

/**
 * A column's cards, already in the column's order, with each child right
 * under its parent when both stand in it (docs/decisions.md, "Parents on
 * the boards"): a group takes the place of its best-placed member, and so
 * do the children within it; a cycle of parents made by hand is cut at
 * its first task in the column's order, after the other cards. The
 * terminal board does the same (packages/terminal-board/src/board-model.ts).
 */
export function groupUnderParents(cards: WebTask[]): GroupedCard[] {
  const at = new Map(cards.map((t, i) => [t.id, i]));
  const under = new Map<number, WebTask[]>();
  for (const t of cards) {
    if (t.parent === undefined || !at.has(t.parent)) continue;
    const list = under.get(t.parent);
    if (list) list.push(t);
    else under.set(t.parent, [t]);
  }
  if (under.size === 0) return cards.map((task) => ({ task, depth: 0, ...(task.parent !== undefined ? { parentElsewhere: task.parent } : {}) }));
  // Each card's best-placed member of the group under it: walking the column in its order, a card's place reaches every ancestor not reached before.
  const best = new Map<number, number>();
  cards.forEach((t, i) => {
    for (let up: WebTask | undefined = t; up && !best.has(up.id); up = up.parent === undefined ? undefined : cards[at.get(up.parent) ?? -1]) best.set(up.id, i);
  });
  const byBest = (list: WebTask[]) => [...list].sort((a, b) => best.get(a.id)! - best.get(b.id)!);
  const out: GroupedCard[] = [];
  const placed = new Set<number>();
  const place = (task: WebTask, depth: number) => {
    placed.add(task.id);
    out.push({ task, depth, ...(depth === 0 && task.parent !== undefined ? { parentElsewhere: task.parent } : {}) });
    for (const child of byBest(under.get(task.id) ?? [])) if (!placed.has(child.id)) place(child, depth + 1);
  };
  for (const root of byBest(cards.filter((t) => t.parent === undefined || !at.has(t.parent)))) place(root, 0);
  for (const t of cards) if (!placed.has(t.id)) place(t, 0);
  return out;
}
