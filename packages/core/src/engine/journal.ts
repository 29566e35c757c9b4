import { readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { TasksError, isErrnoException } from '../errors.js';
import { appendEvents, loggedEventsOfTx, type NewEvent } from '../events/events.js';
import { ensureFolder, readFileIfExists, removeFile, renameFile, syncAndClose, syncFolder, writeNewFile } from '../fs/fsio.js';
import type { HeldLock, LockOptions } from '../fs/locks.js';

/**
 * The commit record of a transaction that changes more than one file, or
 * logs events (docs/decisions.md, "One writer"). It is written, complete and
 * fsync'd, before the first file of the change is renamed into place: once it
 * is in `.runtime/journal/`, the change is committed. If the writer dies, or
 * loses its locks, before it has renamed every file and appended its events,
 * the next process that takes the same locks finishes the change from here
 * (roll forward), events included, and removes the record.
 *
 * `board.json` belongs to the holder of the board lock; `task_N.json` to the
 * holder of task N's lock (a change to one task).
 */
export interface Journal {
  version: 1;
  /** The transaction's id; its events carry it as `tx`. */
  tx: string;
  pid: number;
  host: string;
  /** When the record was written (ISO). */
  at: string;
  ops: JournalOp[];
  events: NewEvent[];
}

/** One file of a change: its bytes before (as a hash) and after (null: the file is removed). */
export interface JournalOp {
  /** Path relative to the board folder (`task_3.json`, `.highwatermark`, `.runtime/leases/task_3.json`). */
  file: string;
  /** sha1 of the bytes the writer read under its lock; null when there was no file. */
  before: string | null;
  /** The bytes to write; null to remove the file. */
  after: string | null;
}

export const JOURNAL_DIR = 'journal';

/** sha1 of a file's text, as journals record it. */
export function hashText(text: string | undefined): string | null {
  return text === undefined ? null : createHash('sha1').update(text, 'utf8').digest('hex');
}

/** The journal folder of a board's runtime folder. */
export function journalDir(runtimeDir: string): string {
  return join(runtimeDir, JOURNAL_DIR);
}

/** Journal names present (`board.json`, `task_N.json`); none when the folder does not exist. */
export function listJournals(runtimeDir: string): string[] {
  try {
    return readdirSync(journalDir(runtimeDir)).filter((n) => n === 'board.json' || /^task_[1-9][0-9]*\.json$/.test(n));
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return [];
    throw error;
  }
}

/** Reads a journal; undefined when it is gone (finished meanwhile). */
export function readJournal(runtimeDir: string, name: string): Journal | undefined {
  const path = join(journalDir(runtimeDir), name);
  const text = readFileIfExists(path);
  if (text === undefined) return undefined;
  try {
    const journal = JSON.parse(text) as Journal;
    if (journal.version === 1 && Array.isArray(journal.ops) && Array.isArray(journal.events) && typeof journal.tx === 'string') return journal;
  } catch {
    // fall through
  }
  // Journals are renamed into place complete and fsync'd; this is damage by hand or by the disk.
  throw new TasksError('E_CORRUPT', `${path}: an unreadable commit record; a change may be half applied: run 'tasks doctor', then remove the file`, {
    file: path,
  });
}

/** The task ids a journal's files belong to (task files and their claim records). */
export function journalTasks(journal: Journal): number[] {
  const ids = new Set<number>();
  for (const op of journal.ops) {
    const m = /^(?:\.runtime\/leases\/)?task_([1-9][0-9]*)\.json$/.exec(op.file);
    if (m) ids.add(Number(m[1]));
  }
  return [...ids].sort((a, b) => a - b);
}

/** What finishing a journal did. */
export interface Recovery {
  tx: string;
  /** Files written or removed now. */
  applied: string[];
  /** Files that already held the change. */
  done: string[];
  /** Files changed by somebody else since (by hand): left as they are. */
  conflicts: string[];
  /** True when the change's events had to be appended now. */
  loggedEvents: boolean;
}

/**
 * Finishes the change a journal records. The caller holds every lock the
 * journal's files need (`gateFor(file)` gives the lock under which a file is
 * staged). Each file is judged on its own: holding the new bytes, it is done;
 * holding the bytes read before, it gets the new ones; holding anything else,
 * somebody changed it by hand since, and it is left alone and reported.
 * Then the events are appended unless the log already has them, a
 * `recovered` event says what happened, and the record is removed.
 */
export async function recoverJournal(
  boardDir: string,
  runtimeDir: string,
  name: string,
  gateFor: (file: string) => HeldLock,
  lockOptions: LockOptions,
): Promise<Recovery | undefined> {
  const journal = readJournal(runtimeDir, name);
  if (!journal) return undefined;
  const result: Recovery = { tx: journal.tx, applied: [], done: [], conflicts: [], loggedEvents: false };
  const staged: { op: JournalOp; path: string; from?: string; fd?: number }[] = [];
  for (const op of journal.ops) {
    const path = join(boardDir, op.file);
    const current = readFileIfExists(path);
    if (op.after === null ? current === undefined : current === op.after) {
      result.done.push(op.file);
      continue;
    }
    if (hashText(current) !== op.before) {
      result.conflicts.push(op.file);
      continue;
    }
    const gate = gateFor(op.file);
    gate.assertHeld();
    if (op.after === null) {
      staged.push({ op, path });
      continue;
    }
    const from = gate.stagePath(basename(op.file));
    staged.push({ op, path, from, fd: writeNewFile(from, op.after) });
  }
  await syncAndClose(staged.filter((s) => s.fd !== undefined).map((s) => ({ fd: s.fd!, path: s.from! })));
  const folders = new Set<string>();
  for (const s of staged) {
    gateFor(s.op.file).assertHeld();
    // A folder the power cut (or a person) took since, `.runtime/leases/` say, is made again.
    if (s.from) ensureFolder(dirname(s.path));
    if (s.from) renameFile(s.from, s.path);
    else removeFile(s.path);
    folders.add(dirname(s.path));
    result.applied.push(s.op.file);
  }
  for (const folder of folders) syncFolder(folder);
  // The events the log lacks: all of them, or, after an append the power cut tore, the ones after those that
  // landed whole (docs/protocol.md, "Recovery rolls forward": events included, exactly once).
  const events: NewEvent[] = [];
  const logged = journal.events.length ? loggedEventsOfTx(runtimeDir, journal.tx, journal.at) : 0;
  if (logged < journal.events.length) {
    for (const event of journal.events.slice(logged)) events.push(event);
    result.loggedEvents = true;
  }
  events.push({
    type: 'recovered',
    recoveredTx: journal.tx,
    writer: { pid: journal.pid, host: journal.host, at: journal.at },
    applied: result.applied,
    ...(result.conflicts.length ? { conflicts: result.conflicts } : {}),
  });
  await appendEvents(runtimeDir, events, lockOptions, { tx: journal.tx });
  removeFile(join(journalDir(runtimeDir), name));
  return result;
}

/**
 * The journal's staged file: written under `gate` with the change's other
 * staged files, so that one batch of fsyncs covers them all (transaction.ts).
 */
export function stageJournal(journal: Journal, name: string, gate: HeldLock): { fd: number; path: string } {
  const path = gate.stagePath(`journal-${name}`);
  return { fd: writeNewFile(path, JSON.stringify(journal) + '\n'), path };
}

/** Renames a staged, fsync'd journal into place: the commit point (the caller fsyncs the folder). */
export function commitJournal(runtimeDir: string, name: string, staged: string, checkLocks: () => void): string {
  const dir = journalDir(runtimeDir);
  ensureFolder(dir);
  checkLocks();
  const path = join(dir, name);
  renameFile(staged, path);
  return path;
}

/** A new journal for this process. */
export function newJournal(tx: string, ops: JournalOp[], events: NewEvent[]): Journal {
  return { version: 1, tx, pid: process.pid, host: hostname(), at: new Date().toISOString(), ops, events };
}
