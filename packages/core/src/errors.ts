/** Stable error codes; adapters map them to exit statuses and JSON. */
export type ErrorCode =
  | 'E_NO_BOARD'
  | 'E_EXISTS'
  | 'E_NOT_FOUND'
  | 'E_CORRUPT'
  | 'E_INVALID'
  | 'E_CYCLE'
  | 'E_BLOCKED'
  | 'E_TRANSITION'
  | 'E_LOCKED'
  | 'E_COMPROMISED'
  | 'E_CLAIMED'
  | 'E_OWNER_BUSY'
  | 'E_NOT_PENDING'
  | 'E_NOT_OWNER'
  | 'E_NOTHING_READY'
  | 'E_CONFIRM'
  | 'E_USAGE'
  | 'E_TIMEOUT'
  | 'E_IO'
  | 'E_GIT'
  | 'E_DIRTY'
  /** A sync refused the remote's board branch as it is (gone, rewritten, not a board branch, retired); nothing was changed. */
  | 'E_REMOTE'
  /** A board that syncs, with its tasks also committed on the code branch. */
  | 'E_TRACKED'
  /** The id names another task now: a sync moved the task its caller holds to a new id. */
  | 'E_MOVED'
  /** A task's check before done (its verify command) failed, timed out or was interrupted; the task was not completed. */
  | 'E_VERIFY'
  /** `tasks merge`: the task's branch does not merge into its target without conflicts; nothing was changed. */
  | 'E_CONFLICT'
  /** The acting owner tried to approve or reject its own task: review is someone else's. */
  | 'E_OWN_REVIEW';

/** Why a claim was refused (docs/protocol.md, "Claims"). */
export type ClaimRefusal = 'already_claimed' | 'blocked' | 'not_pending' | 'owner_busy' | 'not_found' | 'nothing_ready';

/** Base class of every error the core throws on purpose. */
export class TasksError extends Error {
  readonly code: ErrorCode;
  /** Extra machine-readable facts (file, line, cycle, reason …). */
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TasksError';
    this.code = code;
    this.details = details;
  }
}

/** A task file that does not parse or validate. */
export class CorruptTaskError extends TasksError {
  readonly file: string;
  readonly line: number;
  readonly column: number;

  constructor(file: string, line: number, column: number, problem: string, options?: { cause?: unknown }) {
    super(
      'E_CORRUPT',
      `${file}:${line}:${column}: ${problem} (fix the file by hand or run 'tasks doctor'; it was left as it is)`,
      { file, line, column, problem },
      options,
    );
    this.name = 'CorruptTaskError';
    this.file = file;
    this.line = line;
    this.column = column;
  }
}

/** Adding an edge would close a cycle; `cycle` lists the ids, first == last. */
export class CycleError extends TasksError {
  readonly cycle: number[];

  constructor(cycle: number[]) {
    // Only a self-edge (#1 -> #1) is a task waiting for itself; a longer cycle is spelled out, which says it.
    super('E_CYCLE', `refused: that edge would close a cycle ${formatCycle(cycle)}${cycle.length <= 2 ? ' (a task cannot wait for itself)' : ''}`, {
      cycle,
    });
    this.name = 'CycleError';
    this.cycle = cycle;
  }
}

/** A claim lost or refused; `reason` is one of the reasons in docs/protocol.md, "Claims". */
export class ClaimError extends TasksError {
  readonly reason: ClaimRefusal;

  constructor(reason: ClaimRefusal, message: string, details: Record<string, unknown> = {}) {
    const code: ErrorCode =
      reason === 'already_claimed'
        ? 'E_CLAIMED'
        : reason === 'blocked'
          ? 'E_BLOCKED'
          : reason === 'not_pending'
            ? 'E_NOT_PENDING'
            : reason === 'owner_busy'
              ? 'E_OWNER_BUSY'
              : reason === 'nothing_ready'
                ? 'E_NOTHING_READY'
                : 'E_NOT_FOUND';
    super(code, message, { ...details, reason });
    this.name = 'ClaimError';
    this.reason = reason;
  }
}

/** `#1 -> #3 -> #2 -> #1` */
export function formatCycle(cycle: number[]): string {
  return cycle.map((id) => `#${id}`).join(' -> ');
}

/** True for a Node.js system error with the given code (ENOENT, EEXIST …). */
export function isErrnoException(error: unknown, code?: string): error is NodeJS.ErrnoException {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    (code === undefined || (error as NodeJS.ErrnoException).code === code)
  );
}
