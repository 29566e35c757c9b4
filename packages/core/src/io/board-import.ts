import { readdirSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CorruptTaskError, TasksError, isErrnoException } from '../errors.js';
import {
  MAX_TASK_FILE_BYTES,
  TASK_KEYS,
  TASK_STATUSES,
  cloneJson,
  copyTask,
  createRecord,
  isClosed,
  normalizeIds,
  normalizeNotes,
  parseTask,
  serializeTask,
  setOwn,
  taskFileName,
  type Task,
  type TaskStatus,
} from '../format/format.js';
import { checkLabels, checkNesting, checkNoteText, checkPaths, checkPriority, checkSubject } from '../engine/rules.js';
import { checkSourceNesting, extras, idList, isObject, readJson, subjectOf as subject, text } from './foreign-fields.js';
import { createLease } from '../runtime/leases.js';
import { BoardGraph } from '../consistency/reconcile.js';
import type { TaskStore } from '../store.js';

/**
 * Imports task lists from other tools onto a board: ids are renumbered onto
 * the board's next free ids, edges rewritten to the new ids and written on
 * both sides (docs/protocol.md, "Edges"), all under the board lock.
 */

/** A task as read from another tool, with that tool's ids (as strings). */
export interface ForeignTask {
  sourceId: string;
  subject: string;
  description: string;
  status: TaskStatus;
  owner: string;
  activeForm?: string;
  metadata?: Record<string, unknown>;
  /** Source ids this task waits for. */
  blockedBy: string[];
  /** Source ids that wait for this task. */
  blocks: string[];
  /** Fields the source had that the format does not know; kept as unknown keys. */
  extra: Record<string, unknown>;
  /** Task fields beyond the basic ones, by name (what `planningFields` puts on the task itself). */
  fields?: Record<string, unknown>;
  /** Relations that are not edges (a parent, a related task): kept in `metadata.links`, with the new id where the other task came along. */
  links?: { type: string; id: string }[];
}

export interface ForeignList {
  /** Where it came from, for messages. */
  source: string;
  /** The tool that wrote it; when given, each task records `metadata.importedFrom: {tool, id}`. */
  tool?: string;
  tasks: ForeignTask[];
  warnings: string[];
  /** What was left out on purpose (archived tasks, tombstones), said once. */
  notes?: string[];
}

/** What an import does with one task of the source: a new task, a task imported before refreshed, or one left as it was. */
export type ImportAction = 'created' | 'updated' | 'unchanged';

export interface ImportMapping {
  from: string;
  to: number;
  subject: string;
  action: ImportAction;
}

export interface ImportPlan {
  source: string;
  mapping: ImportMapping[];
  /** The tasks as they will be (or are, when unchanged), ascending id. */
  tasks: Task[];
  /** How many tasks each action took. */
  summary: Record<ImportAction, number>;
  warnings: string[];
  notes: string[];
}

export interface ImportResult extends ImportPlan {
  dryRun: boolean;
}

function status(value: unknown, where: string, warnings: string[]): TaskStatus {
  if (typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value)) return value as TaskStatus;
  warnings.push(`${where}: unknown status ${JSON.stringify(value)}, imported as pending`);
  return 'pending';
}

const CLAUDE_KEYS = new Set(['id', 'subject', 'description', 'status', 'owner', 'activeForm', 'blockedBy', 'blocks', 'metadata']);

/**
 * Reads a Claude Code task list: a folder of `N.json` files (`id` a string,
 * `blocks`/`blockedBy` string ids, `activeForm`, `owner`, `metadata`), as in
 * `~/.claude/tasks/<list-id>/`. `.lock` and `.highwatermark` are ignored.
 */
