// A transaction's writes on disk (docs/decisions.md, "One writer"): the
// file changes it plans, each new file staged complete and fsync'd inside
// its lock's folder (where breaking the lock destroys it) with the journal
// beside them, then renamed into place, or renamed back when a failure after
// the commit point leaves every lock still ours. transaction.ts decides when.
import { basename, dirname, join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { CorruptTaskError, TasksError, isErrnoException } from '../errors.js';
import { MAX_TASK_FILE_BYTES, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { ensureFolder, pausePoint, removeFile, renameFile, syncAndClose, syncFolder, syncFolders, writeNewFile } from '../fs/fsio.js';
import type { HeldLock } from '../fs/locks.js';
import { LEASES_DIR } from '../runtime/leases.js';

/** One file change of a commit. */
export interface PendingOp {
  /** Board-relative path. */
  file: string;
  /** The lock a staged copy of this file lives under (and whose loss makes the rename fail). */
  gate: HeldLock;
  before: string | undefined;
  after: string | undefined;
}

/** Board-relative path of a claim record. */
export function leaseFile(id: number): string {
  return `.runtime/${LEASES_DIR}/${taskFileName(id)}`;
}

/**
 * The bytes to write for `task`: `raw`, a text put by putText (parsed
 * already), or the task serialized; refused when over the size limit, and a
 * task built by a command also when its own readers would refuse it
 * (docs/protocol.md, "One task, one file"); the commands' checks come first,
 * with their own messages.
 */
export function taskText(task: Task, raw: string | undefined): string {
  const text = raw ?? serializeTask(task);
  const size = Buffer.byteLength(text);
  if (size > MAX_TASK_FILE_BYTES)
    throw new TasksError(
      'E_INVALID',
      `task #${task.id} would be ${(size / 1024 / 1024).toFixed(1)} MB, over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task file; nothing was written (keep long text in a file and link it from the description)`,
      { id: task.id, bytes: size },
    );
  if (raw === undefined) checkReadable(task.id, text);
  return text;
}

/** The last gate of every write: a task its own readers would refuse is never written, whichever command built it. */
function checkReadable(id: number, text: string): void {
  try {
    parseTask(text, taskFileName(id));
  } catch (error) {
    if (!(error instanceof CorruptTaskError)) throw error;
    throw new TasksError(
      'E_INVALID',
      `task #${id} would be refused by every reader: ${String(error.details.problem)}; nothing was written`,
      { id },
      { cause: error },
    );
  }
}

/**
 * Writes each new file of `ops` complete inside its lock's folder, and the
 * journal (from `journal`, given the fds to fsync with them) when there is
 * one, fsync'd in batches of 64. Returns where each op's file was staged and
 * where the journal was.
 */
export async function stageWrites(
  dir: string,
  ops: PendingOp[],
  journal: (() => { fd: number; path: string }) | undefined,
): Promise<{ staged: Map<PendingOp, string>; journal: string | undefined }> {
  const staged = new Map<PendingOp, string>();
  for (const folder of new Set(ops.filter((op) => op.after !== undefined).map((op) => dirname(op.file)))) {
    if (folder !== '.') ensureFolder(join(dir, folder));
  }
  let batch: { fd: number; path: string }[] = [];
  for (const op of ops) {
    if (op.after === undefined) continue;
    const path = op.gate.stagePath(basename(op.file));
    batch.push({ fd: writeNewFile(path, op.after), path });
    staged.set(op, path);
    if (batch.length >= 64) {
      await syncAndClose(batch);
      batch = [];
    }
  }
  let journalPath: string | undefined;
  if (journal) {
    const file = journal();
    batch.push(file);
    journalPath = file.path;
  }
  await syncAndClose(batch);
  return { staged, journal: journalPath };
}

/**
 * Renames each staged file into place (or removes the file), checking just
 * before each rename that `shared` and the op's own lock are still held, and
 * fsyncs the folders. Each op done is pushed to `applied`, for an undo.
 */
export async function applyWrites(dir: string, ops: PendingOp[], staged: Map<PendingOp, string>, shared: HeldLock[], applied: PendingOp[]): Promise<void> {
  const folders = new Set<string>();
  let lastYield = Date.now();
  for (const op of ops) {
    pausePoint('rename');
    for (const lock of shared) lock.assertHeld(false);
    op.gate.assertHeld(false);
    const target = join(dir, op.file);
    const from = staged.get(op);
    if (from !== undefined) renameFile(from, target);
    else removeFile(target);
    applied.push(op);
    folders.add(dirname(target));
    // Let proper-lockfile's refresh timers run during a long commit.
    if (Date.now() - lastYield > 50) {
      await yieldToLoop();
      lastYield = Date.now();
    }
  }
  await syncFolders(folders);
}

/** Puts back what each applied op replaced, last first (through a staged copy under its lock), and fsyncs the folders. */
export async function undoWrites(dir: string, applied: PendingOp[]): Promise<void> {
  for (const op of [...applied].reverse()) {
    const target = join(dir, op.file);
    if (op.before === undefined) removeFile(target);
    else {
      const from = op.gate.stagePath(`undo.${basename(op.file)}`);
      await syncAndClose([{ fd: writeNewFile(from, op.before), path: from }]);
      renameFile(from, target);
    }
  }
  for (const folder of new Set(applied.map((op) => dirname(join(dir, op.file))))) syncFolder(folder);
}

/** A file system error as one line saying what became of the change; a TasksError (or anything else) as it is. */
export function ioError(error: unknown, outcome: string): unknown {
  if (error instanceof TasksError) return error;
  if (!isErrnoException(error)) return error;
  const dest = (error as { dest?: string }).dest;
  const where = dest ? ` ${dest}` : error.path ? ` ${error.path}` : '';
  return new TasksError('E_IO', `cannot write${where}: ${error.code} (${error.message.split(',')[0]}); ${outcome}`, { code: error.code }, { cause: error });
}
