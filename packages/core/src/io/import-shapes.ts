/**
 * The shapes of an import: a task list as read from another tool (what every
 * reader, claude-lists.ts, backlog-lists.ts and import-tools.ts, fills), where it lands, and
 * what the import plans and reports (board-import.ts).
 */
import { createRecord, type Task, type TaskStatus } from '../format/format.js';

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
  /** The source id of the task this one is part of: its `parent` when that task comes along (docs/protocol.md, "Parents"). */
  parent?: string;
  /** Relations that are not edges (a related task, a parent that did not come along): kept in `metadata.links`, with the new id where the other task came along. */
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
