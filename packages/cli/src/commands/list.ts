// The read path only (@dotasks/core/read), not the whole core: see read.ts there.
import {
  boardLookup,
  explainRank,
  filterTasks,
  hierarchyOf,
  openBlockers,
  shareHierarchy,
  findBoard,
  loadBoardSnapshot,
  loadOpenSnapshot,
  listSummaryCache,
  readConfig,
  readyOrder,
  renderBoard,
  toTaskView,
  countTasks,
  TASK_STATUSES,
  TasksError,
  boardMergeState,
  type BoardSnapshot,
  type ListFilter,
  type ReadyRank,
  type TaskLookup,
  type TaskStatus,
  printable,
  printableTask,
} from '../core-read.js';
import type { CommandOutput, GlobalOptions } from '../context.js';
import { reportProblems } from '../problems.js';
import { styleFor } from '../style.js';
import type { CommandArgs } from '../command-table.js';
import type { ReadyScopes } from '../ready-scopes.js';
import { parsePriorities, splitList } from '../list-values.js';

/** What `tasks list` takes, as declared in the command table. */
export interface ListOptions extends CommandArgs<'list'>, GlobalOptions {
  /** Only ready tasks, in the order they are handed out (tasks ready). */
  ready?: boolean;
  /** With ready: say why each task stands where it does. */
  explain?: boolean;
  /** With ready: up to this many ready tasks whose scopes are pairwise disjoint and disjoint from the work in progress. */
  parallel?: number;
}

/** The board, one task a line (docs/protocol.md, "Output"); bad files are listed, and make the exit status 1. */
export async function list(options: ListOptions): Promise<CommandOutput> {
  const statuses = splitList(options.status);
  for (const s of statuses)
    if (!(TASK_STATUSES as readonly string[]).includes(s)) throw new TasksError('E_USAGE', `unknown status '${s}'; use one of ${TASK_STATUSES.join(', ')}`);
  const priorities = parsePriorities(options.priority);
  const dir = findBoard({ dir: options.dir, cwd: options.cwd });
  const config = readConfig(dir); // a broken config.json stops every command, this one too
  const merged = config.mergedMeansDone ? await (await import('../merged-work.js')).settleMergedWork(dir, config) : [];
  // The open work alone, the history counted, unless the listing asks for closed tasks (docs/protocol.md, "A board's history").
  const wantsHistory = options.all === true || options.grep !== undefined || statuses.some((s) => s === 'completed' || s === 'deleted');
  const loaded: BoardSnapshot = wantsHistory ? loadBoardSnapshot(dir) : loadOpenSnapshot(dir, { foldAt: config.foldHistory });
  const boardNotes = [...merged, ...notesAbout(loaded, config, options.cwd ?? process.cwd())];
  const ready = await rankReady(loaded, dir, options);
  // A read acts as nobody: its --owner names whose tasks to show, as --filter-owner does (docs/decisions.md, "One declaration per command").
  const owner = options.filterOwner ?? options.owner;
  const filter: ListFilter = {
    all: options.all,
    status: statuses as TaskStatus[],
    owner,
    ready: options.ready,
    labels: splitList(options.label),
    priorities,
    grep: options.grep,
    ...(ready.scopes?.parallel ? { ids: new Set(ready.scopes.parallel) } : {}),
  };
  if (options.json) return listJson(ready, filter, options.explain === true, boardNotes);
  return listText(ready, filter, owner, { explain: options.explain === true, tree: options.tree === true, dir }, boardNotes);
}

/** A fresh clone of a board that lives on its board branch, and a merge that left work for doctor: the one command that settles each. */
function notesAbout(snapshot: BoardSnapshot, config: ReturnType<typeof readConfig>, cwd: string): string[] {
  // A fresh clone of a board that lives on its board branch has none of its tasks yet: say where they are.
  const notes =
    config.sync && snapshot.tasks.length === 0 && !snapshot.history && snapshot.problems.length === 0
      ? [`tasks: this board lives on ${config.syncRemote}/${config.syncBranch} ("sync": true in config.json): tasks sync brings its tasks here`]
      : [];
  // Ids two branches handed out twice, one task of which the merge set aside and no hook brought back, and a
  // merge git stopped with task files it could not merge: the one command that settles them (a look at two files).
  const merge = boardMergeState(cwd);
  if (merge.clashes.length)
    notes.push(
      `tasks: ${merge.clashes.map((id) => `#${id}`).join(', ')} ${merge.clashes.length === 1 ? 'was' : 'were'} created on both sides of a merge as different tasks, and one of each was set aside: tasks doctor --fix brings ${merge.clashes.length === 1 ? 'it' : 'them'} back under a free id`,
    );
  else if (merge.stopped && snapshot.problems.length)
    notes.push(`tasks: a ${merge.stopped} is stopped half way: tasks doctor --fix merges the board of both sides, then finish the ${merge.stopped}`);
  return notes;
}

/** The board as a listing shows it, and for `tasks ready` the claim order and why each task stands where it does. */
interface RankedBoard {
  snapshot: BoardSnapshot;
  lookup: TaskLookup;
  why: Map<number, ReadyRank>;
  scopes?: ReadyScopes;
  heldNote: (id: number, scopes: ReadyScopes | undefined) => string;
}

