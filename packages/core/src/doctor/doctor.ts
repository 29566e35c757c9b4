import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ConcurrentChange, HIGHWATERMARK_FILE } from '../engine/transaction.js';
import { pendingReconcile, reconcileBranches, reconcileFromRecord, type PendingReconcile } from '../git/branch-reconcile.js';
import { CorruptTaskError, isErrnoException } from '../errors.js';
import { serializeTask, taskFileName, type Task } from '../format/format.js';
import { acquireLock } from '../fs/locks.js';
import { leaseExpiry } from '../runtime/leases.js';
import type { TaskStore } from '../store.js';
import { GitAnswers } from './git-answers.js';
import type { DoctorChange, DoctorFinding, DoctorOptions, DoctorReport, RepairReport } from './findings.js';

export type { DoctorChange, DoctorFinding, DoctorOptions, DoctorReport, FindingCode, RepairReport } from './findings.js';
import { DOCTOR_CHECKS, FINDING_ORDER, canonicalText, type FileChange, type Scan } from './checks/index.js';

// Kept here for the internal API it was part of; it lives with the other JSON position helpers now.
export { findArrayElement } from '../format/json-locate.js';

/**
 * `tasks doctor`: finds everything wrong with a board that people, merges or
 * killed processes can leave behind, and repairs what has a safe repair.
 *
 * Task files are read leniently here (raw JSON, edge ids written as strings
 * accepted) so doctor can diagnose and fix files the strict parser refuses.
 * Each kind of problem is a check of its own (checks/), and the order of
 * findings at one spot follows the order of the checks.
 */

/** Finds every problem on the board; reads only. */
export function diagnoseBoard(store: TaskStore, options: DoctorOptions = {}): DoctorReport {
  options = { ...withPending(store, options), answers: options.answers ?? new GitAnswers(store.dir) };
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
  // An id two branches handed out twice first: its fix is the whole-board merge of both sides, after which the
  // edges that named the wrong task are right again (the repairs below would have wired them to it).
  const pending = withPending(store, options).pending;
  if (pending) changes.push(...(await settleClashes(store, options.cwd ?? process.cwd(), pending)));
  options = { ...options, pending: undefined, answers: options.answers ?? new GitAnswers(store.dir) };
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
  const repaired = await store.transact(
    { board: true, tasks: [...first.plan.writes.keys(), ...first.plan.leases.map((l) => l.task), ...first.plan.journals] },
    (tx) => {
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
        made.push({
          code: 'highwatermark',
          file: join(store.dir, HIGHWATERMARK_FILE),
          message: `${Number(from) > to ? 'set' : 'raised'} from ${from} to ${to}`,
        });
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
    },
  );
  for (const change of repaired.value) changes.push(change);
  for (const id of await store.adoptUntrackedClaims()) {
    const task = store.peekTask(id);
    changes.push({ code: 'untracked_claim', file: store.taskPath(id), task: id, message: `recorded the claim of #${id} by ${task?.owner ?? '?'}` });
  }
  // What remains is judged under the board lock, while changes to several tasks cannot interleave, from what git
  // said to the first scan (no git process inside a board transaction).
  const settled = { ...options, answers: options.answers!.settled() };
  remaining = (await store.transact({ board: true }, () => scanBoard(store, settled).findings)).value;
  return { changes, remaining };
}

/** The options with the id clash to settle, looked up (once) unless git is off or it was given. */
function withPending(store: TaskStore, options: DoctorOptions): DoctorOptions {
  if (options.git === false || 'pending' in options) return options;
  return { ...options, pending: pendingReconcile(store, options.cwd ?? process.cwd()) };
}

/** Settles an id clash (git/branch-reconcile.ts) and says what changed. */
async function settleClashes(store: TaskStore, cwd: string, pending: PendingReconcile): Promise<DoctorChange[]> {
  const report =
    'mode' in pending.how ? await reconcileBranches(store, cwd, { mode: pending.how.mode }) : await reconcileFromRecord(store, cwd, pending.how.record);
  const moved = new Set(report.renumbered.map((r) => taskFileName(r.to)));
  const changes: DoctorChange[] = report.renumbered.map((r) => ({
    code: 'id_clash',
    file: store.taskPath(r.to),
    task: r.to,
    message: `brought back the other side's #${r.from} (${JSON.stringify(r.subject)}) as #${r.to}, with the edges and mentions of its side${r.branch ? `; its branch ${r.branch.from} is ${r.branch.to} now` : ''}`,
  }));
  for (const name of report.written)
    if (!moved.has(name)) changes.push({ code: 'id_clash', file: join(store.dir, name), message: 'settled from the board of both sides' });
  return changes;
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

/** Runs every check (checks/index.ts) and plans the task file writes their findings call for. */
function scanBoard(store: TaskStore, options: DoctorOptions) {
  const scan: Scan = {
    store,
    options,
    git: options.answers ?? new GitAnswers(store.dir),
    now: options.now ?? Date.now(),
    staleMs: Math.max(2000, store.lockOptions.staleMs),
    findings: [],
    plan: { writes: new Map(), staleLocks: [], temps: [], leases: [], journals: [] },
    boardNames: [],
    files: [],
    present: new Set(),
    byId: new Map(),
    fileOf: new Map(),
    edits: new Map(),
  };
  for (const check of DOCTOR_CHECKS) check.run(scan);
  const { findings, plan, files } = scan;

  // Planned task file writes: normalisations found per file, plus the edge repairs.
  for (const f of files) {
    if (!f.task || f.fileId !== f.task.id) continue;
    const e = scan.edits.get(f.task.id);
    const task = e?.task ?? f.task;
    const changes: FileChange[] = [];
    if (f.stringIds) changes.push({ code: 'string_id', text: 'wrote edge ids as numbers' });
    changes.push(...(e?.changes ?? []));
    // The canonical-form check serialized the unedited ones already.
    const after = e ? serializeTask(task) : canonicalText(f);
    if (after === f.text) continue;
    if (changes.length === 0) changes.push({ code: 'non_canonical', text: 'rewrote in canonical form' });
    plan.writes.set(f.task.id, { id: f.task.id, before: f.text, after, changes });
  }

  findings.sort(compareFindings);
  return { findings, plan, fileCount: files.length };
}

function compareFindings(a: DoctorFinding, b: DoctorFinding): number {
  return (
    (a.file ?? '').localeCompare(b.file ?? '') ||
    (a.line ?? 0) - (b.line ?? 0) ||
    (a.column ?? 0) - (b.column ?? 0) ||
    FINDING_ORDER.indexOf(a.code) - FINDING_ORDER.indexOf(b.code) ||
    a.message.localeCompare(b.message)
  );
}