export function readClaudeTaskList(dir: string): ForeignList {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR'))
      throw new TasksError('E_NOT_FOUND', `${dir} is not a folder; point 'tasks import claude' at a Claude Code task list folder (~/.claude/tasks/<list-id>)`, {
        dir,
      });
    throw error;
  }
  const warnings: string[] = [];
  const files = names.filter((n) => /^\d+\.json$/.test(n)).sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
  if (files.length === 0) throw new TasksError('E_NOT_FOUND', `${dir} holds no N.json task files; nothing to import`, { dir });
  const tasks: ForeignTask[] = [];
  for (const name of files) {
    const file = join(dir, name);
    const raw = readJson(file, { inFolder: true, oneTask: true });
    if (!isObject(raw)) throw new TasksError('E_INVALID', `${file}: a task must be a JSON object; nothing was imported`, { file });
    checkSourceNesting(raw, file);
    const sourceId = raw.id === undefined ? name.replace(/\.json$/, '') : String(raw.id);
    const description = text(raw.description);
    const task: ForeignTask = {
      sourceId,
      subject: subject(raw.subject, description, name, warnings),
      description,
      status: status(raw.status, name, warnings),
      owner: text(raw.owner),
      blockedBy: idList(raw.blockedBy),
      blocks: idList(raw.blocks),
      extra: extras(raw, CLAUDE_KEYS),
    };
    if (typeof raw.activeForm === 'string' && raw.activeForm !== '') task.activeForm = raw.activeForm;
    if (isObject(raw.metadata)) task.metadata = cloneJson(raw.metadata) as Record<string, unknown>;
    tasks.push(task);
  }
  return { source: dir, tool: 'claude', tasks, warnings };
}

const STORE_KEYS = new Set(['id', 'subject', 'description', 'status', 'owner', 'active_form', 'blocked_by', 'blocks', 'metadata']);

/**
 * Reads a single-file task store's `tasks.json` (`{"next_id", "tasks": [{"id": "task_1",
 * "active_form", "blocked_by": ["task_2"], …}]}`).
 */
export function readTaskStoreFile(file: string): ForeignList {
  const raw = readJson(file);
  if (!isObject(raw) || !Array.isArray(raw.tasks))
    throw new TasksError('E_INVALID', `${file}: expected {"next_id": N, "tasks": [...]}; nothing was imported`, { file });
  const warnings: string[] = [];
  const tasks: ForeignTask[] = raw.tasks.map((item, index) => {
    const where = `tasks[${index}]`;
    if (!isObject(item)) throw new TasksError('E_INVALID', `${file}: ${where} is not an object; nothing was imported`, { file });
    checkSourceNesting(item, `${file}: ${where}`);
    const description = text(item.description);
    const task: ForeignTask = {
      sourceId: item.id === undefined ? `#${index + 1}` : String(item.id),
      subject: subject(item.subject, description, where, warnings),
      description,
      status: status(item.status ?? 'pending', where, warnings),
      owner: text(item.owner),
      blockedBy: idList(item.blocked_by),
      blocks: idList(item.blocks),
      extra: extras(item, STORE_KEYS),
    };
    if (typeof item.active_form === 'string' && item.active_form !== '') task.activeForm = item.active_form;
    if (isObject(item.metadata)) task.metadata = cloneJson(item.metadata) as Record<string, unknown>;
    return task;
  });
  if (tasks.length === 0) throw new TasksError('E_NOT_FOUND', `${file} holds no tasks; nothing to import`, { file });
  return { source: file, tool: 'store', tasks, warnings };
}

