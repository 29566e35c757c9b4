/**
 * Moving a task to another id, and everything that names it with it: the
 * edges of the tasks that wait for it or that it waits for, its children's
 * `parent`, the `#N`
 * mentions in the text written on its side, and its worktree's branch. Used
 * where two sides handed out one id to two tasks: a sync (sync/board-merge.ts)
 * and a branch merge (git/branch-merge.ts).
 */
import { spawnSync } from 'node:child_process';
import type { Task } from '../format/format.js';
import { LINK_FIELDS } from '../format/task-links.js';

/** `#from` as a mention in text (not `#12` when moving `#1`, not `&#1;`). */
function mentionPattern(from: number): RegExp {
  return new RegExp(`(?<![\\w&#])#${from}(?!\\d)`, 'g');
}

/** Rewrites `#from` mentions to `#to` in a text. */
export function moveMentionsIn(text: string, moves: ReadonlyMap<number, number>): string {
  let next = text;
  for (const [from, to] of moves) next = next.replace(mentionPattern(from), `#${to}`);
  return next;
}

/**
 * Rewrites `#from` mentions to `#to` in the text of `task` that its side
 * wrote: all of it, or, given the version both sides started from
 * (`before`), only a description that changed since and the notes added
 * since. Returns whether anything changed.
 */
export function moveMentions(task: Task, before: Task | undefined, moves: ReadonlyMap<number, number>): boolean {
  let changed = false;
  const rewrite = (text: string) => {
    const next = moveMentionsIn(text, moves);
    if (next !== text) changed = true;
    return next;
  };
  if (!before || before.description !== task.description) task.description = rewrite(task.description);
  if (task.notes) {
    const known = new Set((before?.notes ?? []).map((n) => `${n.at}\0${n.owner}\0${n.text}`));
    task.notes = task.notes.map((n) => (known.has(`${n.at}\0${n.owner}\0${n.text}`) ? n : { ...n, text: rewrite(n.text) }));
  }
  return changed;
}

/** Replaces moved ids in a task's edges, soft links and parent. */
export function moveEdges(task: Task, moves: ReadonlyMap<number, number>): boolean {
  let moved = false;
  if (task.parent !== undefined && moves.has(task.parent)) {
    task.parent = moves.get(task.parent);
    moved = true;
  }
  for (const key of ['blockedBy', 'blocks', ...LINK_FIELDS] as const) {
    const ids = task[key];
    if (!ids?.some((x) => moves.has(x))) continue;
    task[key] = [...new Set(ids.map((x) => moves.get(x) ?? x))].sort((a, b) => a - b);
    moved = true;
  }
  return moved;
}

/** The branch a task's worktree gets for id `id` under the board's `branchPattern`. */
export function taskBranch(pattern: string, id: number): string {
  return pattern.replaceAll('{id}', String(id));
}

/**
 * Renames a task's branch in the repository at `cwd`; true when it is (or
 * already was) renamed. Idempotent: a transaction that starts over runs it again.
 */
export function renameBranch(cwd: string, from: string, to: string): boolean {
  const has = (name: string) => spawnSync('git', ['rev-parse', '--verify', '--quiet', `refs/heads/${name}`], { cwd }).status === 0;
  if (!has(from)) return has(to);
  if (has(to)) return false;
  return spawnSync('git', ['branch', '-m', from, to], { cwd }).status === 0;
}
