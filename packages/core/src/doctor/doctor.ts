import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptTaskError, formatCycle, isErrnoException } from '../errors.js';
import {
  MAX_TASK_FILE_BYTES,
  TASK_STATUSES,
  copyTask,
  stripBom,
  idFromFileName,
  serializeTask,
  taskFileName,
  validateTask,
  type Task,
} from '../format/format.js';
import { isTempFileName, readFileIfExists } from '../fs/fsio.js';
import { checkMergeDriver } from '../git/git-setup.js';
import { findJsonSyntaxError, findTopLevelKey, positionAt } from '../format/json-locate.js';
import { journalDir, journalTasks, listJournals, readJournal } from '../fs/journal.js';
import { leaseExpiry, listLeases, readLease } from '../runtime/leases.js';
import { acquireLock } from '../fs/locks.js';
import { checkGraph, settleEdge, type EdgeField } from '../consistency/reconcile.js';
import { HIGHWATERMARK_FILE, RUNTIME_DIR, type TaskStore } from '../store.js';
import { ConcurrentChange } from '../board/transaction.js';

/**
 * `tasks doctor`: finds everything wrong with a board that people, merges or
 * killed processes can leave behind, and repairs what has a safe repair.
 *
 * Task files are read leniently here (raw JSON, edge ids written as strings
 * accepted) so doctor can diagnose and fix files the strict parser refuses.
 */

/** What kind of problem a finding is; stable, for `--json`. */
export type FindingCode =
  | 'invalid_json'
  | 'merge_conflict'
  | 'invalid_field'
  | 'bad_file_name'
  | 'id_mismatch'
  | 'duplicate_id'
  | 'string_id'
  | 'one_sided_edge'
  | 'missing_task'
  | 'cycle'
  | 'closed_blocker'
  | 'non_canonical'
  | 'highwatermark'
  | 'stale_lock'
  | 'expired_lease'
  | 'temp_file'
  | 'merge_driver'
  | 'untracked_claim'
  | 'not_a_file'
  | 'unfinished_change';

/** One problem: where it is, what is wrong, and one line that says how to fix it. */
export interface DoctorFinding {
  code: FindingCode;
  /** Absolute path of the file concerned, when there is one. */
  file?: string;
  line?: number;
  column?: number;
  /** The task the finding is about. */
  task?: number;
  /** For cycles: the ids in order, first == last. */
  cycle?: number[];
  message: string;
  /** One line: what to do about it. */
  fix: string;
  /** True when `tasks doctor --fix` repairs it. */
  fixable: boolean;
}

/** One repair `--fix` made. */
export interface DoctorChange {
  code: FindingCode;
  file: string;
  task?: number;
  message: string;
}

export interface DoctorOptions {
  /** Clock for lock, temp-file and lease ages (tests). */
  now?: number;
  /** Check the git merge driver registration (default true). */
  git?: boolean;
}

export interface DoctorReport {
  findings: DoctorFinding[];
  /** Task files seen (valid or not). */
  files: number;
}

export interface RepairReport {
  changes: DoctorChange[];
  /** What is still wrong after the repairs (doctor exits 1 while this is not empty). */
  remaining: DoctorFinding[];
}

/** Finds every problem on the board; reads only. */
export function diagnoseBoard(store: TaskStore, options: DoctorOptions = {}): DoctorReport {
  const scan = scanBoard(store, options);
  return { findings: stableFindings(store, options, scan.findings), files: scan.fileCount };
}

/**
 * A scan reads files one by one without locks, so a change by another
 * process in the middle (a completion writes the task, then its dependents)
 * can look like a problem for a moment. Problems are reported only if a
 * second look finds them too.
 */
function stableFindings(store: TaskStore, options: DoctorOptions, findings: DoctorFinding[]): DoctorFinding[] {
  if (findings.length === 0) return findings;
  const key = (f: DoctorFinding) => JSON.stringify([f.code, f.file, f.task, f.message]);
  const again = new Set(scanBoard(store, options).findings.map(key));
  return findings.filter((f) => again.has(key(f)));
}