/** tasks ready: the ready tasks first, in the order claim --next takes them (docs/protocol.md, "Ready"); scopes only when asked for. */
async function rankReady(loaded: BoardSnapshot, dir: string, options: ListOptions): Promise<RankedBoard> {
  // Knows each task's open children: a parent waits for them (docs/protocol.md, "Parents").
  const lookup = boardLookup(loaded);
  if (!options.ready) return { snapshot: loaded, lookup, why: new Map(), heldNote: () => '' };
  const ranks = readyOrder(loaded.tasks, lookup);
  const at = new Map(ranks.map((r, i) => [r.id, i]));
  const snapshot = { ...loaded, tasks: [...loaded.tasks].sort((a, b) => (at.get(a.id) ?? Infinity) - (at.get(b.id) ?? Infinity) || a.id - b.id) };
  shareHierarchy(snapshot.tasks, loaded);
  const why = new Map(ranks.map((r) => [r.id, r]));
  if (!options.explain && options.parallel === undefined) return { snapshot, lookup, why, heldNote: () => '' };
  // Why a ready task waits (its files overlap a task in progress) and what can start at once.
  const { judgeReadyScopes, heldBackNote } = await import('../ready-scopes.js');
  return { snapshot, lookup, why, scopes: await judgeReadyScopes(dir, snapshot, ranks, options.parallel), heldNote: heldBackNote };
}

function listJson(board: RankedBoard, filter: ListFilter, explain: boolean, boardNotes: string[]): CommandOutput {
  const { snapshot, lookup, why, scopes, heldNote } = board;
  return {
    json: {
      tasks: filterTasks(snapshot, filter).map((t) => {
        const view = toTaskView(t, lookup);
        const rank = why.get(t.id);
        if (!explain || !rank) return view;
        return {
          ...view,
          rank: {
            priority: rank.priority,
            ownPriority: rank.ownPriority,
            ...(rank.through !== undefined ? { through: rank.through } : {}),
            ...(rank.fromParent !== undefined ? { fromParent: rank.fromParent } : {}),
            unblocks: rank.unblocks,
            chain: rank.chain,
            ...(scopes?.heldBy.has(t.id) ? { heldBackBy: scopes.heldBy.get(t.id) } : {}),
            ...(scopes?.badScope.has(t.id) ? { badScope: true } : {}),
            why: explainRank(rank) + heldNote(t.id, scopes),
          },
        };
      }),
      problems: snapshot.problems,
      counts: countTasks(snapshot),
      // The closed tasks a folded listing counts without listing them (`--all` lists them).
      ...(snapshot.history ? { history: { ...snapshot.history, folded: true } } : {}),
      ...(explain ? { waitingForChildren: waitingForChildren(board, filter) } : {}),
    },
    exitCode: reportProblems(snapshot).exitCode,
    ...(boardNotes.length ? { warnings: boardNotes } : {}),
  };
}

/** The parents `tasks ready --explain` names as waiting for their children: pending, unowned, unblocked, with open children; as the filter (but for readiness) allows. */
function waitingForChildren(board: RankedBoard, filter: ListFilter): { id: number; done: number; total: number; open: number[] }[] {
  const { snapshot, lookup } = board;
  const hierarchy = hierarchyOf(snapshot);
  return filterTasks(snapshot, { ...filter, ready: false })
    .filter((t) => t.status === 'pending' && t.owner === '' && openBlockers(t, lookup).length === 0 && hierarchy.openChildren(t.id).length > 0)
    .sort((a, b) => a.id - b.id)
    .map((t) => ({ id: t.id, ...hierarchy.progress(t.id)!, open: [...hierarchy.openChildren(t.id)] }));
}

function listText(
  board: RankedBoard,
  filter: ListFilter,
  owner: string | undefined,
  how: { explain: boolean; tree: boolean; dir: string },
  boardNotes: string[],
): CommandOutput {
  const { snapshot, why, scopes, heldNote, lookup } = board;
  const explain = how.explain;
  const style = styleFor(false);
  const shown = { ...snapshot, tasks: snapshot.tasks.map(printableTask), problems: [] };
  shareHierarchy(shown.tasks, snapshot);
  const printableFilter = { ...filter, owner: owner === undefined ? undefined : printable(owner) };
  let text = renderBoard(shown, printableFilter, { style, tree: how.tree, readyCache: listSummaryCache(how.dir, snapshot.indexKey) });
  if (explain && why.size) {
    // One line under each ready task: its priority, the chain it unblocks, its id (the keys of the order, in order).
    const lines = text.split('\n');
    const matched = filterTasks(shown, printableFilter);
    text = lines
      .flatMap((line, i) => {
        const rank = i < matched.length ? why.get(matched[i].id) : undefined;
        return rank ? [line, style.muted(`    ${i + 1}. ${explainRank(rank)}${heldNote(rank.id, scopes)}`)] : [line];
      })
      .join('\n');
  }
  if (explain) {
    // Not ready, and why: a parent is claimable once its children are done.
    for (const w of waitingForChildren(board, filter)) {
      const subject = printable(snapshot.byId.get(w.id)!.subject);
      const open = w.open.map((c) => `#${c}`).join(', ');
      text += `\n${style.muted(`#${w.id}: ${subject} waits for its children (${w.done}/${w.total} done: ${open} open); claim --next takes it once they are done`)}`;
    }
  }
  const reported = reportProblems(snapshot, style);
  return { text, ...reported, ...(boardNotes.length ? { warnings: [...(reported.warnings ?? []), ...boardNotes] } : {}) };
}
