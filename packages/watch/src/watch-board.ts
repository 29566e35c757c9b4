import { statSync, watch as watchFolder, type FSWatcher as FolderWatcher } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { FSWatcher } from 'chokidar';
import {
  BoardGraph,
  CorruptTaskError,
  EVENTS_FILE,
  TaskStore,
  TasksError,
  applyFinding,
  checkBoard,
  checkChangedTask,
  claimWatcherRecord,
  hashText,
  idFromFileName,
  readLastSeq,
  releaseWatcherRecord,
  taskFileName,
  touchWatcherRecord,
  type BoardFinding,
  type NewEvent,
  type TaskEvent,
  type WatcherRecord,
} from '@dotasks/core/internal';

/** An event the watcher caused, as appended to the log; `unlogged` when the log could not be written. */
export type WatchEvent = TaskEvent & { unlogged?: true };

/** Options for watchBoard; every timing has a default that suits a board edited by people and agents. */
export interface WatchBoardOptions {
  /** Each event the watcher causes (`unblocked`, `repaired`, `invalid`, `reaped`, `watch.error`). */
  onEvent?: (event: WatchEvent) => void;
  /** What the watcher is doing, for people (board gone, reconciled N tasks …). */
  onNotice?: (message: string) => void;
  /** The owner recorded on the watcher's events (default `watcher`). */
  actor?: string;
  /** Quiet time after a file's last event before it is read, ms (default 30). */
  debounceMs?: number;
  /** A file that keeps changing is read at least this often, ms (default 500). */
  maxWaitMs?: number;
  /** A file is looked at once more this long after its last event, ms (default 300): file events of a burst can be dropped or merged. */
  settleMs?: number;
  /** Full reconcile period, ms (default 120000; 0 turns it off). */
  reconcileIntervalMs?: number;
  /** Lease reaping period, ms (default 15000; 0 turns it off). */
  reapIntervalMs?: number;
  /** More files than this pending at once (git checkout) → one full reconcile once quiet (default 64). */
  burstFiles?: number;
  /** Quiet time that ends a burst, ms (default 250). */
  burstQuietMs?: number;
  /** Take the one-watcher-per-board record (default true). */
  exclusive?: boolean;
}

/** A running watcher. */
export interface BoardWatcher {
  /** Resolves once the watch is set up and the board reconciled; rejects (and closes) if it cannot start. */
  ready: Promise<void>;
  /** Stops watching; waits for the operation in progress, releases the record. */
  close(): Promise<void>;
  /** The record naming this watcher, once ready. */
  readonly record: WatcherRecord | undefined;
}

interface Pending {
  debounce?: NodeJS.Timeout;
  settle?: NodeJS.Timeout;
  /** When the first event of the current quiet-wait arrived (undefined when none is pending). */
  firstAt?: number;
  /** What the file looked like when last read (ino:size:mtime), to tell whether the settle look is needed. */
  seen?: string;
  /** A parse failure held back until the file has settled (an editor may be half-way through a write). */
  heldCorrupt?: boolean;
}

const TASK_NAME_RE = /^task_[^/\\]*\.json$/i;

function fileSignature(path: string): string {
  const s = statSync(path, { throwIfNoEntry: false });
  return s ? `${s.ino}:${s.size}:${s.mtimeMs}` : 'gone';
}