/**
 * Repairs what has a safe repair: stale locks and leftover temp files go;
 * under the board lock, then the task locks in ascending id order, task files
 * are rewritten atomically (ids normalised, missing edge sides added, closed
 * blockers dropped, canonical form) and `.highwatermark` is raised. Files that
 * do not parse are never touched; cycles and edges to missing tasks are only
 * reported. Returns each change and what remains.
 */
export async function repairBoard(store: TaskStore, options: DoctorOptions = {}): Promise<RepairReport> {
  const changes: DoctorChange[] = [];
  let remaining: DoctorFinding[] = [];
  const first = scanBoard(store, options);
  // Stale locks first: one of them may be the board lock we are about to take.
  for (const lock of first.plan.staleLocks) {
    if (await removeStaleLock(lock.path, store)) changes.push({ code: 'stale_lock', file: lock.path, message: `removed stale lock (${lock.age})` });
  }
  for (const temp of first.plan.temps) {
    try {
      unlinkSync(temp.path);
      changes.push({ code: 'temp_file', file: temp.path, message: `removed leftover temp file (${temp.age})` });
    } catch (error) {
      if (!isErrnoException(error, 'ENOENT')) throw error;
    }
  }

  // One transaction: the board lock, then the locks of every file to write.
  // The plan is made again under the locks (the first scan ran without
  // them); a file that changed between that plan and its lock starts it over.
  const repaired = await store.transact({ board: true, tasks: [...first.plan.writes.keys(), ...first.plan.leases.map((l) => l.task), ...first.plan.journals] }, (tx) => {
    const scan = scanBoard(store, { ...options, git: false });
    const writes = [...scan.plan.writes.values()].sort((a, b) => a.id - b.id);
    tx.need({ tasks: [...writes.map((w) => w.id), ...scan.plan.leases.map((l) => l.task), ...scan.plan.journals] });
    const made: DoctorChange[] = [];
    for (const w of writes) {
      if (tx.readText(w.id) !== w.before) throw new ConcurrentChange();
      tx.putText(w.id, w.after);
      for (const message of w.changes) made.push({ code: message.code, file: store.taskPath(w.id), task: w.id, message: message.text });
      tx.event({ type: 'repaired', task: w.id, changes: w.changes.map((c) => c.text) });
    }
    if (scan.plan.highWaterMark) {
      const { from, to } = scan.plan.highWaterMark;
      tx.setHighWaterMark(to);
      made.push({ code: 'highwatermark', file: join(store.dir, HIGHWATERMARK_FILE), message: `raised from ${from} to ${to}` });
    }
    for (const planned of scan.plan.leases) {
      const lease = tx.readLease(planned.task);
      if (!lease || !leaseExpiry(lease, options.now)) continue;
      let task: Task | undefined;
      try {
        task = tx.tryRead(planned.task);
      } catch (error) {
        if (!(error instanceof CorruptTaskError)) throw error;
      }
      if (task && task.status === 'in_progress' && task.owner === lease.owner) continue;
      tx.dropLease(planned.task);
      made.push({ code: 'expired_lease', file: planned.file, task: planned.task, message: `removed the lease of #${planned.task}: ${planned.why}` });
    }
    return made;
  });
  changes.push(...repaired.value);
  for (const id of await store.adoptUntrackedClaims()) {
    const task = store.peekTask(id);
    changes.push({ code: 'untracked_claim', file: store.taskPath(id), task: id, message: `recorded the claim of #${id} by ${task?.owner ?? '?'}` });
  }
  // What remains is judged under the board lock, while changes to several tasks cannot interleave.
  remaining = (await store.transact({ board: true }, () => scanBoard(store, options).findings)).value;
  return { changes, remaining };
}


/** Takes the lock over the way proper-lockfile does (only when stale), then releases it, which removes it. */
async function removeStaleLock(path: string, store: TaskStore): Promise<boolean> {
  try {
    const { release } = await acquireLock(path, { ...store.lockOptions, timeoutMs: 0 });
    await release();
    return true;
  } catch {
    // Held by a live process (refreshed meanwhile) or gone: leave it.
    return false;
  }
}

