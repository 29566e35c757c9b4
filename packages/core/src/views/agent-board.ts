/**
 * The board an agent gets back from every call of the `todo` tool and from
 * `tasks prime`: the open work in full, the history folded into one line,
 * and, past a budget of characters, the least urgent open work counted
 * instead of listed. It rides in every result, so its size is paid on every
 * call: on a long-lived board most tasks are done, and listing them grew the
 * echo without bound. The same board gives the same bytes (no clock, no
 * random order), so a model's prompt cache keeps working across calls.
 */
import { DEFAULT_CONFIG } from '../board-config.js';
import { inReview, type Task } from '../format/format.js';
import { isReady, type TaskLookup } from '../graph/graph.js';
import { boardLookup } from '../graph/hierarchy.js';
import { rankTasks, readyOrder } from '../graph/ready-order.js';
import type { BoardSnapshot } from '../store.js';
import { createLineRenderer, renderProblem } from './render.js';

/** Bad files listed one per line; the rest are counted (`tasks doctor` lists them all). */
const PROBLEM_LINES = 5;
const OPEN = '<TASK_BOARD>\n';
const CLOSE = '\n</TASK_BOARD>';

/** How the agents' board is cut. */
export interface AgentBoardOptions {
  /** At most this many characters, the wrapper included (default: config.json's default `echoBudget`). */
  budget?: number;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** `<TASK_BOARD>…</TASK_BOARD>` for agents (docs/protocol.md, "Output"). */
export function renderAgentBoard(snapshot: BoardSnapshot, options: AgentBoardOptions = {}): string {
  const budget = options.budget ?? DEFAULT_CONFIG.echoBudget;
  const render = createLineRenderer(snapshot);
  const open: Task[] = [];
  // A board read for its open work (open-view.ts) counts its history without holding it.
  let completed = snapshot.history?.completed ?? 0;
  let deleted = snapshot.history?.deleted ?? 0;
  for (const task of snapshot.tasks) {
    if (task.status === 'completed') completed++;
    else if (task.status === 'deleted') deleted++;
    else open.push(task);
  }
  const tail = tailLines(snapshot, completed, deleted, render.summary);
  const fixed = OPEN.length + CLOSE.length + tail.reduce((n, line) => n + line.length + 1, 0);
  const lines = new Map(open.map((task) => [task, render.line(task)]));
  const reviewing = open.some(inReview);
  let all = fixed + (reviewing ? REVIEW_HEADER.length + 1 : 0);
  for (const line of lines.values()) all += line.length + 1;
  if (all <= budget) return wrap([...sectioned(open, lines), ...tail]);
  const shown = mostUrgentFitting(open, lines, snapshot, budget - fixed - (reviewing ? REVIEW_HEADER.length + 1 : 0));
  const body = sectioned(
    open.filter((task) => shown.has(task)),
    lines,
  );
  return wrap([...body, foldedOpenLine(open, shown, snapshot), ...tail]);
}

/** The head of the section of tasks waiting for review. */
const REVIEW_HEADER = 'needs review (someone other than its owner approves or rejects it):';

/** The open work's lines: the work to do, then the tasks waiting for review in a section of their own (docs/protocol.md, "Review"). */
function sectioned(open: Task[], lines: Map<Task, string>): string[] {
  const review = open.filter(inReview);
  const work = review.length ? open.filter((task) => !inReview(task)) : open;
  return [...work.map((task) => lines.get(task)!), ...(review.length ? [REVIEW_HEADER, ...review.map((task) => lines.get(task)!)] : [])];
}

function wrap(lines: string[]): string {
  return `${OPEN}${lines.join('\n')}${CLOSE}`;
}

/** What follows the open work: the history's line, the bad files, and the summary. */
function tailLines(snapshot: BoardSnapshot, completed: number, deleted: number, summary: () => string): string[] {
  const lines: string[] = [];
  if (snapshot.tasks.length === 0) lines.push('(no tasks yet: add one with create, or \'tasks create "subject"\')');
  const closed = [completed ? plural(completed, 'completed task') : '', deleted ? plural(deleted, 'deleted task') : ''].filter(Boolean);
  if (closed.length) lines.push(`(${closed.join(' and ')} not shown: list returns every task, get shows one)`);
  for (const problem of snapshot.problems.slice(0, PROBLEM_LINES)) lines.push(renderProblem(problem));
  if (snapshot.problems.length > PROBLEM_LINES)
    lines.push(`! and ${plural(snapshot.problems.length - PROBLEM_LINES, 'more bad file')} ('tasks doctor' lists them)`);
  if (snapshot.tasks.length) lines.push(summary());
  return lines;
}

/** Room kept for the line that counts the open tasks not shown. */
const FOLD_LINE_ROOM = 160;

/**
 * The open tasks to list when they do not all fit: the most urgent first
 * (in progress, then the ready ones in the order claims take them, then the
 * waiting ones by the same rank) until the next would pass the budget; so
 * every task folded is less urgent than every task shown.
 */
function mostUrgentFitting(open: Task[], lines: Map<Task, string>, snapshot: BoardSnapshot, room: number): Set<Task> {
  const lookup: TaskLookup = boardLookup(snapshot);
  const byId = (id: number) => snapshot.byId.get(id)!;
  const inProgress = open.filter((task) => task.status === 'in_progress');
  const pending = open.filter((task) => task.status === 'pending');
  const ready = readyOrder(pending, lookup).map((rank) => byId(rank.id));
  const readySet = new Set(ready);
  const waiting = rankTasks(
    pending.filter((task) => !readySet.has(task)),
    lookup,
  ).map((rank) => byId(rank.id));
  const shown = new Set<Task>();
  let left = room - FOLD_LINE_ROOM;
  for (const task of [...inProgress, ...ready, ...waiting]) {
    const cost = lines.get(task)!.length + 1;
    if (cost > left) break;
    shown.add(task);
    left -= cost;
  }
  return shown;
}

/** `(… 1200 more open tasks not shown: 40 ready, 1160 waiting; list returns every task)`. */
function foldedOpenLine(open: Task[], shown: Set<Task>, snapshot: BoardSnapshot): string {
  const lookup: TaskLookup = boardLookup(snapshot);
  let inProgress = 0;
  let ready = 0;
  let waiting = 0;
  for (const task of open) {
    if (shown.has(task)) continue;
    if (task.status === 'in_progress') inProgress++;
    else if (isReady(task, lookup)) ready++;
    else waiting++;
  }
  const kinds = [inProgress ? `${inProgress} in progress` : '', ready ? `${ready} ready` : '', waiting ? `${waiting} waiting` : ''].filter(Boolean);
  const hidden = inProgress + ready + waiting;
  return `(… ${plural(hidden, 'more open task')} not shown, less urgent than those above: ${kinds.join(', ')}; list returns every task)`;
}
