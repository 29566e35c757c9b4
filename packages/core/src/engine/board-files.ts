// The board's files as the write engine reads them: where each file and
// lock folder is, the task files, the high-water mark, the board's config,
// and the one way to change them (a transaction). The engine's functions
// take this handle; TaskStore (store.ts), the facade, is one.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readConfig, type BoardConfig } from '../board-config.js';
import { CorruptTaskError, TasksError, isErrnoException } from '../errors.js';
import type { TaskEvent } from '../events/events.js';
import { idFromFileName, parseTask, taskFileName, type Task } from '../format/format.js';
import { readTaskFile } from '../format/task-file.js';
import { readFileIfExists } from '../fs/fsio.js';
import { DEFAULT_LOCK_OPTIONS, type LockOptions } from '../fs/locks.js';
import { BOARD_LOCK, RUNTIME_DIR } from './store-types.js';
import { runTransaction, type TxOptions } from './run-transaction.js';
import { HIGHWATERMARK_FILE, parseHighWaterMark, type Transaction } from './transaction.js';
import { ownerLockName, type TxHost, type TxScope } from './tx-locks.js';

/** One board folder (`.tasks/`): its paths, its reads and its transactions. */
export class BoardFiles implements TxHost {
  readonly dir: string;
  readonly runtimeDir: string;
  readonly lockOptions: LockOptions;
  private configCache?: BoardConfig;

  constructor(dir: string, options: { lock?: Partial<LockOptions>; env?: NodeJS.ProcessEnv } = {}) {
    this.dir = dir;
    this.runtimeDir = join(dir, RUNTIME_DIR);
    const env = options.env ?? process.env;
    const config = this.config;
    this.lockOptions = {
      staleMs: Number(env.TASKS_LOCK_STALE_MS) || config.staleLockSeconds * 1000 || DEFAULT_LOCK_OPTIONS.staleMs,
      timeoutMs: Number(env.TASKS_LOCK_TIMEOUT_MS) || config.lockTimeoutSeconds * 1000 || DEFAULT_LOCK_OPTIONS.timeoutMs,
      ...options.lock,
    };
  }

  /** `.tasks/config.json`, read once per handle. */
  get config(): BoardConfig {
    this.configCache ??= readConfig(this.dir);
    return this.configCache;
  }

  taskPath(id: number): string {
    return join(this.dir, taskFileName(id));
  }

  /** The lock folder of task `id`. */
  taskLockPath(id: number): string {
    return join(this.dir, `${taskFileName(id)}.lock`);
  }

  /** The lock folder of the board (ids, edges, changes to several tasks). */
  boardLockPath(): string {
    return join(this.dir, BOARD_LOCK);
  }

  /** The lock folder that makes single-in-progress safe for `owner` across processes. */
  ownerLockPath(owner: string): string {
    return join(this.runtimeDir, ownerLockName(owner));
  }

  notFound(id: number): TasksError {
    const ids = this.listIds();
    const near = ids.length
      ? ` (the board has ${ids.length === 1 ? `#${ids[0]}` : `#${ids[0]}…#${ids[ids.length - 1]}`}; see 'tasks list')`
      : " (the board is empty; create one with 'tasks create')";
    return new TasksError('E_NOT_FOUND', `task #${id} not found${near}`, { id });
  }

  // ---- reads -------------------------------------------------------------

  /** Task ids present as `task_N.json`, ascending. */
  listIds(): number[] {
    const ids: number[] = [];
    for (const name of this.readDirNames()) {
      const id = idFromFileName(name);
      if (id !== undefined) ids.push(id);
    }
    return ids.sort((a, b) => a - b);
  }

  private readDirNames(): string[] {
    try {
      return readdirSync(this.dir);
    } catch (error) {
      if (isErrnoException(error, 'ENOENT'))
        throw new TasksError('E_NO_BOARD', `the board ${this.dir} is gone; run 'tasks init' to create one`, {}, { cause: error });
      throw error;
    }
  }

  /**
   * Raw text of a task file, or undefined when it does not exist. Refuses
   * what cannot be a task without reading it: a folder or other non-regular
   * file of that name, a file over the size limit.
   */
  readTaskText(id: number): string | undefined {
    return readTaskFile(this.taskPath(id))?.text;
  }

  /** Parses text read from task_N.json (messages name the full path). */
  parseTaskText(id: number, text: string): Task {
    return parseTask(text, this.taskPath(id));
  }

  /** One task; throws E_NOT_FOUND or E_CORRUPT (with file, line, column). */
  getTask(id: number): Task {
    const text = this.readTaskText(id);
    if (text === undefined) throw this.notFound(id);
    return this.parseTaskText(id, text);
  }

  /** One task, or undefined when missing or unreadable (for looking at neighbours). */
  peekTask(id: number): Task | undefined {
    try {
      const text = this.readTaskText(id);
      return text === undefined ? undefined : this.parseTaskText(id, text);
    } catch (error) {
      if (error instanceof CorruptTaskError) return undefined;
      throw error;
    }
  }

  /**
   * The highest id ever handed out, from `.highwatermark` (0 when absent).
   * Throws E_CORRUPT when it holds anything but one plain integer.
   */
  readHighWaterMark(): number {
    const file = join(this.dir, HIGHWATERMARK_FILE);
    return parseHighWaterMark(readFileIfExists(file), file);
  }

  // ---- the transaction -----------------------------------------------------

  /**
   * Runs `fn` as one transaction holding `scope`'s locks (more are taken when
   * it asks, by starting over); see transaction.ts. The owner locks are taken
   * only where the board keeps single-in-progress. For the engine and the
   * core modules that write the board (doctor, reconcile, import): nothing
   * writes around it.
   */
  async transact<T>(
    scope: Partial<TxScope>,
    fn: (tx: Transaction) => T | Promise<T>,
    options: TxOptions = {},
  ): Promise<{ value: T; written: Task[]; events: TaskEvent[] }> {
    const owners = this.config.singleInProgress ? scope.owners : [];
    return runTransaction(this, { ...scope, owners }, fn, options);
  }
}
