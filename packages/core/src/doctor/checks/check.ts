// What a doctor check is, and the scan it adds to: each check reads what it
// needs of the board and pushes its findings (and the repairs it plans) into
// the one context of a scan. The order of the checks in checks/index.ts is
// the order of their finding codes.
import { serializeTask, type Task } from '../../format/format.js';
import type { TaskStore } from '../../store.js';
import type { DoctorFinding, DoctorOptions, FindingCode } from '../findings.js';
import type { GitAnswers } from '../git-answers.js';

/** One check of the board: the codes it can emit, in order, and how it looks. */
export interface DoctorCheck {
  name: string;
  /** Every code `run` can push, in the order findings at one spot are listed. */
  codes: readonly FindingCode[];
  run(scan: Scan): void;
}

export interface FileChange {
  code: FindingCode;
  text: string;
}

export interface PlannedWrite {
  id: number;
  before: string;
  after: string;
  changes: FileChange[];
}

export interface Plan {
  writes: Map<number, PlannedWrite>;
  highWaterMark?: { from: string; to: number };
  staleLocks: { path: string; age: string }[];
  temps: { path: string; age: string }[];
  leases: { task: number; file: string; why: string }[];
  /** Tasks of unfinished changes: taking their locks finishes them. */
  journals: number[];
}

export interface ScannedFile {
  name: string;
  path: string;
  fileId?: number;
  text: string;
  /** The task after safe normalisations, when the file holds a valid one. */
  task?: Task;
  /** Id as written in the file, when it is a number. */
  rawId?: number;
  stringIds: boolean;
  /** `serializeTask(task)`, once it was asked for (canonicalText). */
  canonical?: string;
}

/** A scan in progress: what the checks before saw, and where findings go. */
export interface Scan {
  store: TaskStore;
  options: DoctorOptions;
  /** What the checks ask git, shared by the scans of one command (git-answers.ts). */
  git: GitAnswers;
  now: number;
  /** Lock and temp-file age beyond which nobody is holding or writing them. */
  staleMs: number;
  findings: DoctorFinding[];
  plan: Plan;
  /** The names in the board folder, sorted, as task-files listed it (one listing per scan). */
  boardNames: string[];
  /** Every task_*.json read (task-files). */
  files: ScannedFile[];
  /** Ids of task files under a proper name (task-files). */
  present: Set<number>;
  /** The valid tasks under their own name, and their files (task-files). */
  byId: Map<number, Task>;
  fileOf: Map<number, ScannedFile>;
  /** Tasks with edge repairs planned, and the repairs (graph). */
  edits: Map<number, { task: Task; changes: FileChange[] }>;
}

/** The canonical text of a file's task (it must have one), serialized once per scan: the form check and the planned writes both compare it. */
export function canonicalText(file: ScannedFile): string {
  if (file.canonical === undefined) {
    const canonical = serializeTask(file.task!);
    // Equal to the text (most files): keep the one string, not a copy per file for the rest of the scan.
    file.canonical = canonical === file.text ? file.text : canonical;
  }
  return file.canonical;
}

/** An age for a message: "40 s", "12 min", "3 h", "2 days". */
export function formatAge(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} days`;
}

/** A value for a message, cut at 40 characters. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const s = JSON.stringify(value);
  return s.length > 40 ? s.slice(0, 40) + '…' : s;
}
