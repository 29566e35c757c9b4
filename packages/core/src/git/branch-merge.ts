/**
 * Two branches brought together, as a whole board (docs/protocol.md, "Ids
 * across branches"): the merge driver sees one file at a time, so when both
 * branches created a task under one id it can only keep one of them there.
 * This merges the `.tasks/` folders of the two sides and their common
 * ancestor: a task created on both sides under one id as two different
 * tasks keeps the id on our side and moves to the next free id on theirs,
 * and every reference their side wrote to it follows it (the edges of their
 * tasks, the `#N` mentions of the text they wrote, its worktree's branch).
 * Everything else merges field by field, as the merge driver merges it.
 */
import { HIGHWATERMARK_FILE } from '../engine/transaction.js';
import { idFromFileName, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { mergeHighWaterMark, mergeTaskText } from './merge.js';
import { moveEdges, moveMentions, taskBranch } from './renumber.js';

/** A board's files at one commit: task files and `.highwatermark`, by name, as text. */
export type BoardFiles = Map<string, string>;

/** A task of theirs that moved to a free id. */
export interface BranchRenumbered {
  from: number;
  to: number;
  subject: string;
  /** Its worktree's branch, when it has the board's pattern: it is renamed with it. */
  branch?: { from: string; to: string };
}

export interface BranchMergeResult {
  /** The merged board's task files and `.highwatermark`, by name; a name absent is a file the merge leaves out. */
  files: BoardFiles;
  renumbered: BranchRenumbered[];
  /** Task files whose fields both sides changed differently: written with git's markers, for a person. */
  conflicts: { id: number; fields: string[] }[];
}

function tryParse(text: string | undefined, name: string): Task | undefined {
  if (text === undefined) return undefined;
  try {
    return parseTask(text, name);
  } catch {
    return undefined;
  }
}

/**
 * Whether the two sides' copies of a task created on both (not in the base)
 * are two different tasks: one id handed out twice. A task both sides have
 * under the same subject is taken as one task (cherry-picked, say) and merged.
 */
export function differentTasks(ours: Task, theirs: Task): boolean {
  return ours.subject.trim() !== theirs.subject.trim();
}

/**
 * The moves a side already made to a task of the base: an earlier merge
 * brought the task of the other branch under a free id (the base's #2 is
 * this side's #4 now, and this side's #2 is another task). Told by subjects:
 * this side's #2 has another subject than the base's, and exactly one task
 * this side created has the base's subject. A branch that goes on after its
 * tasks were renumbered on main merges again without mixing the two #2s.
 */
function movesMadeBy(base: BoardFiles, side: BoardFiles): Map<number, number> {
  const moves = new Map<number, number>();
  const created = new Map<string, number[]>();
  for (const [name, text] of side) {
    if (base.has(name)) continue;
    const task = tryParse(text, name);
    if (task) created.set(task.subject.trim(), [...(created.get(task.subject.trim()) ?? []), task.id]);
  }
  for (const [name, text] of base) {
    const was = tryParse(text, name);
    const now = tryParse(side.get(name), name);
    if (!was || !now || !differentTasks(was, now)) continue;
    const to = created.get(was.subject.trim());
    if (to?.length === 1) moves.set(was.id, to[0]);
  }
  return moves;
}

/**
 * One side rewritten as if it had used the ids of `moves`: the moved tasks
 * under their new ids, and the references of every task of this side to a
 * moved id (in its world the id meant the moved task), the mentions in the
 * text it wrote since the base too. Returns the moved tasks.
 */
function applyMoves(side: BoardFiles, base: BoardFiles, moves: Map<number, number>, branchPattern: string): BranchRenumbered[] {
  const renumbered: BranchRenumbered[] = [];
  const rewritten = new Map<string, string>();
  for (const [name, text] of side) {
    const id = idFromFileName(name);
    const task = id === undefined ? undefined : tryParse(text, name);
    if (!task) continue;
    const copy: Task = { ...task, blockedBy: [...task.blockedBy], blocks: [...task.blocks] };
    const to = moves.get(id!);
    let changed = moveEdges(copy, moves);
    changed = moveMentions(copy, tryParse(base.get(name), name), moves) || changed;
    if (to !== undefined) {
      copy.id = to;
      const entry: BranchRenumbered = { from: id!, to, subject: copy.subject };
      const branch = typeof copy.metadata?.branch === 'string' ? copy.metadata.branch : undefined;
      if (branch !== undefined && branch === taskBranch(branchPattern, id!)) {
        entry.branch = { from: branch, to: taskBranch(branchPattern, to) };
        copy.metadata = { ...copy.metadata, branch: entry.branch.to };
      }
      renumbered.push(entry);
      rewritten.set(taskFileName(to), serializeTask(copy));
      side.delete(name);
    } else if (changed) rewritten.set(name, serializeTask(copy));
  }
  for (const [name, text] of rewritten) side.set(name, text);
  return renumbered;
}

/** Merges the boards of two sides with their common ancestor; see the module comment. */
export function mergeBranchBoards(input: { base: BoardFiles; ours: BoardFiles; theirs: BoardFiles; branchPattern: string }): BranchMergeResult {
  const base = new Map(input.base);
  const ours = new Map(input.ours);
  const theirs = new Map(input.theirs);
  followEarlierMoves(input, base, ours, theirs);

  const names = new Set<string>();
  for (const side of [base, ours, theirs]) for (const name of side.keys()) if (idFromFileName(name) !== undefined) names.add(name);
  const ids = [...names].map((n) => idFromFileName(n)!);
  const marks = [input.base, input.ours, input.theirs].map((side) => side.get(HIGHWATERMARK_FILE) ?? '');
  const mark = Number(mergeHighWaterMark(marks[0], marks[1], marks[2]));
  let next =
    Math.max(
      ids.reduce((a, b) => Math.max(a, b), 0),
      mark,
    ) + 1;

  // One id handed out twice: created on both sides (not in the base) as two different tasks; theirs moves.
  const moves = new Map<number, number>();
  for (const name of [...names].sort((a, b) => idFromFileName(a)! - idFromFileName(b)!)) {
    if (base.has(name)) continue;
    const o = tryParse(ours.get(name), name);
    const t = tryParse(theirs.get(name), name);
    if (o && t && differentTasks(o, t)) moves.set(idFromFileName(name)!, next++);
  }
  const renumbered = moves.size ? applyMoves(theirs, base, moves, input.branchPattern) : [];
  for (const to of moves.values()) names.add(taskFileName(to));

  const { files, conflicts } = mergeFiles(names, base, ours, theirs);
  const highest = [...files.keys()].map((n) => idFromFileName(n) ?? 0).reduce((a, b) => Math.max(a, b), 0);
  files.set(HIGHWATERMARK_FILE, `${Math.max(mark, highest)}\n`);
  return { files, renumbered, conflicts: conflicts.sort((a, b) => a.id - b.id) };
}

/**
 * Moves an earlier merge made on one side (its #2 of the base is its #4 now)
 * are made on the other side too, and on the base (it is the base of #4
 * then): the moved task merges with its own changes from both sides.
 */
function followEarlierMoves(input: { base: BoardFiles; branchPattern: string }, base: BoardFiles, ours: BoardFiles, theirs: BoardFiles): void {
  const oursMoved = movesMadeBy(base, ours);
  const theirsMoved = movesMadeBy(base, theirs);
  for (const id of oursMoved.keys()) theirsMoved.delete(id);
  for (const [moves, other] of [
    [oursMoved, theirs],
    [theirsMoved, ours],
  ] as const) {
    if (moves.size === 0) continue;
    applyMoves(other, input.base, moves, input.branchPattern);
    moveBase(input.base, base, moves);
  }
}

/**
 * The base as the earlier merge would have rewritten it: moved tasks under
 * their new ids with the mentions of their text, every edge to them. Against
 * it, a side that did not touch an edge since did not remove it.
 */
function moveBase(original: BoardFiles, base: BoardFiles, moves: Map<number, number>): void {
  for (const [name, text] of original) {
    const id = idFromFileName(name);
    const task = id === undefined ? undefined : tryParse(text, name);
    if (!task) continue;
    const copy: Task = { ...task, blockedBy: [...task.blockedBy], blocks: [...task.blocks] };
    const changed = moveEdges(copy, moves);
    const to = moves.get(id!);
    if (to !== undefined) {
      moveMentions(copy, undefined, moves);
      copy.id = to;
      base.delete(name);
      base.set(taskFileName(to), serializeTask(copy));
      continue;
    }
    if (changed) base.set(name, serializeTask(copy));
  }
}

/** Each task file three ways, as the merge driver merges it; a field both sides changed differently is a conflict for a person. */
function mergeFiles(names: Set<string>, base: BoardFiles, ours: BoardFiles, theirs: BoardFiles): Omit<BranchMergeResult, 'renumbered'> {
  const files: BoardFiles = new Map();
  const conflicts: BranchMergeResult['conflicts'] = [];
  for (const name of names) {
    const b = base.get(name);
    const o = ours.get(name);
    const t = theirs.get(name);
    let merged: string | undefined;
    if (o === t) merged = o;
    else if (t === b) merged = o;
    else if (o === b) merged = t;
    else if (o === undefined || t === undefined)
      merged = o ?? t; // removed on one side (or moved away from this id) and changed on the other: the change stays
    else {
      const result = mergeTaskText(b ?? '', o, t, name);
      merged = result.text;
      if (result.conflicts.length) conflicts.push({ id: idFromFileName(name)!, fields: result.conflicts.map((c) => c.field) });
    }
    if (merged !== undefined) files.set(name, merged);
  }
  return { files, conflicts };
}