// ---- the scan ---------------------------------------------------------------

interface FileChange {
  code: FindingCode;
  text: string;
}

interface PlannedWrite {
  id: number;
  before: string;
  after: string;
  changes: FileChange[];
}

interface Plan {
  writes: Map<number, PlannedWrite>;
  highWaterMark?: { from: string; to: number };
  staleLocks: { path: string; age: string }[];
  temps: { path: string; age: string }[];
  leases: { task: number; file: string; why: string }[];
  /** Tasks of unfinished changes: taking their locks finishes them. */
  journals: number[];
}

interface ScannedFile {
  name: string;
  path: string;
  fileId?: number;
  text: string;
  /** The task after safe normalisations, when the file holds a valid one. */
  task?: Task;
  /** Id as written in the file, when it is a number. */
  rawId?: number;
  stringIds: boolean;
}

const EDGE_KEYS = ['blockedBy', 'blocks'] as const;
const STRING_ID_RE = /^\s*(?:#|task_)?([1-9][0-9]{0,15})\s*$/;
const CONFLICT_RE = /^(<{7}|={7}|>{7})(?: |$)/m;

function scanBoard(store: TaskStore, options: DoctorOptions) {
  const now = options.now ?? Date.now();
  const staleMs = Math.max(2000, store.lockOptions.staleMs);
  const findings: DoctorFinding[] = [];
  const plan: Plan = { writes: new Map(), staleLocks: [], temps: [], leases: [], journals: [] };
  const names = readdirSync(store.dir).sort();
  const files: ScannedFile[] = [];

  for (const name of names) {
    if (!/^task_.*\.json$/i.test(name)) continue;
    const path = join(store.dir, name);
    const fileId = idFromFileName(name);
    if (fileId === undefined)
      findings.push({
        code: 'bad_file_name',
        file: path,
        message: `${name} is not a task file name (task_N.json, N a positive integer without leading zeros), so it is ignored`,
        fix: `rename it to task_N.json with N its "id", or remove it if it is a copy`,
        fixable: false,
      });
    let text: string;
    try {
      if (!statSync(path).isFile()) {
        findings.push({
          code: 'not_a_file',
          file: path,
          ...(fileId !== undefined ? { task: fileId } : {}),
          message: `${name} is not a regular file (a folder or a device), so it is not a task and is skipped`,
          fix: `move it out of ${store.dir}`,
          fixable: false,
        });
        continue;
      }
      text = readFileIfExists(path) ?? '';
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) continue;
      throw error;
    }
    const file = scanTaskFile(name, path, fileId, text, findings);
    files.push(file);
  }

  // Two files holding one id.
  const byRawId = new Map<number, ScannedFile[]>();
  for (const f of files) if (f.rawId !== undefined) byRawId.set(f.rawId, [...(byRawId.get(f.rawId) ?? []), f]);
  for (const [id, group] of byRawId) {
    if (group.length < 2) continue;
    const [keep, ...others] = [...group].sort((a, b) => Number(b.fileId === id) - Number(a.fileId === id) || a.name.localeCompare(b.name));
    for (const other of others) {
      const at = positionAt(other.text, findTopLevelKey(other.text, 'id'));
      findings.push({
        code: 'duplicate_id',
        file: other.path,
        line: at.line,
        column: at.column,
        task: id,
        message: `${other.name} and ${keep.name} both hold task #${id}`,
        fix: `keep one: remove ${other.name} if it is a copy, or give it a new id ('tasks create' it again)`,
        fixable: false,
      });
    }
  }

  // The graph, over the files that hold valid tasks under their own name.
  const present = new Set(files.filter((f) => f.fileId !== undefined).map((f) => f.fileId!));
  const byId = new Map<number, Task>();
  const fileOf = new Map<number, ScannedFile>();
  for (const f of files) {
    if (f.task && f.fileId === f.task.id) {
      byId.set(f.task.id, f.task);
      fileOf.set(f.task.id, f);
    }
  }
  const edited = diagnoseGraph(byId, present, fileOf, findings);

  // Planned task file writes: normalisations found per file, plus the edge repairs.
  for (const f of files) {
    if (!f.task || f.fileId !== f.task.id) continue;
    const e = edited.get(f.task.id);
    const task = e?.task ?? f.task;
    const changes: FileChange[] = [];
    if (f.stringIds) changes.push({ code: 'string_id', text: 'wrote edge ids as numbers' });
    changes.push(...(e?.changes ?? []));
    const after = serializeTask(task);
    if (after === f.text) continue;
    if (changes.length === 0) changes.push({ code: 'non_canonical', text: 'rewrote in canonical form' });
    plan.writes.set(f.task.id, { id: f.task.id, before: f.text, after, changes });
  }

  // .highwatermark
  const hwPath = join(store.dir, HIGHWATERMARK_FILE);
  const hwText = readFileIfExists(hwPath);
  const highest = Math.max(0, ...present);
  const hw = hwText !== undefined && /^\s*\d+\s*$/.test(hwText) ? Number(hwText.trim()) : undefined;
  if (hw === undefined || hw < highest) {
    const numbers = (hwText ?? '').match(/\d+/g)?.map(Number).filter(Number.isSafeInteger) ?? [];
    const to = Math.max(highest, ...numbers);
    const from = hwText === undefined ? 'missing' : hw === undefined ? JSON.stringify(hwText.trim().slice(0, 40)) : String(hw);
    if (hwText !== undefined || highest > 0) {
      findings.push({
        code: 'highwatermark',
        file: hwPath,
        message:
          hw === undefined
            ? `.highwatermark is ${hwText === undefined ? 'missing' : `not a number (${from})`}; the highest task is #${highest}`
            : `.highwatermark is ${hw}, lower than the highest task #${highest}, so ids could be handed out twice`,
        fix: `set it to ${to} (tasks doctor --fix)`,
        fixable: true,
      });
      plan.highWaterMark = { from, to };
    }
  }

  // Stale locks and leftover temp files, in the board and its runtime folders.
  for (const dir of [store.dir, join(store.dir, RUNTIME_DIR), join(store.dir, RUNTIME_DIR, 'leases')]) {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch (error) {
      if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) continue;
      throw error;
    }
    for (const name of entries) {
      const path = join(dir, name);
      const isLock = name.endsWith('.lock');
      if (!isLock && !isTempFileName(name)) continue;
      let mtime: number;
      try {
        mtime = statSync(path).mtimeMs;
      } catch (error) {
        if (isErrnoException(error, 'ENOENT')) continue;
        throw error;
      }
      const ageMs = now - mtime;
      // A held lock is refreshed every stale/2 by its live holder; a fresh temp file is a write in flight.
      if (ageMs <= staleMs) continue;
      const age = `untouched for ${formatAge(ageMs)}`;
      if (isLock) {
        findings.push({
          code: 'stale_lock',
          file: path,
          message: `stale lock ${name}, ${age} (a process was killed holding it)`,
          fix: `remove it (tasks doctor --fix); the next writer would also take it over`,
          fixable: true,
        });
        plan.staleLocks.push({ path, age });
      } else {
        findings.push({
          code: 'temp_file',
          file: path,
          message: `leftover temp file ${name}, ${age} (an interrupted write; the target file is intact)`,
          fix: `remove it (tasks doctor --fix)`,
          fixable: true,
        });
        plan.temps.push({ path, age });
      }
    }
  }

  // Expired leases.
  for (const lease of listLeases(store.runtimeDir)) {
    const why = leaseExpiry(lease, now);
    if (!why) continue;
    const file = join(store.runtimeDir, 'leases', taskFileName(lease.task));
    const task = byId.get(lease.task);
    const held = task !== undefined && task.status === 'in_progress' && task.owner === lease.owner;
    const reason = why === 'expired' ? `expired at ${lease.expiresAt}` : `its process ${lease.pid} is gone`;
    if (held) {
      findings.push({
        code: 'expired_lease',
        file,
        task: lease.task,
        message: `#${lease.task} is claimed by ${lease.owner}, but the lease ${reason}`,
        fix: `release it with 'tasks reap' (or 'tasks heartbeat ${lease.task}' if ${lease.owner} is still working)`,
        fixable: false,
      });
    } else {
      findings.push({
        code: 'expired_lease',
        file,
        task: lease.task,
        message: `a lease of #${lease.task} for ${lease.owner} ${reason}, and the task is no longer held by ${lease.owner}`,
        fix: `remove the record (tasks doctor --fix)`,
        fixable: true,
      });
      plan.leases.push({ task: lease.task, file, why: `${reason}; the task is no longer held by ${lease.owner}` });
    }
  }

  // Claims made by hand or pulled through git have no record, so the
  // single-in-progress rule cannot see them until they are adopted.
  for (const task of byId.values()) {
    if (task.status !== 'in_progress' || task.owner === '') continue;
    const lease = readLease(store.runtimeDir, task.id);
    if (lease && lease.owner === task.owner) continue;
    // Our commands write the record before the task says in_progress and
    // remove it after it stops, so the file read earlier in this scan may be
    // stale: look at the file, then the record, again before reporting.
    const now = store.peekTask(task.id);
    if (!now || now.status !== 'in_progress' || now.owner !== task.owner) continue;
    if (readLease(store.runtimeDir, task.id)?.owner === task.owner) continue;
    findings.push({
      code: 'untracked_claim',
      file: store.taskPath(task.id),
      task: task.id,
      message: `#${task.id} is in progress for ${task.owner} but has no claim record, so ${task.owner} could start a second task`,
      fix: 'record the claim (tasks doctor --fix; the watcher does it too)',
      fixable: true,
    });
  }

  // Changes a writer committed but did not finish (it died or lost its
  // locks). A journal whose lock is held and fresh belongs to a change in
  // flight right now: not a problem.
  for (const name of listJournals(store.runtimeDir)) {
    const lockPath = name === 'board.json' ? store.boardLockPath() : store.taskLockPath(Number(/[0-9]+/.exec(name)![0]));
    const lockAge = statSync(lockPath, { throwIfNoEntry: false })?.mtimeMs;
    if (lockAge !== undefined && now - lockAge <= staleMs) continue;
    let tasks: number[] = [];
    try {
      const journal = readJournal(store.runtimeDir, name);
      if (!journal) continue;
      tasks = journalTasks(journal);
    } catch {
      // an unreadable record is reported the same way; its tasks are unknown
    }
    const file = join(journalDir(store.runtimeDir), name);
    findings.push({
      code: 'unfinished_change',
      file,
      ...(tasks.length === 1 ? { task: tasks[0] } : {}),
      message: `a change to ${tasks.length ? tasks.map((id) => `#${id}`).join(', ') : 'the board'} was committed but not finished (its writer died or lost its locks)`,
      fix: 'the next command that takes those locks finishes it (tasks doctor --fix does)',
      fixable: true,
    });
    plan.journals.push(...tasks);
  }

  if (options.git !== false) {
    const driver = checkMergeDriver(store.dir);
    if (driver.problem)
      findings.push({ code: 'merge_driver', file: driver.attributesFile, message: driver.problem, fix: driver.fix ?? 'tasks init --git', fixable: false });
  }

  findings.sort(compareFindings);
  return { findings, plan, fileCount: files.length };
}

