/** A task file with a look pending. */
export interface PendingFile {
  debounce?: NodeJS.Timeout;
  settle?: NodeJS.Timeout;
  /** When the first event of the current quiet-wait arrived (undefined when none is pending). */
  firstAt?: number;
  /** What the file looked like when last read (ino:size:mtime), to tell whether the settle look is needed. */
  seen?: string;
  /** A parse failure held back until the file has settled (an editor may be half-way through a write). */
  heldCorrupt?: boolean;
}

export interface ChangeDebouncerOptions {
  /** Quiet time after a file's last event before it is read, ms. */
  debounceMs: number;
  /** A file that keeps changing is read at least this often, ms. */
  maxWaitMs: number;
  /** A file is looked at once more this long after its last event, ms. */
  settleMs: number;
  /** More files than this pending at once → a burst. */
  burstFiles: number;
  /** Quiet time that ends a burst, ms. */
  burstQuietMs: number;
  /** Whether a file can be judged by itself now; while not (the board is not reconciled), every change is part of a burst. */
  canJudgeFiles: () => boolean;
  /** The file was quiet for `debounceMs` (or changed for `maxWaitMs`): read it. */
  onQuiet: (id: number) => void;
  /** `settleMs` passed since the file's last event: look once more if it moved on. */
  onSettled: (id: number, file: PendingFile) => void;
  /** A burst began: changes are no longer seen one by one. */
  onBurst: () => void;
  /** A burst ended: look at the whole board. */
  onBurstQuiet: () => void;
}

/**
 * The debounced change queue: turns a stream of "task N changed" into one
 * read of each file once it is quiet, one more look once it has settled, and
 * a stream of too many files at once (a git checkout) into one full look when
 * the burst is over.
 */
export interface ChangeDebouncer {
  fileChanged(id: number): void;
  /** Drops the files' timers and waits for `burstQuietMs` of quiet before `onBurstQuiet`. */
  startBurst(): void;
  /** The file's pending state, if a look at it is pending. */
  pending(id: number): PendingFile | undefined;
  /** Forgets `file` if it is still the file's state and nothing is pending for it any more. */
  forgetIfDone(id: number, file: PendingFile): void;
  /** Drops every file's timers (not a burst's). */
  clearFiles(): void;
  /** Drops every timer. */
  stop(): void;
}

export function createChangeDebouncer(options: ChangeDebouncerOptions): ChangeDebouncer {
  const { debounceMs, maxWaitMs, settleMs, burstFiles, burstQuietMs } = options;
  const pending = new Map<number, PendingFile>();
  let burstTimer: NodeJS.Timeout | undefined;

  const clearFiles = () => {
    for (const p of pending.values()) {
      clearTimeout(p.debounce);
      clearTimeout(p.settle);
    }
    pending.clear();
  };

  const startBurst = () => {
    options.onBurst();
    clearFiles();
    clearTimeout(burstTimer);
    burstTimer = setTimeout(() => {
      burstTimer = undefined;
      options.onBurstQuiet();
    }, burstQuietMs);
  };

  const fileChanged = (id: number) => {
    if (burstTimer || !options.canJudgeFiles()) return startBurst(); // in a burst, or the board is coming back: wait for quiet
    const now = Date.now();
    let state = pending.get(id);
    if (!state) {
      if (pending.size >= burstFiles) return startBurst();
      pending.set(id, (state = {}));
    }
    const s = state;
    s.firstAt ??= now;
    clearTimeout(s.debounce);
    const wait = Math.max(0, Math.min(debounceMs, s.firstAt + maxWaitMs - now));
    s.debounce = setTimeout(() => {
      s.debounce = undefined;
      s.firstAt = undefined;
      options.onQuiet(id);
    }, wait);
    clearTimeout(s.settle);
    s.settle = setTimeout(() => {
      s.settle = undefined;
      options.onSettled(id, s);
    }, settleMs);
  };

  return {
    fileChanged,
    startBurst,
    pending: (id) => pending.get(id),
    forgetIfDone(id, file) {
      if (pending.get(id) === file && !file.debounce && !file.settle) pending.delete(id);
    },
    clearFiles,
    stop() {
      clearTimeout(burstTimer);
      clearFiles();
    },
  };
}