function describe(error: unknown): { code: string; message: string } {
  if (error instanceof TasksError) return { code: error.code, message: error.message };
  return { code: 'E_INTERNAL', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Watches a board (`.tasks/`) and keeps it consistent when files change
 * outside our commands (docs/protocol.md, "Status, edges and readiness" and
 * "Events"): propagates completions, writes the
 * missing side of one-sided edges, reports what it cannot fix as `invalid`,
 * reaps expired leases. It watches the board's parent folder so a `.tasks/`
 * removed and re-created keeps being watched.
 */
export function watchBoard(dir: string, options: WatchBoardOptions = {}): BoardWatcher {
  const board = resolve(dir);
  const parent = dirname(board);
  const store = new TaskStore(board);
  const actor = options.actor ?? 'watcher';
  const debounceMs = options.debounceMs ?? 30;
  const maxWaitMs = options.maxWaitMs ?? 500;
  const settleMs = options.settleMs ?? 300;
  const burstFiles = options.burstFiles ?? 64;
  const burstQuietMs = options.burstQuietMs ?? 250;
  const notice = (message: string) => options.onNotice?.(message);

  let closed = false;
  let record: WatcherRecord | undefined;
  /** chokidar on the parent folder: `.tasks/` coming and going. */
  let watcher: FSWatcher | undefined;
  /** fs.watch on the board folder itself: which task file changed. */
  let boardWatch: FolderWatcher | undefined;
  let boardIno: number | undefined;
  /** Undefined while the board is gone or not reconciled yet. */
  let graph: BoardGraph | undefined;
  let boardPresent = true;
  const pending = new Map<number, Pending>();
  let burstTimer: NodeJS.Timeout | undefined;
  /** Problems already reported, by file, so a periodic reconcile does not repeat them. */
  let reported = new Map<string, Set<string>>();
  const intervals: NodeJS.Timeout[] = [];
  let queue: Promise<void> = Promise.resolve();
  const queued = new Set<string>();

  const boardExists = () => statSync(board, { throwIfNoEntry: false })?.isDirectory() === true;

  const deliver = (event: WatchEvent) => {
    try {
      options.onEvent?.(event);
    } catch {
      // a listener's failure is not the watcher's
    }
  };

  /** Appends an event of the watcher's own; if the log cannot be written, still tells the listener. */
  const record_ = async (event: NewEvent) => {
    if (!boardExists()) return deliver({ seq: 0, at: new Date().toISOString(), owner: actor, ...event, unlogged: true } as WatchEvent);
    try {
      deliver(await store.recordEvent({ owner: actor, ...event }));
    } catch {
      deliver({ seq: 0, at: new Date().toISOString(), owner: actor, ...event, unlogged: true } as WatchEvent);
    }
  };

  const reportFailure = async (action: string, error: unknown, task?: number) => {
    const { code, message } = describe(error);
    await record_({ type: 'watch.error', ...(task !== undefined ? { task } : {}), action, code, message });
  };

  const problemKey = (f: Extract<BoardFinding, { kind: 'invalid' }>) => `${f.line ?? ''}:${f.column ?? ''}:${f.problem}`;

  const reportInvalid = async (f: Extract<BoardFinding, { kind: 'invalid' }>) => {
    const event: NewEvent = { type: 'invalid', file: f.file, problem: f.problem };
    if (f.task !== undefined) event.task = f.task;
    if (f.line !== undefined) event.line = f.line;
    if (f.column !== undefined) event.column = f.column;
    await record_(event);
  };

  /** Reports the problems of `found` not reported before; `replaceFiles` forget what they had. */
  const reportProblems = async (found: Extract<BoardFinding, { kind: 'invalid' }>[], replaceFiles: Iterable<string>) => {
    const next = new Map<string, Set<string>>();
    for (const file of replaceFiles) next.set(file, new Set());
    const fresh: typeof found = [];
    for (const f of found) {
      const key = problemKey(f);
      const had = reported.get(f.file)?.has(key);
      let set = next.get(f.file);
      if (!set) next.set(f.file, (set = new Set(reported.get(f.file) ?? [])));
      if (!set.has(key) && !had) fresh.push(f);
      set.add(key);
    }
    for (const [file, set] of next) {
      if (set.size) reported.set(file, set);
      else reported.delete(file);
    }
    for (const f of fresh) await reportInvalid(f);
  };

  const applyAll = async (findings: BoardFinding[]) => {
    for (const finding of findings) {
      if (closed) return;
      if (finding.kind === 'invalid') continue;
      try {
        const onWrite = (id: number, before: string) => rememberRepair(id, before, finding);
        for (const event of await applyFinding(store, finding, { actor, graph, onWrite })) deliver(event);
      } catch (error) {
        if (error instanceof CorruptTaskError) {
          const id = idFromFileName(basename(error.file));
          await reportProblems([{ kind: 'invalid', file: basename(error.file), ...(id ? { task: id } : {}), line: error.line, column: error.column, problem: String(error.details.problem) }], []);
        } else if (error instanceof TasksError && error.code === 'E_CYCLE') {
          await reportProblems([{ kind: 'invalid', file: taskFileName(finding.task), task: finding.task, problem: `${error.message}; nothing was written` }], []);
        } else {
          // A lock timeout or a compromised lock fails this one fix; the next change or reconcile retries it.
          await reportFailure(finding.kind, error, finding.task);
        }
      }
    }
  };

  const boardGone = () => {
    if (!boardPresent) return;
    boardPresent = false;
    graph = undefined; // let the memory go; a full reconcile rebuilds it
    adoptAll = true;
    for (const p of pending.values()) {
      clearTimeout(p.debounce);
      clearTimeout(p.settle);
    }
    pending.clear();
    reported = new Map();
    notice(`the board ${board} is gone; waiting for it to come back`);
  };

  // Start, the board coming back, a burst: changes were not seen one by one,
  // so the next full reconcile also records claims made by hand.
  let adoptAll = true;

  /**
   * Our commands change several files under the board lock (a new task and
   * its blockers, the two sides of an edge), one file after the other. A check
   * made while holding that lock never sees such a change half-done, so it
   * never reports a transient state as a problem. The lock is held only while
   * reading; fixes take it again themselves.
   */
  const checkUnderBoardLock = async <T>(check: () => T): Promise<T> => (await store.transact({ board: true }, check)).value;

  const fullReconcile = async () => {
    if (closed) return;
    if (!boardExists()) return boardGone();
    const started = Date.now();
    let check;
    try {
      const previous = graph;
      check = await checkUnderBoardLock(() => checkBoard(store, { previous }));
    } catch (error) {
      if (error instanceof TasksError && (error.code === 'E_NO_BOARD' || (error.code === 'E_IO' && !boardExists()))) return boardGone();
      throw error;
    }
    if (!boardPresent) notice(`the board ${board} is back`);
    boardPresent = true;
    attachBoard();
    graph = check.graph;
    if (record) touchWatcherRecord(store, record);
    const invalid = check.findings.filter((f): f is Extract<BoardFinding, { kind: 'invalid' }> => f.kind === 'invalid');
    // The whole board was looked at: forget problems that are gone, report the new ones.
    const previous = reported;
    const next = new Map<string, Set<string>>();
    const fresh: typeof invalid = [];
    for (const f of invalid) {
      const key = problemKey(f);
      let set = next.get(f.file);
      if (!set) next.set(f.file, (set = new Set()));
      if (!set.has(key) && !previous.get(f.file)?.has(key)) fresh.push(f);
      set.add(key);
    }
    reported = next;
    for (const f of fresh) await reportInvalid(f);
    await applyAll(check.findings);
    if (adoptAll) {
      adoptAll = false;
      adopt(await store.adoptUntrackedClaims());
    }
    const fixes = check.findings.length - invalid.length;
    notice(`reconciled ${check.tasks} task file${check.tasks === 1 ? '' : 's'} in ${Date.now() - started} ms (${fixes} fix${fixes === 1 ? '' : 'es'}, ${invalid.length} problem${invalid.length === 1 ? '' : 's'})`);
  };

  /**
   * The bytes each repair replaced, by file, with the repair. An editor that
   * had the file open saves its old buffer over the repair: those exact bytes
   * coming back are an old buffer, not a person removing the edge, and the
   * repair is made again instead of the removal being mirrored.
   */
  const repairs = new Map<number, { replaced: string; finding: BoardFinding }>();
  const rememberRepair = (id: number, before: string, finding: BoardFinding) => {
    repairs.delete(id);
    repairs.set(id, { replaced: hashText(before)!, finding });
    if (repairs.size > 10_000) repairs.delete(repairs.keys().next().value!);
  };

  /**
   * The repair whose replaced bytes `text` is, if any: an editor's stale
   * save. Repairs are remembered until the map is full, not forgotten when
   * the file moves on: an editor writes in place, so a look in the middle of
   * its save sees a half-written file, and an old buffer can come back after
   * other edits. Making a repair again re-checks it under the locks, so one
   * that no longer applies (the edge was removed from the other side) writes
   * nothing.
   */
  const staleRepair = (id: number, text: string | undefined) => {
    const repair = repairs.get(id);
    return repair && hashText(text) === repair.replaced ? repair : undefined;
  };

  const processFile = async (id: number, final: boolean) => {
    if (closed || !graph) return;
    if (!boardExists()) return boardGone();
    const path = store.taskPath(id);
    const state = pending.get(id);
    if (state) state.seen = fileSignature(path);
    const current = graph;
    // One reading of the file decides: an old buffer saved over a repair, or a change to judge.
    const looked = await checkUnderBoardLock((): { stale?: { finding: BoardFinding }; findings: BoardFinding[] } => {
      let text: string | undefined;
      try {
        text = store.readTaskText(id);
      } catch (error) {
        if (!(error instanceof CorruptTaskError)) throw error;
        return { findings: checkChangedTask(store, current, id) };
      }
      const stale = staleRepair(id, text);
      return stale ? { stale, findings: [] } : { findings: checkChangedTask(store, current, id, { text }) };
    });
    if (looked.stale) {
      const before = repairs.get(id);
      await applyAll([looked.stale.finding]);
      if (repairs.get(id) !== before) notice(`${taskFileName(id)} was saved from an old copy that undid a repair; repaired it again`);
      return;
    }
    const findings = looked.findings;
    const file = taskFileName(id);
    const corrupt = findings.some((f) => f.kind === 'invalid' && f.file === file && f.line !== undefined);
    if (corrupt && !final) {
      // Maybe an editor half-way through a write: look again once the file has settled.
      if (state) state.heldCorrupt = true;
      return;
    }
    if (state) state.heldCorrupt = false;
    const invalid = findings.filter((f): f is Extract<BoardFinding, { kind: 'invalid' }> => f.kind === 'invalid');
    await reportProblems(invalid, [file]);
    await applyAll(findings);
    const task = store.peekTask(id);
    if (task) adopt(await store.adoptUntrackedClaims({ tasks: [task], byId: new Map([[id, task]]), problems: [] }));
  };

  /** Claims made by hand get a record, so single-in-progress counts them (see core adoptUntrackedClaims). */
  const adopt = (ids: number[]) => {
    for (const id of ids) notice(`recorded the claim of #${id} by ${store.peekTask(id)?.owner ?? '?'} (set in progress by hand)`);
  };

  /** Runs jobs one at a time, so the watcher never races itself. */
  const enqueue = (key: string, job: () => Promise<void>, task?: number) => {
    if (queued.has(key)) return;
    queued.add(key);
    queue = queue.then(async () => {
      queued.delete(key);
      if (closed) return;
      try {
        await job();
      } catch (error) {
        await reportFailure(key.replace(/:.*/, ''), error, task);
      }
    });
  };

  const startBurst = () => {
    adoptAll = true;
    for (const p of pending.values()) {
      clearTimeout(p.debounce);
      clearTimeout(p.settle);
    }
    pending.clear();
    clearTimeout(burstTimer);
    burstTimer = setTimeout(() => {
      burstTimer = undefined;
      enqueue('reconcile', fullReconcile);
    }, burstQuietMs);
  };

  const fileChanged = (id: number) => {
    if (closed) return;
    if (burstTimer || !graph) return startBurst(); // in a burst, or the board is coming back: wait for quiet
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
      enqueue(`check:${id}`, () => processFile(id, false), id);
    }, wait);
    clearTimeout(s.settle);
    s.settle = setTimeout(() => {
      s.settle = undefined;
      // File events of a burst can be merged or dropped: look once more if the file moved on since we read it.
      enqueue(
        `settle:${id}`,
        async () => {
          if (pending.get(id) === s && !s.debounce && !s.settle) pending.delete(id);
          if (s.heldCorrupt || s.seen !== fileSignature(store.taskPath(id))) await processFile(id, true);
        },
        id,
      );
    }, settleMs);
  };

  const reap = async () => {
    if (!boardExists()) return;
    const log = join(store.runtimeDir, EVENTS_FILE);
    const before = readLastSeq(log);
    const reaped = await store.reap({ actor });
    if (reaped.length === 0) return;
    for (const event of store.readEvents(before)) if (event.type === 'reaped' && event.owner === actor) deliver(event);
  };

  /** Something happened to `name` inside the board folder. */
  const onBoardEntry = (name: string | null) => {
    if (closed) return;
    if (name === null) return startBurst(); // the platform did not say which file: look at all of them once quiet
    const id = idFromFileName(name);
    if (id !== undefined) return fileChanged(id);
    if (TASK_NAME_RE.test(name) && !TaskStore.isIgnoredName(name)) enqueue('reconcile', fullReconcile); // misnamed: the full check reports it
  };

  const detachBoard = () => {
    boardWatch?.close();
    boardWatch = undefined;
    boardIno = undefined;
  };

  /** Watches the board folder's entries (again, when it was re-created). */
  const attachBoard = () => {
    if (closed) return;
    const ino = statSync(board, { throwIfNoEntry: false })?.ino;
    if (ino !== undefined && ino === boardIno && boardWatch) return;
    detachBoard();
    if (ino === undefined) return;
    try {
      const w = watchFolder(board, { persistent: true }, (_event, name) => onBoardEntry(name === null ? null : String(name)));
      w.on('error', () => {
        // The folder went away under the watch; the parent's watcher or the next reconcile brings it back.
        if (boardWatch === w) detachBoard();
        enqueue('reconcile', fullReconcile);
      });
      boardWatch = w;
      boardIno = ino;
    } catch (error) {
      const err = error as NodeJS.ErrnoException;
      const hint = err.code === 'ENOSPC' ? ' (out of inotify watches: raise fs.inotify.max_user_watches, see docs/watcher.md)' : '';
      notice(`cannot watch ${board}: ${err.message}${hint}; only the periodic reconcile will notice changes`);
      void reportFailure('watch', new TasksError('E_IO', `cannot watch ${board}: ${err.message}${hint}`));
    }
  };

  /** chokidar, on the parent folder: the board folder appeared or vanished. */
  const onParentEntry = (event: string, path: string) => {
    if (path !== board) return;
    if (event === 'unlinkDir') {
      detachBoard();
      enqueue('reconcile', fullReconcile);
    } else if (event === 'addDir') {
      notice(`the board ${board} appeared; reconciling once it is quiet`);
      attachBoard();
      startBurst();
    }
  };

  // Only the board folder itself, as an entry of its parent; what is inside is fs.watch's.
  const ignored = (path: string) => path !== parent && path !== board;

  const ready = (async () => {
    if (options.exclusive !== false) {
      const claimed = await claimWatcherRecord(store);
      if (closed) return releaseWatcherRecord(store, claimed); // closed while starting
      record = claimed;
    }
    const { watch } = await import('chokidar');
    if (closed) return;
    const w = watch(parent, { ignored, ignoreInitial: true, depth: 0, persistent: true });
    watcher = w;
    w.on('all', (event, path) => onParentEntry(event, path));
    w.on('error', (error) => {
      const err = error as NodeJS.ErrnoException;
      const hint =
        err.code === 'ENOSPC'
          ? ' (out of inotify watches: raise fs.inotify.max_user_watches, see docs/watcher.md)'
          : err.code === 'EMFILE'
            ? ' (too many open files: raise ulimit -n)'
            : '';
      notice(`watch error: ${err.message}${hint}`);
      void reportFailure('watch', new TasksError('E_IO', `${err.message}${hint}`));
    });
    await new Promise<void>((resolveReady) => w.once('ready', () => resolveReady()));
    if (closed) return;
    attachBoard();
    await new Promise<void>((resolveDone, rejectDone) => {
      enqueue('reconcile', async () => {
        try {
          await fullReconcile();
          resolveDone();
        } catch (error) {
          rejectDone(error);
        }
      });
    });
    const every = (ms: number | undefined, fallback: number, fn: () => void) => {
      const period = ms ?? fallback;
      if (period > 0) intervals.push(setInterval(fn, period));
    };
    every(options.reconcileIntervalMs, 120_000, () => enqueue('reconcile', fullReconcile));
    every(options.reapIntervalMs, 15_000, () => enqueue('reap', reap));
    every(options.exclusive === false ? 0 : 30_000, 30_000, () => {
      if (record && boardExists()) touchWatcherRecord(store, record);
    });
    enqueue('reap', reap);
  })();

  const close = async () => {
    if (closed) return;
    closed = true;
    for (const t of intervals) clearInterval(t);
    clearTimeout(burstTimer);
    for (const p of pending.values()) {
      clearTimeout(p.debounce);
      clearTimeout(p.settle);
    }
    pending.clear();
    detachBoard();
    await watcher?.close();
    await queue.catch(() => undefined); // the operation in progress finishes and releases its locks
    if (record) {
      try {
        releaseWatcherRecord(store, record);
      } catch {
        // the board may be gone; nothing to release then
      }
    }
  };

  ready.catch(() => close());
  return {
    ready,
    close,
    get record() {
      return record;
    },
  };
}