const CODE_ORDER: FindingCode[] = [
  'merge_conflict',
  'invalid_json',
  'bad_file_name',
  'invalid_field',
  'id_mismatch',
  'duplicate_id',
  'string_id',
  'missing_task',
  'cycle',
  'one_sided_edge',
  'closed_blocker',
  'non_canonical',
  'highwatermark',
  'stale_lock',
  'temp_file',
  'expired_lease',
  'untracked_claim',
  'not_a_file',
  'unfinished_change',
  'merge_driver',
];

function compareFindings(a: DoctorFinding, b: DoctorFinding): number {
  return (
    (a.file ?? '').localeCompare(b.file ?? '') ||
    (a.line ?? 0) - (b.line ?? 0) ||
    (a.column ?? 0) - (b.column ?? 0) ||
    CODE_ORDER.indexOf(a.code) - CODE_ORDER.indexOf(b.code) ||
    a.message.localeCompare(b.message)
  );
}

/** Reads one task file leniently and reports what is wrong with it. */
function scanTaskFile(name: string, path: string, fileId: number | undefined, text: string, findings: DoctorFinding[]): ScannedFile {
  const file: ScannedFile = { name, path, fileId, text, stringIds: false };
  const push = (code: FindingCode, offset: number, message: string, fix: string, fixable = false) => {
    const at = positionAt(text, offset);
    findings.push({ code, file: path, line: at.line, column: at.column, ...(fileId !== undefined ? { task: fileId } : {}), message, fix, fixable });
  };
  if (Buffer.byteLength(text) > MAX_TASK_FILE_BYTES) {
    push('invalid_field', 0, `file is over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task`, 'shorten the description or move data out of the task');
    return file;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(stripBom(text));
  } catch {
    const marker = CONFLICT_RE.exec(text);
    if (marker) {
      push(
        'merge_conflict',
        marker.index,
        'unresolved merge conflict (the file holds <<<<<<< ======= >>>>>>> lines)',
        'keep one side of each conflict, delete the marker lines, then git add the file',
      );
    } else {
      const problem = findJsonSyntaxError(text);
      push('invalid_json', problem?.offset ?? 0, `invalid JSON: ${problem?.message ?? 'does not parse'}`, 'fix the JSON by hand at this spot (tasks never rewrites a file that does not parse)');
    }
    return file;
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    push('invalid_field', 0, 'a task file must hold a JSON object', 'write the task as a JSON object (see docs/format.md)');
    return file;
  }
  const obj = { ...(raw as Record<string, unknown>) };
  if (typeof obj.id === 'number' && Number.isSafeInteger(obj.id) && obj.id > 0) file.rawId = obj.id;

  // Edge ids written as strings: "2", "task_2", "#2".
  for (const key of EDGE_KEYS) {
    const value = obj[key];
    if (!Array.isArray(value)) continue;
    obj[key] = value.map((item, index) => {
      if (typeof item !== 'string') return item;
      const m = STRING_ID_RE.exec(item);
      if (!m) return item;
      const id = Number(m[1]);
      file.stringIds = true;
      const fixable = fileId !== undefined;
      push('string_id', findArrayElement(text, key, index), `"${key}" holds the id ${JSON.stringify(item)} as a string`, fixable ? `write it as ${id} (tasks doctor --fix)` : `write it as ${id}`, fixable);
      return id;
    });
  }

  const before = findings.length;
  const key = (k: string) => findTopLevelKey(text, k);
  const id = obj.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
    push('invalid_field', key('id'), `"id" must be a positive integer, got ${show(id)}`, fileId !== undefined ? `set "id" to ${fileId}` : 'set "id" to the number in the file name');
  else if (fileId !== undefined && id !== fileId)
    push('id_mismatch', key('id'), `"id" is ${id} but the file name says ${fileId}`, `set "id" to ${fileId}, or rename the file to task_${id}.json if that is free`);
  if (typeof obj.subject !== 'string' || obj.subject.trim() === '')
    push('invalid_field', key('subject'), `"subject" must be a non-empty string, got ${show(obj.subject)}`, 'give the task a one-line "subject"');
  if (obj.description !== undefined && obj.description !== null && typeof obj.description !== 'string')
    push('invalid_field', key('description'), `"description" must be a string, got ${show(obj.description)}`, 'make "description" a string ("" when empty)');
  if (typeof obj.status !== 'string' || !(TASK_STATUSES as readonly string[]).includes(obj.status))
    push('invalid_field', key('status'), `unknown status ${show(obj.status)}`, `set "status" to one of ${TASK_STATUSES.join(', ')}`);
  if (obj.owner !== undefined && obj.owner !== null && typeof obj.owner !== 'string')
    push('invalid_field', key('owner'), `"owner" must be a string, got ${show(obj.owner)}`, 'make "owner" a string ("" when unclaimed)');
  if (obj.activeForm !== undefined && typeof obj.activeForm !== 'string')
    push('invalid_field', key('activeForm'), `"activeForm" must be a string, got ${show(obj.activeForm)}`, 'make "activeForm" a string, or remove it');
  for (const k of EDGE_KEYS) {
    const value = obj[k];
    if (value === undefined || value === null) continue;
    if (!Array.isArray(value)) {
      push('invalid_field', key(k), `"${k}" must be an array of task ids, got ${show(value)}`, `write "${k}" as a list of ids, e.g. [2, 3]`);
      continue;
    }
    value.forEach((item, index) => {
      if (typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1)
        push('invalid_field', findArrayElement(text, k, index), `"${k}" holds ${show(item)}, which is not a task id`, `replace it with a task id (a positive integer) or remove it`);
    });
  }
  const metadata = obj.metadata;
  if (metadata !== undefined && (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)))
    push('invalid_field', key('metadata'), `"metadata" must be an object, got ${show(metadata)}`, 'make "metadata" an object, or remove it');

  if (findings.length === before) {
    try {
      file.task = validateTask(obj, path, text);
    } catch (error) {
      // The core validator knows best; anything it refuses that the checks above missed.
      const details = (error as { details?: { problem?: string } }).details;
      push('invalid_field', 0, details?.problem ?? String(error), 'edit the file by hand (see docs/format.md)');
      return file;
    }
    // A file under a name that is not task_N.json is never rewritten: its name is the problem.
    if (!file.stringIds && fileId !== undefined && serializeTask(file.task) !== text) {
      const canonical = serializeTask(file.task);
      let i = 0;
      while (i < text.length && text[i] === canonical[i]) i++;
      push('non_canonical', i, 'not in canonical form (key order, 2-space indent, sorted ids, trailing newline)', 'rewrite it (tasks doctor --fix); the meaning does not change', true);
    }
  }
  return file;
}

