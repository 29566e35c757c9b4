/**
 * The copies a sync's merge compares (board-merge.ts): one side's bytes of a
 * task file, the task they hold or why they cannot be read (judged when first
 * asked), and the few rules about one task that do not depend on the board:
 * what changed, in a few words, and that a merge never reopens a closed task.
 */
import { TasksError } from '../errors.js';
import { MAX_TASK_FILE_BYTES, isClosed, parseTask, serializeTask, type Task } from '../format/format.js';
import { blobId, type TreeEntry } from './git-objects.js';

/**
 * One side's copy of a task file: its bytes, and the task they hold or why
 * they cannot be read, judged when first asked: a sync of a board where
 * little changed parses only what changed.
 */
export class Copy {
  private judged?: { task: Task } | { bad: string };

  constructor(
    readonly text: string,
    readonly sha: string,
    private readonly parse: () => Task,
  ) {}

  /** A copy that could not even be read as text (a folder under a task's name, a file over the limit). */
  static unreadable(problem: string): Copy {
    const copy = new Copy('', '', () => {
      throw new Error(problem);
    });
    copy.judged = { bad: problem };
    return copy;
  }

  /** A copy of a task this sync made (moved, or its edges moved). */
  static of(task: Task): Copy {
    const text = serializeTask(task);
    return new Copy(text, blobId(text), () => task);
  }

  private judge(): { task: Task } | { bad: string } {
    if (!this.judged) {
      try {
        this.judged = { task: this.parse() };
      } catch (error) {
        if (!(error instanceof TasksError) || error.code !== 'E_CORRUPT') throw error;
        this.judged = { bad: problemOf(error) };
      }
    }
    return this.judged;
  }

  get bad(): string | undefined {
    const judged = this.judge();
    return 'bad' in judged ? judged.bad : undefined;
  }

  get task(): Task {
    const judged = this.judge();
    if ('bad' in judged) throw new Error(`internal: the task of an unreadable copy (${judged.bad})`);
    return judged.task;
  }
}
export const good = (c: Copy | undefined): c is Copy => c !== undefined && c.bad === undefined;

/** What changed from `before` to `after`, in a few words. */
export function describeChange(before: Task | undefined, after: Task | undefined): string {
  if (!after) return 'removed';
  if (!before) return after.status === 'in_progress' && after.owner ? `created, in progress by ${after.owner}` : 'created';
  if (before.status !== after.status) {
    if (after.status === 'in_progress') return after.owner ? `claimed by ${after.owner}` : 'started';
    if (after.status === 'pending' && before.status === 'in_progress') return 'released';
    return after.status;
  }
  if (before.owner !== after.owner) return after.owner ? `assigned to ${after.owner}` : 'unassigned';
  return 'updated';
}

/** The problem of a text that does not parse as task `name`, without the file's path (it is not a file here). */
export function problemOf(error: unknown): string {
  const e = error as { details?: { line?: number; column?: number; problem?: string }; message?: string };
  if (e.details?.problem) return `line ${e.details.line}, column ${e.details.column}: ${e.details.problem}`;
  return e.message ?? String(error);
}

/** A remote tree entry as a copy of a task file (judged when asked). */
export function remoteCopy(entry: TreeEntry | undefined, name: string, blobs: Map<string, string>): Copy | undefined {
  if (!entry) return undefined;
  if (entry.type === 'tree') return Copy.unreadable('is a folder, not a file');
  if (entry.type !== 'blob' || entry.mode === '120000') return Copy.unreadable(`is not a plain file (git mode ${entry.mode})`);
  const text = blobs.get(entry.sha);
  if (text === undefined) return Copy.unreadable('could not be read from git');
  if (Buffer.byteLength(text) > MAX_TASK_FILE_BYTES) return Copy.unreadable(`is over the ${MAX_TASK_FILE_BYTES / 1024 / 1024} MiB limit for a task`);
  return new Copy(text, entry.sha, () => parseTask(text, name));
}

/**
 * A merged task must not be open when either side closed it: completed and
 * deleted are final (docs/protocol.md, "Life cycle"), whatever a rewritten or
 * hand-edited remote says.
 */
export function keepClosed(merged: Task, ours: Task, theirs: Task): boolean {
  if (isClosed(merged.status)) return false;
  const closed = [ours, theirs].filter((t) => isClosed(t.status));
  if (closed.length === 0) return false;
  const final = closed.find((t) => t.status === 'deleted') ?? closed[0];
  merged.status = final.status;
  merged.owner = final.owner;
  delete merged.activeForm;
  return true;
}