/** Where an imported priority and labels go: task fields by name, or metadata keys. */
export interface PlanningFields {
  fields: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/** Maps an imported priority (0 highest … 4 lowest) and labels onto the task's planning fields. */
export function planningFields(priority: number | undefined, labels: readonly string[]): PlanningFields {
  const planning = createRecord();
  if (priority !== undefined) planning.priority = priority;
  if (labels.length) planning.labels = [...labels];
  return { fields: planning, metadata: {} };
}

/** A source id in any usual spelling ("3", "task_3", "#3") → its canonical key. */
function idKey(id: string): string {
  const m = /^\s*(?:#|task_)?0*([0-9]+)\s*$/.exec(id);
  return m ? m[1] : id.trim();
}

/** The fields every reader fills itself; `ForeignTask.fields` never overrides them. */
const BASIC_KEYS = ['id', 'subject', 'description', 'status', 'owner', 'activeForm', 'blockedBy', 'blocks', 'metadata'] as const;

/** A task's metadata with where it came from (`importedFrom`, first) and its links resolved to new ids. */
function importMetadata(tool: string | undefined, t: ForeignTask, toNew: Map<string, number>, source: string | undefined): Record<string, unknown> | undefined {
  if (tool === undefined && !t.links?.length) return t.metadata;
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
  if (t.links?.length)
    setOwn(
      out,
      'links',
      t.links.map((l) => {
        const task = toNew.get(idKey(l.id));
        return task === undefined ? { type: l.type, id: l.id } : { type: l.type, id: l.id, task };
      }),
    );
  return out;
}

/** Where an import lands. */
export interface ImportTarget {
  /** The first free id of the board. */
  firstId: number;
  /** The tasks on the board: those imported before from this source are refreshed, not doubled; the others count for the warnings about work in progress. */
  board?: readonly Task[];
  /** The board's singleInProgress setting. */
  singleInProgress?: boolean;
  /** The source as `importedFrom.source` records it (importSource); absent, nothing records or matches a source. */
  source?: string;
}

/** A subject in a message: cut short. */
function shortSubject(subject: string): string {
  return subject.length > 60 ? `${subject.slice(0, 60)}…` : subject;
}

/**
 * An import applies the limits of `tasks create` to each task the source
 * gives (subject, priority, labels, paths, notes, nesting); labels and paths
 * come out as create writes them.
 */
function checkLimits(task: Task): void {
  checkSubject(task.subject);
  if (task.priority !== undefined) checkPriority(task.priority);
  if (task.labels !== undefined) {
    const labels = checkLabels(task.labels);
    if (labels.length) task.labels = labels;
    else delete task.labels;
  }
  if (task.paths !== undefined) {
    const paths = checkPaths(task.paths);
    if (paths.length) task.paths = paths;
    else delete task.paths;
  }
  for (const note of task.notes ?? []) checkNoteText(note.text);
  if (task.metadata !== undefined) checkNesting(task.metadata, 'metadata');
}

/** Then the task as it will be written is read back by the readers' own parser, size limit included: nothing they refuse is written. */
function checkReadable(task: Task): void {
  const text = serializeTask(task);
  const size = Buffer.byteLength(text);
  if (size > MAX_TASK_FILE_BYTES)
    throw new TasksError(
      'E_INVALID',
      `the task would be ${(size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task file`,
    );
  parseTask(text, taskFileName(task.id));
}

/** Runs a check on an imported task; its refusal names the source and the task, and says that nothing was imported. */
function checkImported(source: string, t: ForeignTask, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof TasksError)) throw error;
    const problem = error instanceof CorruptTaskError ? String(error.details.problem) : error.message;
    throw new TasksError(
      'E_INVALID',
      `${source}: ${t.sourceId} (${shortSubject(t.subject)}): ${problem}; nothing was imported`,
      { ...error.details, source },
      { cause: error },
    );
  }
}

/**
 * What an import would leave in a state the commands do not reach: a task in
 * progress while open tasks block it, and, under singleInProgress, an owner
 * with more than one task in progress. Imported as the source has them (it
 * records work already under way), with a warning that says how to settle it.
 */
function workInProgressWarnings(touched: readonly Task[], created: ReadonlySet<number>, names: Map<number, string>, target: ImportTarget): string[] {
  const warnings: string[] = [];
  for (const t of touched) {
    if (t.status !== 'in_progress' || t.blockedBy.length === 0) continue;
    const ids = t.blockedBy.map((id) => `#${id}`).join(', ');
    warnings.push(
      `${names.get(t.id)}: in progress while blocked by ${ids}, which ${t.blockedBy.length === 1 ? 'is' : 'are'} open; it was imported as the source has it ('tasks release ${t.id}', or finish ${ids} first)`,
    );
  }
  if (!target.singleInProgress) return warnings;
  const byOwner = new Map<string, number[]>();
  for (const t of [...(target.board ?? []), ...touched.filter((t) => created.has(t.id))])
    if (t.status === 'in_progress' && t.owner !== '') byOwner.set(t.owner, [...(byOwner.get(t.owner) ?? []), t.id]);
  for (const [owner, ids] of [...byOwner].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (ids.length < 2 || !ids.some((id) => created.has(id))) continue;
    const sorted = normalizeIds(ids);
    warnings.push(
      `${owner} has ${sorted.length} tasks in progress (${sorted.map((id) => `#${id}`).join(', ')}) and the board allows one per owner (singleInProgress); 'tasks release' all but one`,
    );
  }
  return warnings;
}

/** Where a task on the board came from, as its `metadata.importedFrom` says. */
function originOf(task: Task): { tool: string; id: string; source?: string } | undefined {
  const from = task.metadata?.importedFrom as Record<string, unknown> | undefined;
  if (from === null || typeof from !== 'object' || typeof from.tool !== 'string' || typeof from.id !== 'string') return undefined;
  return { tool: from.tool, id: from.id, ...(typeof from.source === 'string' ? { source: from.source } : {}) };
}