/** Offset of element `index` of the top-level array `key` (or of the key when not found). */
export function findArrayElement(text: string, key: string, index: number): number {
  const keyAt = findTopLevelKey(text, key);
  let i = text.indexOf('[', keyAt);
  if (keyAt === 0 && text[0] !== '"') return 0;
  if (i < 0) return keyAt;
  i++;
  let depth = 0;
  let element = 0;
  let atStart = true;
  for (; i < text.length; i++) {
    const c = text[i];
    if (/\s/.test(c)) continue;
    if (atStart && depth === 0) {
      if (element === index) return i;
      atStart = false;
    }
    if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') i++;
        i++;
      }
    } else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      if (depth === 0) break;
      depth--;
    } else if (c === ',' && depth === 0) {
      element++;
      atStart = true;
    }
  }
  return keyAt;
}

/**
 * Doctor's findings and planned edits for the graph of the tasks it could
 * read. What is wrong, and which side a repair writes, is decided by
 * `checkGraph` and `settleEdge` (reconcile.ts), as for the watcher; here
 * verdicts only become findings with positions and one-line fixes.
 */
function diagnoseGraph(
  byId: Map<number, Task>,
  present: Set<number>,
  fileOf: Map<number, ScannedFile>,
  findings: DoctorFinding[],
): Map<number, { task: Task; changes: FileChange[] }> {
  const unreadable = new Set([...present].filter((id) => !byId.has(id)));
  const { verdicts } = checkGraph([...byId.values()], { unreadable });
  const edited = new Map<number, { task: Task; changes: FileChange[] }>();
  const edit = (id: number) => {
    let e = edited.get(id);
    if (!e) {
      e = { task: copyTask(byId.get(id)!), changes: [] };
      edited.set(id, e);
    }
    return e;
  };
  const keyAt = (id: number, key: EdgeField) => {
    const f = fileOf.get(id)!;
    return { file: f.path, ...positionAt(f.text, findTopLevelKey(f.text, key)) };
  };
  /** A cycle, found at `id`'s `field`; `dep rm waiter blocker` removes one of its edges. */
  const cycleFinding = (cycle: number[], id: number, field: EdgeField, waiter: number, blocker: number) =>
    findings.push({
      code: 'cycle',
      ...keyAt(id, field),
      task: id,
      cycle,
      message: `cycle ${formatCycle(cycle)}: none of these tasks can ever become ready`,
      fix: `remove one edge of it, e.g. tasks dep rm ${waiter} ${blocker}`,
      fixable: false,
    });

  for (const v of verdicts) {
    if (v.kind === 'cycle') {
      cycleFinding(v.cycle, v.cycle[0], 'blocks', v.cycle[v.cycle.length - 1], v.cycle[v.cycle.length - 2]);
      continue;
    }
    const { blocker: b, waiter: w } = v;
    if (v.kind === 'broken') {
      if (v.reason === 'self' || v.reason === 'cycle') cycleFinding(v.cycle ?? [b, b], v.task, v.field, w, b);
      else if (v.reason === 'missing' && v.field === 'blocks')
        findings.push({
          code: 'missing_task',
          ...keyAt(b, 'blocks'),
          task: b,
          message: `#${b} blocks #${w}, which does not exist`,
          fix: `remove the edge: tasks update ${b} --remove-blocks ${w}`,
          fixable: false,
        });
      else
        findings.push({
          code: 'missing_task',
          ...keyAt(w, 'blockedBy'),
          task: w,
          message:
            v.reason === 'missing'
              ? `#${w} is blocked by #${b}, which does not exist, so #${w} can never become ready`
              : `#${w} is blocked by #${b}, which was deleted before the edge was made (an edge may only name a task that is not deleted)`,
          fix: `remove the edge: tasks dep rm ${w} ${b}`,
          fixable: false,
        });
      continue;
    }
    if (v.kind === 'remove-side') continue; // only with an earlier look at the board, which doctor never has
    const blocker = edit(b);
    const waiter = edit(w);
    const changed = settleEdge(v, blocker.task, waiter.task);
    const status = byId.get(b)!.status;
    if (v.kind === 'propagate' || (v.field === 'blocks' && changed.includes(waiter.task))) {
      // A completed or deleted blocker still in blockedBy: dropped, as propagation would.
      findings.push({
        code: 'closed_blocker',
        ...keyAt(w, 'blockedBy'),
        task: w,
        message: `#${w} still lists #${b} in "blockedBy" though #${b} is ${status}`,
        fix: v.kind === 'propagate' ? `drop it (tasks doctor --fix), or run 'tasks done ${b}' again to propagate` : `drop it (tasks doctor --fix)`,
        fixable: true,
      });
      waiter.changes.push({ code: 'closed_blocker', text: `dropped #${b} (${status}) from "blockedBy"` });
      if (changed.includes(blocker.task)) blocker.changes.push({ code: 'closed_blocker', text: `added #${w} to "blocks" as history (#${b} is ${status})` });
    } else if (v.field === 'blocks') {
      findings.push({
        code: 'one_sided_edge',
        ...keyAt(b, 'blocks'),
        task: b,
        message: `#${w} is blocked by #${b}, but #${b} does not list #${w} in "blocks"`,
        fix: `add the missing side (tasks doctor --fix), or remove the edge: tasks dep rm ${w} ${b}`,
        fixable: true,
      });
      blocker.changes.push({ code: 'one_sided_edge', text: `added #${w} to "blocks" (the other side of #${w}'s "blockedBy")` });
    } else {
      findings.push({
        code: 'one_sided_edge',
        ...keyAt(w, 'blockedBy'),
        task: w,
        message: `#${b} lists #${w} in "blocks", but #${w} does not list #${b} in "blockedBy"`,
        fix: `add the missing side (tasks doctor --fix), or remove the edge: tasks update ${b} --remove-blocks ${w}`,
        fixable: true,
      });
      waiter.changes.push({ code: 'one_sided_edge', text: `added #${b} to "blockedBy" (the other side of #${b}'s "blocks")` });
    }
  }
  return edited;
}

function formatAge(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} days`;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const s = JSON.stringify(value);
  return s.length > 40 ? s.slice(0, 40) + '…' : s;
}
