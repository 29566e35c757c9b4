/**
 * The files git tracks in the repository that holds a board: what a task's
 * `paths` are expanded against (docs/protocol.md, "File scopes"). Listed with
 * `git ls-files` (so .gitignore is honoured and build output never counts)
 * and cached in `.runtime/scopes-cache.json` for a few seconds, keyed by the
 * checkout's HEAD and the identity of its index: a commit, a checkout or a
 * `git add` changes one of them, and then the list is taken again.
 */
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { locateGit } from './locate-git.js';
import { atomicWriteFile } from '../fs/fsio.js';

/** The cache file, in the board's runtime folder. */
export const SCOPES_CACHE_FILE = 'scopes-cache.json';
/** How long a cached list is used while HEAD and the index stay the same (ms). */
export const TRACKED_FILES_TTL_MS = 5000;

/** The tracked files of a checkout, relative to its top, with `/` separators. */
export interface TrackedFiles {
  /** The top of the checkout the board lives in. */
  root: string;
  files: readonly string[];
}

interface CacheRecord {
  key: string;
  at: number;
  root: string;
  files: string[];
}

const execFileAsync = promisify(execFile);
// One process (a worker) asks again and again: the last list, in memory, saves reading the file.
const memory = new Map<string, CacheRecord>();

/**
 * The files git tracks in the checkout holding the board at `boardDir`, or
 * undefined when the board is not in a git checkout (or git fails): then
 * scopes overlap only by their globs.
 */
export async function trackedFiles(boardDir: string, options: { now?: number; ttlMs?: number } = {}): Promise<TrackedFiles | undefined> {
  const git = locateGit(dirname(boardDir));
  if (!git) return undefined;
  const root = git.worktreeRoot;
  const now = options.now ?? Date.now();
  const ttl = options.ttlMs ?? TRACKED_FILES_TTL_MS;
  const cacheFile = join(boardDir, '.runtime', SCOPES_CACHE_FILE);
  const key = git.gitDir ? gitStateKey(git.gitDir) : undefined;
  const fresh = (record: CacheRecord | undefined): record is CacheRecord =>
    key !== undefined && record !== undefined && record.key === key && record.root === root && now - record.at >= 0 && now - record.at < ttl;
  const inMemory = memory.get(cacheFile);
  if (fresh(inMemory)) return { root, files: inMemory.files };
  const onDisk = readCache(cacheFile);
  if (fresh(onDisk)) {
    memory.set(cacheFile, onDisk);
    return { root, files: onDisk.files };
  }
  let files: string[];
  try {
    const { stdout } = await execFileAsync('git', ['ls-files', '-z', '--full-name'], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 30 });
    files = stdout.split('\0').filter((f) => f !== '');
  } catch {
    return undefined; // not a repository git can read (a broken or foreign layout): globs alone decide
  }
  if (key !== undefined) {
    const record: CacheRecord = { key, at: now, root, files };
    memory.set(cacheFile, record);
    try {
      atomicWriteFile(cacheFile, JSON.stringify(record));
    } catch {
      // A read-only or missing runtime folder only means no cache.
    }
  }
  return { root, files };
}

/** Forgets the in-memory copies (tests; the file is checked against HEAD and the index anyway). */
export function forgetTrackedFiles(): void {
  memory.clear();
}

function readCache(file: string): CacheRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as CacheRecord;
    if (typeof record.key === 'string' && typeof record.at === 'number' && typeof record.root === 'string' && Array.isArray(record.files)) return record;
  } catch {
    // missing or torn: list again
  }
  return undefined;
}

/**
 * What the tracked list depends on, read from the git dir without running
 * git: HEAD, the commit its branch points at, and the index's identity.
 * Undefined when any of it cannot be read (then nothing is cached).
 */
export function gitStateKey(gitDir: string): string | undefined {
  try {
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    const commonDir = readCommonDir(gitDir);
    const ref = /^ref:\s*(.+)$/.exec(head)?.[1];
    const commit = ref === undefined ? head : resolveRef(commonDir, gitDir, ref);
    const index = statSync(join(gitDir, 'index'), { throwIfNoEntry: false });
    const indexId = index ? `${index.ino}:${index.size}:${index.mtimeMs}:${index.ctimeMs}` : 'no-index';
    return `${head}|${commit}|${indexId}`;
  } catch {
    return undefined;
  }
}

function readCommonDir(gitDir: string): string {
  try {
    const common = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
    return isAbsolute(common) ? common : resolve(gitDir, common);
  } catch {
    return gitDir;
  }
}

/** The commit a ref names: a loose ref file, else its line in packed-refs, else '' (an unborn branch). */
function resolveRef(commonDir: string, gitDir: string, ref: string): string {
  for (const dir of [gitDir, commonDir]) {
    try {
      return readFileSync(join(dir, ref), 'utf8').trim();
    } catch {
      // not a loose ref here
    }
  }
  try {
    const packed = readFileSync(join(commonDir, 'packed-refs'), 'utf8');
    for (const line of packed.split('\n')) if (line.endsWith(` ${ref}`)) return line.slice(0, line.indexOf(' '));
  } catch {
    // no packed refs
  }
  return '';
}