/**
 * The tasks on the board imported before from this list, by source id: the
 * same tool, the same source and the same id in `importedFrom`. A task
 * imported before sources were recorded (no `source`) counts when no task
 * records this source and its subject is the source's too (ids such as
 * `task-1` or an export's `3` repeat from one project to the next: another
 * project's task must not be overwritten). Of several, the lowest id, with a
 * warning.
 */
function findImportedBefore(list: ForeignList, target: ImportTarget, warnings: string[]): Map<string, Task> {
  const found = new Map<string, Task>();
  if (list.tool === undefined || target.board === undefined) return found;
  const exact = new Map<string, Task[]>();
  const legacy = new Map<string, Task[]>();
  for (const task of target.board) {
    const origin = originOf(task);
    if (origin?.tool !== list.tool) continue;
    const into = origin.source === undefined ? legacy : origin.source === target.source ? exact : undefined;
    into?.set(origin.id, [...(into.get(origin.id) ?? []), task]);
  }
  for (const t of list.tasks) {
    const candidates = (exact.get(t.sourceId) ?? legacy.get(t.sourceId)?.filter((c) => c.subject === t.subject) ?? []).sort((a, b) => a.id - b.id);
    if (candidates.length === 0) continue;
    if (candidates.length > 1)
      warnings.push(
        `${t.sourceId}: imported more than once before (${candidates.map((c) => `#${c.id}`).join(', ')}); this import updates #${candidates[0].id} ('tasks delete' the others)`,
      );
    found.set(t.sourceId, candidates[0]);
  }
  return found;
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
 * A task imported before, refreshed from the source: what it says (subject,
 * description, and the priority, labels, paths, metadata keys and unknown
 * keys the source gives; its notes are added) is the source's; where it
 * stands (status, owner, activeForm, edges) stays the board's, which its
 * claims, completions and dependencies moved on purpose.
 */
function refreshTask(current: Task, fresh: Task): Task {
  const task = copyTask(current);
  task.subject = fresh.subject;
  task.description = fresh.description;
  if (fresh.priority !== undefined) task.priority = fresh.priority;
  if (fresh.labels !== undefined) task.labels = [...fresh.labels];
  if (fresh.paths !== undefined) task.paths = [...fresh.paths];
  if (fresh.notes?.length) task.notes = normalizeNotes([...(task.notes ?? []), ...fresh.notes]);
  if (fresh.metadata !== undefined) {
    const metadata = task.metadata ?? createRecord();
    for (const [k, v] of Object.entries(fresh.metadata)) setOwn(metadata, k, v);
    task.metadata = metadata;
  }
  for (const [k, v] of Object.entries(fresh.extra)) setOwn(task.extra, k, v);
  return task;
}

/** What the source says of a task imported before that the board has otherwise, and that a re-import leaves as it is. */
function standingWarning(name: string, fresh: Task, current: Task, edgesDiffer: boolean): string | undefined {
  const differ: string[] = [];
  if (fresh.status !== current.status) differ.push(`the source has it ${fresh.status}, the board ${current.status}`);
  if (fresh.owner !== current.owner) differ.push(`the source's owner is ${fresh.owner || 'nobody'}, the board's ${current.owner || 'nobody'}`);
  if (edgesDiffer) differ.push("the source's edges among the tasks imported before differ from the board's");
  if (differ.length === 0) return undefined;
  const id = current.id;
  const hint =
    fresh.status === current.status || current.status === 'completed' || current.status === 'deleted'
      ? ''
      : fresh.status === 'completed'
        ? ` ('tasks done ${id}' to follow the source)`
        : fresh.status === 'deleted'
          ? ` ('tasks delete ${id}' to follow the source)`
          : fresh.status === 'in_progress'
            ? ` ('tasks start ${id}' to follow the source)`
            : ` ('tasks release ${id}' to follow the source)`;
  return `${name}: ${differ.join('; ')}; a re-import leaves status, owner and edges as the board has them${hint}`;
}

/** The fields of `after` that differ from `before`, for the `updated` event. */
function changedFields(before: Task, after: Task): string[] {
  const a = JSON.parse(serializeTask(before)) as Record<string, unknown>;
  const b = JSON.parse(serializeTask(after)) as Record<string, unknown>;
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
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
  const toNew = new Map<string, number>();
  let nextId = target.firstId;
  const ids = list.tasks.map((t) => {
    const key = idKey(t.sourceId);
    if (toNew.has(key)) throw new TasksError('E_INVALID', `${list.source}: two tasks have the id ${JSON.stringify(t.sourceId)}; nothing was imported`);
    const id = before.get(t.sourceId)?.id ?? nextId++;
    toNew.set(key, id);
    return id;
  });
  const fresh = list.tasks.map((t, i) => {
    const task = freshTask(list, t, ids[i], toNew, target.source);
    checkImported(list.source, t, () => checkLimits(task));
    return task;
  });
  const tasks = fresh.map((task, i) => {
    const current = before.get(list.tasks[i].sourceId);
    return current ? refreshTask(current, task) : task;
  });
  const beforeIds = new Set([...before.values()].map((t) => t.id));
  const byId = new Map(tasks.map((t) => [t.id, t]));
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
    // As 'tasks dep add' does, no new edge to a task deleted on the board.
    const gone = [from, to].find((id) => beforeIds.has(id) && byId.get(id)!.status === 'deleted');
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
  // Between two tasks imported before, the board's edges stand (standingWarning says where the source differs).
  const edgesDiffer = new Set<number>();
  const onBoard = new Set(tasks.filter((t) => beforeIds.has(t.id)).flatMap((t) => t.blocks.filter((to) => beforeIds.has(to)).map((to) => `${t.id}>${to}`)));
  const inSource = [...edges].filter((e) => e.split('>').every((id) => beforeIds.has(Number(id))));
  for (const e of [...inSource.filter((x) => !onBoard.has(x)), ...[...onBoard].filter((x) => !edges.has(x))])
    for (const id of e.split('>')) edgesDiffer.add(Number(id));
  for (const e of edges) {
    const [from, to] = e.split('>').map(Number);
    if (beforeIds.has(from) && beforeIds.has(to)) continue;
    const blocker = byId.get(from)!;
    const waiter = byId.get(to)!;
    blocker.blocks.push(to);
    // A finished blocker no longer blocks: the edge stays on its side as history (docs/protocol.md, "Edges").
    if (!isClosed(blocker.status)) waiter.blockedBy.push(from);
  }
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
  // The tasks this import creates, and those it gives new blockers.
  const touched = tasks.filter((t, i) => {
    const current = before.get(list.tasks[i].sourceId);
    return current === undefined || t.blockedBy.some((id) => !current.blockedBy.includes(id));
  });
  const names = new Map(list.tasks.map((t, i) => [ids[i], `${t.sourceId} -> #${ids[i]} (${shortSubject(t.subject)})`]));
  const created = new Set(mapping.filter((m) => m.action === 'created').map((m) => m.to));
  warnings.push(...workInProgressWarnings(touched, created, names, target));
  const summary: Record<ImportAction, number> = { created: 0, updated: 0, unchanged: 0 };
  for (const m of mapping) summary[m.action]++;
  return { source: list.source, mapping, tasks: [...tasks].sort((a, b) => a.id - b.id), summary, warnings, notes: [...(list.notes ?? [])] };
}

/** Refuses an import that would close a cycle, among its tasks or through the board's, spelled with the source's ids. */
function checkNoCycle(list: ForeignList, tasks: Task[], ids: number[], target: ImportTarget): void {
  const mine = new Set(ids);
  const graph = BoardGraph.fromTasks([...(target.board ?? []).filter((t) => !mine.has(t.id)), ...tasks]);
  // Only a cycle through the import's tasks is its doing (doctor reports one the board had already).
  const component = graph.cyclicComponents().find((c) => c.some((id) => mine.has(id)));
  if (!component) return;
  const cycle =
    graph.cycleThrough(
      component.find((id) => mine.has(id))!,
      component,
    ) ?? component;
  const fromNew = new Map(list.tasks.map((t, i) => [ids[i], t.sourceId]));
  throw new TasksError(
    'E_CYCLE',
    `${list.source} has a cycle ${cycle.map((id) => (fromNew.has(id) ? JSON.stringify(fromNew.get(id)) : `#${id}`)).join(' -> ')}; remove one of its edges in the source, nothing was imported`,
    { cycle },
  );
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
      // Imported work in progress counts against its owner like any claim.
      if (t.status === 'in_progress' && t.owner !== '') tx.putLease({ ...createLease(t.id, t.owner, null, store.config.leaseSeconds), adopted: true });
      tx.event({ type: 'created', task: t.id, owner: options.actor, subject: m.subject, importedFrom: m.from });
    }
    if (highest) tx.setHighWaterMark(highest);
    return plan;
  });
  return { ...result.value, dryRun: false };
}
