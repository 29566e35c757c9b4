import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { TasksError } from '../errors.js';
import { TASK_KEYS, cloneJson, createRecord, inReview, isClosed, normalizeIds, serializeTask, setOwn, type Task } from '../format/format.js';
import { createLease } from '../runtime/leases.js';
import type { TaskStore } from '../store.js';
import { checkImported, checkLimits, checkNoCycle, checkNoParentCycle, checkReadable, shortSubject, workInProgressWarnings } from './import-checks.js';
import { changedFields, findImportedBefore, refreshTask, standingWarning } from './import-again.js';
import { becomesLinkField, wireLinks } from './import-links.js';
import type { ForeignList, ForeignTask, ImportAction, ImportMapping, ImportPlan, ImportResult, ImportTarget } from './import-shapes.js';

export * from './import-shapes.js';
export { readClaudeTaskList, readTaskStoreFile } from './claude-lists.js';

/**
 * Imports task lists from other tools onto a board: ids are renumbered onto
 * the board's next free ids, edges rewritten to the new ids and written on
 * both sides (docs/protocol.md, "Edges"), all under the board lock.
 */

/** A source id in any usual spelling ("3", "task_3", "#3") → its canonical key. */
function idKey(id: string): string {
  const m = /^\s*(?:#|task_)?0*([0-9]+)\s*$/.exec(id);
  return m ? m[1] : id.trim();
}

/** The fields every reader fills itself; `ForeignTask.fields` never overrides them. */
const BASIC_KEYS = ['id', 'subject', 'description', 'status', 'owner', 'activeForm', 'parent', 'blockedBy', 'blocks', 'metadata'] as const;

/** A task's metadata with where it came from (`importedFrom`, first) and the relations that are no link field (import-links.ts), resolved to new ids. */
function importMetadata(tool: string | undefined, t: ForeignTask, toNew: Map<string, number>, source: string | undefined): Record<string, unknown> | undefined {
  const links = t.links?.filter((l) => !becomesLinkField(l, (id) => toNew.get(idKey(id))));
  if (tool === undefined && !links?.length) return t.metadata;
  const out = createRecord();
  if (tool !== undefined) {
    // A task imported before keeps that origin too: a second move must not erase the first.
    const previous = t.metadata?.importedFrom;
    setOwn(out, 'importedFrom', {
      tool,
      id: t.sourceId,
      ...(source === undefined ? {} : { source }),
      ...(previous === undefined ? {} : { previous }),
    });
  }
  for (const [k, v] of Object.entries(t.metadata ?? {})) if (k !== 'importedFrom' || tool === undefined) setOwn(out, k, v);
  if (links?.length)
    setOwn(
      out,
      'links',
      links.map((l) => {
        const task = toNew.get(idKey(l.id));
        return task === undefined ? { type: l.type, id: l.id } : { type: l.type, id: l.id, task };
      }),
    );
  return out;
}

/** A task as the source has it now, with its new id; edges are added later. */
function freshTask(list: ForeignList, t: ForeignTask, id: number, toNew: Map<string, number>, source: string | undefined): Task {
  const task: Task = {
    id,
    subject: t.subject,
    description: t.description,
    status: t.status,
    owner: t.owner,
    blockedBy: [],
    blocks: [],
    extra: cloneJson(t.extra) as Record<string, unknown>,
  };
  for (const k of TASK_KEYS) delete task.extra[k];
  if (t.activeForm !== undefined) task.activeForm = t.activeForm;
  // Only fields the format knows, never the ones set above (planningFields decides which).
  for (const [k, v] of Object.entries(t.fields ?? {}))
    if ((TASK_KEYS as readonly string[]).includes(k) && !(BASIC_KEYS as readonly string[]).includes(k))
      setOwn(task as unknown as Record<string, unknown>, k, cloneJson(v));
  const metadata = importMetadata(list.tool, t, toNew, source);
  if (metadata !== undefined) task.metadata = metadata;
  return task;
}

/**
 * Maps a foreign list onto the board (pure): a task imported before from the
 * same source (see findImportedBefore) keeps its id and is refreshed
 * (refreshTask), every other one gets the next free id, `firstId`, `firstId
 * + 1`, … in the source's order; edges are rewritten to those ids.
 */
export function planImport(list: ForeignList, at: number | ImportTarget): ImportPlan {
  const target: ImportTarget = typeof at === 'number' ? { firstId: at } : at;
  const warnings = [...list.warnings];
  const before = findImportedBefore(list, target, warnings);
  const { ids, toNew } = assignIds(list, before, target);
  const fresh = list.tasks.map((t, i) => {
    const task = freshTask(list, t, ids[i], toNew, target.source);
    checkImported(list.source, t, () => checkLimits(task));
    return task;
  });
  const tasks = fresh.map((task, i) => {
    const current = before.get(list.tasks[i].sourceId);
    return current ? refreshTask(current, task) : task;
  });
  wireParents(list, tasks, toNew, before, warnings);
  checkNoParentCycle(list, tasks, ids, target);
  const beforeIds = new Set([...before.values()].map((t) => t.id));
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const edges = sourceEdges(list, toNew, (id) => beforeIds.has(id) && byId.get(id)!.status === 'deleted', beforeIds, warnings);
  const edgesDiffer = edgesThatDiffer(tasks, edges, beforeIds);
  wireEdges(edges, byId, beforeIds);
  wireLinks(
    list.tasks.map((t, i) => ({ id: ids[i], sourceId: t.sourceId, subject: t.subject, links: t.links })),
    (id) => toNew.get(idKey(id)),
    byId,
    beforeIds,
    warnings,
  );
  for (const t of tasks) {
    t.blocks = normalizeIds(t.blocks);
    t.blockedBy = normalizeIds(t.blockedBy);
  }
  checkNoCycle(list, tasks, ids, target);

  const mapping: ImportMapping[] = list.tasks.map((t, i) => {
    checkImported(list.source, t, () => checkReadable(tasks[i]));
    const current = before.get(t.sourceId);
    if (current === undefined) return { from: t.sourceId, to: ids[i], subject: t.subject, action: 'created' };
    const warning = standingWarning(`${t.sourceId} -> #${ids[i]}`, fresh[i], current, edgesDiffer.has(ids[i]));
    if (warning) warnings.push(warning);
    return { from: t.sourceId, to: ids[i], subject: t.subject, action: serializeTask(current) === serializeTask(tasks[i]) ? 'unchanged' : 'updated' };
  });
  warnings.push(...progressWarnings(list, before, tasks, ids, mapping, target));
  const summary: Record<ImportAction, number> = { created: 0, updated: 0, unchanged: 0 };
  for (const m of mapping) summary[m.action]++;
  return { source: list.source, mapping, tasks: [...tasks].sort((a, b) => a.id - b.id), summary, warnings, notes: [...(list.notes ?? [])] };
}

/**
 * Each new task's `parent`, the new id of its parent in the source; a parent
 * not in the list, the task itself, or a task deleted on the board is kept in
 * `metadata.links` instead, with a warning. A task imported before keeps the
 * parent the board gave it (where it stands is the board's, as its edges).
 */
function wireParents(list: ForeignList, tasks: Task[], toNew: Map<string, number>, before: Map<string, Task>, warnings: string[]): void {
  const deleted = new Set([...before.values()].filter((t) => t.status === 'deleted').map((t) => t.id));
  list.tasks.forEach((t, i) => {
    if (t.parent === undefined || before.has(t.sourceId)) return;
    const task = tasks[i];
    const parent = toNew.get(idKey(t.parent));
    const why =
      parent === undefined
        ? 'is not in the list'
        : parent === task.id
          ? 'is the task itself'
          : deleted.has(parent)
            ? `is #${parent}, deleted on the board`
            : undefined;
    if (why === undefined) {
      task.parent = parent;
      return;
    }
    warnings.push(`${t.sourceId} (${shortSubject(t.subject)}): its parent ${JSON.stringify(t.parent)} ${why}; kept in metadata.links`);
    const metadata = task.metadata ?? createRecord();
    const links = Array.isArray(metadata.links) ? metadata.links : [];
    setOwn(metadata, 'links', [...links, { type: 'parent', id: t.parent, ...(parent === undefined ? {} : { task: parent }) }]);
    task.metadata = metadata;
  });
}

/** Each source task's id on the board: the one it was imported under before, else the next free one, in the source's order. */
function assignIds(list: ForeignList, before: Map<string, Task>, target: ImportTarget): { ids: number[]; toNew: Map<string, number> } {
  const toNew = new Map<string, number>();
  let nextId = target.firstId;
  const ids = list.tasks.map((t) => {
    const key = idKey(t.sourceId);
    if (toNew.has(key)) throw new TasksError('E_INVALID', `${list.source}: two tasks have the id ${JSON.stringify(t.sourceId)}; nothing was imported`);
    const id = before.get(t.sourceId)?.id ?? nextId++;
    toNew.set(key, id);
    return id;
  });
  return { ids, toNew };
}

/**
 * The source's edges as `from>to` of board ids; an edge to a task not in the
 * list, to itself, or new and to a task deleted on the board (as `tasks dep
 * add` refuses it) is dropped with a warning.
 */
function sourceEdges(
  list: ForeignList,
  toNew: Map<string, number>,
  deletedOnBoard: (id: number) => boolean,
  beforeIds: Set<number>,
  warnings: string[],
): Set<string> {
  const edges = new Set<string>();
  const link = (fromSource: string, toSource: string, owner: ForeignTask) => {
    const from = toNew.get(idKey(fromSource));
    const to = toNew.get(idKey(toSource));
    if (from === undefined || to === undefined) {
      const missing = from === undefined ? fromSource : toSource;
      warnings.push(`${owner.sourceId} (${owner.subject}): dropped the edge to ${JSON.stringify(missing)}, which is not in the list`);
      return;
    }
    if (from === to) {
      warnings.push(`${owner.sourceId} (${owner.subject}): dropped an edge to itself`);
      return;
    }
    const gone = [from, to].find(deletedOnBoard);
    if (gone !== undefined && !(beforeIds.has(from) && beforeIds.has(to))) {
      warnings.push(`${owner.sourceId} (${owner.subject}): dropped an edge: #${gone} is deleted on the board`);
      return;
    }
    edges.add(`${from}>${to}`);
  };
  for (const t of list.tasks) {
    for (const b of t.blockedBy) link(b, t.sourceId, t);
    for (const d of t.blocks) link(t.sourceId, d, t);
  }
  return edges;
}

/** The tasks imported before whose edges between them differ in the source from the board's (standingWarning says so). */
function edgesThatDiffer(tasks: Task[], edges: Set<string>, beforeIds: Set<number>): Set<number> {
  const differ = new Set<number>();
  const onBoard = new Set(tasks.filter((t) => beforeIds.has(t.id)).flatMap((t) => t.blocks.filter((to) => beforeIds.has(to)).map((to) => `${t.id}>${to}`)));
  const inSource = [...edges].filter((e) => e.split('>').every((id) => beforeIds.has(Number(id))));
  for (const e of [...inSource.filter((x) => !onBoard.has(x)), ...[...onBoard].filter((x) => !edges.has(x))])
    for (const id of e.split('>')) differ.add(Number(id));
  return differ;
}

/** Writes the edges on both sides, but between two tasks imported before, where the board's edges stand. */
function wireEdges(edges: Set<string>, byId: Map<number, Task>, beforeIds: Set<number>): void {
  for (const e of edges) {
    const [from, to] = e.split('>').map(Number);
    if (beforeIds.has(from) && beforeIds.has(to)) continue;
    const blocker = byId.get(from)!;
    const waiter = byId.get(to)!;
    blocker.blocks.push(to);
    // A finished blocker no longer blocks: the edge stays on its side as history (docs/protocol.md, "Edges").
    if (!isClosed(blocker.status)) waiter.blockedBy.push(from);
  }
}

/** The warnings about work in progress, for the tasks this import creates and those it gives new blockers. */
function progressWarnings(
  list: ForeignList,
  before: Map<string, Task>,
  tasks: Task[],
  ids: number[],
  mapping: ImportMapping[],
  target: ImportTarget,
): string[] {
  const touched = tasks.filter((t, i) => {
    const current = before.get(list.tasks[i].sourceId);
    return current === undefined || t.blockedBy.some((id) => !current.blockedBy.includes(id));
  });
  const names = new Map(list.tasks.map((t, i) => [ids[i], `${t.sourceId} -> #${ids[i]} (${shortSubject(t.subject)})`]));
  const created = new Set(mapping.filter((m) => m.action === 'created').map((m) => m.to));
  return workInProgressWarnings(touched, created, names, target);
}

/**
 * A source as `importedFrom.source` records it, so that the same file or
 * folder is the same source however it is named: its real path, relative to
 * the folder that holds the board when it is inside it (the same on every
 * clone), else absolute; `/` between folders.
 */
export function importSource(path: string, boardDir: string): string {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const source = real(path);
  const rel = relative(real(dirname(resolve(boardDir))), source);
  const inside = rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  return (inside ? rel || '.' : source).split(sep).join('/');
}

/**
 * Imports a foreign list onto the board in one transaction: under the board
 * lock the tasks imported before from the same source are found and locked,
 * the next free ids are taken (`max(.highwatermark, highest task) + 1` …)
 * for the others, the new files and their claim records are written, the
 * refreshed ones rewritten where they changed, then `.highwatermark` moves;
 * all of it or nothing. A dry run computes the same plan and writes nothing.
 */
export async function importTasks(store: TaskStore, list: ForeignList, options: { dryRun?: boolean; actor?: string } = {}): Promise<ImportResult> {
  const target = (firstId: number, board: readonly Task[]): ImportTarget => ({
    firstId,
    board,
    singleInProgress: store.config.singleInProgress,
    source: importSource(list.source, store.dir),
  });
  const nextId = (highWaterMark: number) => Math.max(highWaterMark, store.listIds().at(-1) ?? 0) + 1;
  if (options.dryRun) return { ...planImport(list, target(nextId(store.readHighWaterMark()), store.loadBoard().tasks)), dryRun: true };
  const result = await store.transact({ board: true }, async (tx) => {
    const firstId = nextId(tx.readHighWaterMark());
    // Under the board lock no task is created meanwhile; the ones imported before are read again under their locks.
    const snapshot = store.loadBoard().tasks;
    const again = planImport(list, target(firstId, snapshot))
      .mapping.filter((m) => m.action !== 'created')
      .map((m) => m.to);
    tx.need({ tasks: again });
    const plan = planImport(
      list,
      target(
        firstId,
        snapshot.map((t) => (again.includes(t.id) ? tx.read(t.id) : t)),
      ),
    );
    const byId = new Map(plan.tasks.map((t) => [t.id, t]));
    let highest = 0;
    for (const m of plan.mapping) {
      const t = byId.get(m.to)!;
      if (m.action === 'updated') {
        const fields = changedFields(tx.read(t.id), t);
        tx.put(t);
        tx.event({ type: 'updated', task: t.id, owner: options.actor, fields, importedFrom: m.from });
        continue;
      }
      if (m.action === 'unchanged') continue;
      await tx.lockNewTask(t.id);
      if (tx.tryRead(t.id)) throw new TasksError('E_EXISTS', `task_${t.id}.json appeared meanwhile; nothing was imported, run the import again`);
      tx.put(t);
      highest = Math.max(highest, t.id);
      // Imported work in progress counts against its owner like any claim; a task waiting for review has no claim.
      if (t.status === 'in_progress' && t.owner !== '' && !inReview(t))
        tx.putLease({ ...createLease(t.id, t.owner, null, store.config.leaseSeconds), adopted: true });
      tx.event({ type: 'created', task: t.id, owner: options.actor, subject: m.subject, importedFrom: m.from });
    }
    if (highest) tx.setHighWaterMark(highest);
    return plan;
  });
  return { ...result.value, dryRun: false };
}
