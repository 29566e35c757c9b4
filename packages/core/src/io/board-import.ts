import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptTaskError, TasksError, isErrnoException } from '../errors.js';
import {
  MAX_TASK_FILE_BYTES,
  TASK_KEYS,
  TASK_STATUSES,
  cloneJson,
  createRecord,
  isClosed,
  normalizeIds,
  parseTask,
  serializeTask,
  setOwn,
  taskFileName,
  type Task,
  type TaskStatus,
} from '../format/format.js';
import { checkLabels, checkNesting, checkNoteText, checkPaths, checkPriority, checkSubject } from '../board/rules.js';
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

export interface ImportMapping {
  from: string;
  to: number;
  subject: string;
}

export interface ImportPlan {
  source: string;
  mapping: ImportMapping[];
  /** The tasks as they will be written, ascending id. */
  tasks: Task[];
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
  return { source: dir, tasks, warnings };
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
  return { source: file, tasks, warnings };
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
function importMetadata(tool: string | undefined, t: ForeignTask, toNew: Map<string, number>): Record<string, unknown> | undefined {
  if (tool === undefined && !t.links?.length) return t.metadata;
  const out = createRecord();
  if (tool !== undefined) {
    // A task imported before keeps that origin too: a second move must not erase the first.
    const previous = t.metadata?.importedFrom;
    setOwn(out, 'importedFrom', previous === undefined ? { tool, id: t.sourceId } : { tool, id: t.sourceId, previous });
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
  /** The tasks on the board, for the warnings about work in progress. */
  board?: readonly Task[];
  /** The board's singleInProgress setting. */
  singleInProgress?: boolean;
}

/** A subject in a message: cut short. */
function shortSubject(subject: string): string {
  return subject.length > 60 ? `${subject.slice(0, 60)}…` : subject;
}

/**
 * Refuses a task that `tasks create` would refuse, or that a reader would:
 * an import applies the same limits as the commands (subject, priority,
 * labels, paths, notes, nesting, size), then reads the bytes back with the
 * readers' own parser. Labels and paths come out as create writes them.
 */
function checkImportedTask(task: Task, source: string, name: string): void {
  try {
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
    const text = serializeTask(task);
    const size = Buffer.byteLength(text);
    if (size > MAX_TASK_FILE_BYTES)
      throw new TasksError(
        'E_INVALID',
        `the task would be ${(size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task file`,
      );
    parseTask(text, taskFileName(task.id));
  } catch (error) {
    if (!(error instanceof TasksError)) throw error;
    const problem = error instanceof CorruptTaskError ? String(error.details.problem) : error.message;
    throw new TasksError('E_INVALID', `${source}: ${name}: ${problem}; nothing was imported`, { ...error.details, source }, { cause: error });
  }
}

/**
 * What an import would leave in a state the commands do not reach: a task in
 * progress while open tasks block it, and, under singleInProgress, an owner
 * with more than one task in progress. Imported as the source has them (it
 * records work already under way), with a warning that says how to settle it.
 */
function workInProgressWarnings(imported: readonly Task[], names: Map<number, string>, target: ImportTarget): string[] {
  const warnings: string[] = [];
  for (const t of imported) {
    if (t.status !== 'in_progress' || t.blockedBy.length === 0) continue;
    const ids = t.blockedBy.map((id) => `#${id}`).join(', ');
    warnings.push(
      `${names.get(t.id)}: in progress while blocked by ${ids}, which ${t.blockedBy.length === 1 ? 'is' : 'are'} open; it was imported as the source has it ('tasks release ${t.id}', or finish ${ids} first)`,
    );
  }
  if (!target.singleInProgress) return warnings;
  const importedIds = new Set(imported.map((t) => t.id));
  const byOwner = new Map<string, number[]>();
  for (const t of [...(target.board ?? []).filter((b) => !importedIds.has(b.id)), ...imported])
    if (t.status === 'in_progress' && t.owner !== '') byOwner.set(t.owner, [...(byOwner.get(t.owner) ?? []), t.id]);
  for (const [owner, ids] of [...byOwner].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (ids.length < 2 || !ids.some((id) => importedIds.has(id))) continue;
    const sorted = normalizeIds(ids);
    warnings.push(
      `${owner} has ${sorted.length} tasks in progress (${sorted.map((id) => `#${id}`).join(', ')}) and the board allows one per owner (singleInProgress); 'tasks release' all but one`,
    );
  }
  return warnings;
}

/** Maps a foreign list onto ids `firstId`, `firstId + 1`, … and rewrites its edges (pure). */
export function planImport(list: ForeignList, at: number | ImportTarget): ImportPlan {
  const target: ImportTarget = typeof at === 'number' ? { firstId: at } : at;
  const firstId = target.firstId;
  const warnings = [...list.warnings];
  const toNew = new Map<string, number>();
  const mapping: ImportMapping[] = [];
  list.tasks.forEach((t, i) => {
    const key = idKey(t.sourceId);
    if (toNew.has(key)) throw new TasksError('E_INVALID', `${list.source}: two tasks have the id ${JSON.stringify(t.sourceId)}; nothing was imported`);
    toNew.set(key, firstId + i);
    mapping.push({ from: t.sourceId, to: firstId + i, subject: t.subject });
  });
  const tasks: Task[] = list.tasks.map((t, i) => {
    const task: Task = {
      id: firstId + i,
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
    const metadata = importMetadata(list.tool, t, toNew);
    if (metadata !== undefined) task.metadata = metadata;
    return task;
  });
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
    edges.add(`${from}>${to}`);
  };
  for (const t of list.tasks) {
    for (const b of t.blockedBy) link(b, t.sourceId, t);
    for (const d of t.blocks) link(t.sourceId, d, t);
  }
  for (const e of edges) {
    const [from, to] = e.split('>').map(Number);
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
  const names = new Map<number, string>();
  list.tasks.forEach((t, i) => {
    names.set(tasks[i].id, `${t.sourceId} -> #${tasks[i].id} (${shortSubject(t.subject)})`);
    checkImportedTask(tasks[i], list.source, `${t.sourceId} (${shortSubject(t.subject)})`);
  });
  const cycle = BoardGraph.fromTasks(tasks).cycles()[0];
  if (cycle) {
    const fromNew = new Map(mapping.map((m) => [m.to, m.from]));
    throw new TasksError(
      'E_CYCLE',
      `${list.source} has a cycle ${cycle.map((id) => JSON.stringify(fromNew.get(id))).join(' -> ')}; remove one of its edges in the source, nothing was imported`,
      { cycle },
    );
  }
  warnings.push(...workInProgressWarnings(tasks, names, target));
  return { source: list.source, mapping, tasks, warnings, notes: [...(list.notes ?? [])] };
}

/**
 * Imports a foreign list onto the board in one transaction: under the board
 * lock the next free ids are taken (`max(.highwatermark, highest task) + 1`
 * …), the new files and their claim records are written, then
 * `.highwatermark` moves; all of it or nothing. A dry run computes the same
 * plan and writes nothing.
 */
export async function importTasks(store: TaskStore, list: ForeignList, options: { dryRun?: boolean; actor?: string } = {}): Promise<ImportResult> {
  const target = (firstId: number): ImportTarget => ({ firstId, board: store.loadBoard().tasks, singleInProgress: store.config.singleInProgress });
  if (options.dryRun) return { ...planImport(list, target(Math.max(store.readHighWaterMark(), store.listIds().at(-1) ?? 0) + 1)), dryRun: true };
  const result = await store.transact({ board: true }, async (tx) => {
    const plan = planImport(list, target(Math.max(tx.readHighWaterMark(), store.listIds().at(-1) ?? 0) + 1));
    for (const t of plan.tasks) {
      await tx.lockNewTask(t.id);
      if (tx.tryRead(t.id)) throw new TasksError('E_EXISTS', `task_${t.id}.json appeared meanwhile; nothing was imported, run the import again`);
      tx.put(t);
      // Imported work in progress counts against its owner like any claim.
      if (t.status === 'in_progress' && t.owner !== '') tx.putLease({ ...createLease(t.id, t.owner, null, store.config.leaseSeconds), adopted: true });
      const m = plan.mapping.find((x) => x.to === t.id)!;
      tx.event({ type: 'created', task: t.id, owner: options.actor, subject: m.subject, importedFrom: m.from });
    }
    if (plan.tasks.length) tx.setHighWaterMark(plan.tasks.at(-1)!.id);
    return plan;
  });
  return { ...result.value, dryRun: false };
}
