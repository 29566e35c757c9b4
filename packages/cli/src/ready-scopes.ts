/**
 * What file scopes say about the ready list: which ready tasks `claim --next`
 * passes over because their files overlap a task in progress, and the set of
 * ready tasks that can start at once (`tasks ready --parallel N`). Loaded only
 * when asked for, and then only when some task has paths: the scope code and
 * the list of tracked files stay off the path of a plain `tasks ready`.
 */
import type { BoardSnapshot, ReadyRank, Task } from './core-read.js';

/** Scopes' verdicts on a ready list. */
export interface ReadyScopes {
  /** A ready task held back, and the tasks in progress its scope overlaps. */
  heldBy: Map<number, number[]>;
  /** Ready tasks claim --next refuses alone (a scope no claim can use), held back too. */
  badScope: Set<number>;
  /** With `parallel`: up to that many ready tasks, in claim order, whose scopes are pairwise disjoint and disjoint from the work in progress. */
  parallel?: number[];
}

/** Judges the ready tasks of `ranks` (in claim order) against the tasks in progress of `snapshot`. */
export async function judgeReadyScopes(boardDir: string, snapshot: BoardSnapshot, ranks: readonly ReadyRank[], parallel?: number): Promise<ReadyScopes> {
  const ready = ranks.map((rank) => snapshot.byId.get(rank.id)).filter((task): task is Task => task !== undefined);
  const inProgress = snapshot.tasks.filter((task) => task.status === 'in_progress' && task.paths?.length);
  const verdict: ReadyScopes = { heldBy: new Map(), badScope: new Set() };
  const scoped = ready.filter((task) => task.paths?.length);
  if (scoped.length > 0) {
    const { ScopeMatcher, scopeProblem, trackedFiles } = await import('@dotasks/core/internal');
    const matcher = new ScopeMatcher((await trackedFiles(boardDir))?.files ?? []);
    const usable = (task: Task) => !task.paths?.length || scopeProblem(task.paths) === undefined;
    const overlap = (a: Task, b: Task) => !!a.paths?.length && !!b.paths?.length && usable(b) && matcher.overlap(a.paths, b.paths);
    for (const task of scoped) {
      if (!usable(task)) {
        verdict.badScope.add(task.id);
        continue;
      }
      const over = inProgress.filter((busy) => overlap(task, busy)).map((busy) => busy.id);
      if (over.length) verdict.heldBy.set(task.id, over);
    }
    if (parallel !== undefined) verdict.parallel = pickDisjoint(ready, verdict, overlap, parallel);
  } else if (parallel !== undefined) verdict.parallel = ready.slice(0, parallel).map((task) => task.id);
  return verdict;
}

/** In claim order, the first `n` tasks not held back whose scopes overlap none picked before (a task without paths overlaps nothing). */
function pickDisjoint(ready: Task[], verdict: ReadyScopes, overlap: (a: Task, b: Task) => boolean, n: number): number[] {
  const picked: Task[] = [];
  for (const task of ready) {
    if (picked.length === n) break;
    if (verdict.heldBy.has(task.id) || verdict.badScope.has(task.id)) continue;
    if (picked.some((other) => overlap(task, other))) continue;
    picked.push(task);
  }
  return picked.map((task) => task.id);
}

/** ` · held back: its files overlap #2 in progress (claim --next passes it over)`, or '' for a task that is not. */
export function heldBackNote(id: number, scopes: ReadyScopes | undefined): string {
  if (!scopes) return '';
  const over = scopes.heldBy.get(id);
  if (over) return ` · held back: its files overlap ${over.map((o) => `#${o}`).join(', ')} in progress (claim --next passes it over)`;
  if (scopes.badScope.has(id)) return ' · held back: its file scope is one no claim can use (tasks doctor names the glob)';
  return '';
}
