/**
 * Where a board lives (docs/decisions.md, "Where a synced board lives"): on
 * the code branch (committed with the code, merged by the merge driver), or,
 * once it syncs, on its board branch alone. One truth per board, recorded as
 * `"sync": true` in `.tasks/config.json` and kept by `.tasks/.gitignore`
 * keeping its task files off the code branch; `tasks sync --adopt` and
 * `tasks sync --retire` move a board from one home to the other in a commit
 * the user can review. Also: a fresh clone joining a board that only its
 * remote holds, and the forwarding record of tasks a sync renumbered.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join, relative } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { atomicWriteFile, readFileIfExists } from '../fs/fsio.js';
import { stripBom } from '../format/format.js';
import { readConfig } from '../board-config.js';
import type { TaskStore } from '../store.js';
import { git, out, type TreeEntry } from './git-objects.js';

/** The lines of `.tasks/.gitignore` that keep a synced board's tasks off the code branch. */
export const SYNCED_GITIGNORE_LINES = [
  '# This board syncs through its board branch (tasks sync): its tasks live there, not here.',
  'task_*.json',
  '.highwatermark',
];

/** The task files and `.highwatermark` of the board that git tracks on the checked-out branch (board-relative names). */
export function trackedBoardFiles(boardDir: string): string[] {
  const r = spawnSync('git', ['ls-files', '-z', '--', 'task_*.json', '.highwatermark'], { cwd: boardDir, encoding: 'utf8' });
  if (r.status !== 0) return []; // not in a work tree: nothing of it is committed
  return r.stdout.split('\0').filter(Boolean);
}

/**
 * Before a sync: refuses a board whose tasks git also tracks on the code
 * branch (a checkout of an older commit would roll the board back, and the
 * next sync would publish the rollback), and marks a board that syncs for
 * the first time. Returns what it did, for the report.
 */
export function checkBoardHome(
  store: TaskStore,
  where: { remote: string; branch: string },
  options: { adopting?: boolean; /** Boards this process already checked (sync-memory.ts). */ checked: Set<string> },
): string[] {
  const { checked } = options;
  if (checked.has(store.dir)) return [];
  if (!options.adopting) {
    const tracked = trackedBoardFiles(store.dir);
    if (tracked.length)
      throw new TasksError(
        'E_TRACKED',
        `the board's tasks are committed on the code branch (${tracked.length} file(s) in ${store.dir}); a board that syncs keeps them on ${where.remote}/${where.branch} only, or checking out an older commit would roll the board back. Move them there in one commit you can review: tasks sync --adopt (or keep the board on the code branch and do not sync)`,
        { tracked },
      );
  }
  const notes = markSynced(store.dir)
    ? [
        `this board now syncs through ${where.remote}/${where.branch}: .tasks/config.json says so and .tasks/.gitignore keeps its tasks off the code branch; commit both, so every clone knows`,
      ]
    : [];
  checked.add(store.dir);
  return notes;
}

/** Records in the board's config and .gitignore that it syncs; false when both already said so. */
export function markSynced(boardDir: string): boolean {
  const configChanged = setConfigKey(boardDir, 'sync', true);
  const ignoreChanged = setGitignoreLines(boardDir, SYNCED_GITIGNORE_LINES, true);
  return configChanged || ignoreChanged;
}

/** Sets (or with `undefined` removes) one key of `.tasks/config.json`, keeping the others as they are. */
export function setConfigKey(boardDir: string, key: string, value: unknown): boolean {
  const file = join(boardDir, 'config.json');
  const text = readFileIfExists(file);
  readConfig(boardDir); // refuses a config.json that does not parse, naming the line
  const config = text === undefined ? {} : (JSON.parse(stripBom(text)) as Record<string, unknown>);
  if (config[key] === value) return false;
  if (value === undefined) {
    if (!(key in config)) return false;
    delete config[key];
  } else config[key] = value;
  atomicWriteFile(file, JSON.stringify(config, null, 2) + '\n');
  return true;
}

/** Adds (or removes) lines of the board's `.gitignore`; true when it changed. */
export function setGitignoreLines(boardDir: string, lines: string[], present: boolean): boolean {
  const file = join(boardDir, '.gitignore');
  const text = readFileIfExists(file) ?? '';
  const have = text.split('\n');
  let next: string[];
  if (present) {
    const missing = lines.filter((l) => !have.includes(l));
    if (missing.length === 0) return false;
    next = [...have.filter((l, i) => l !== '' || i < have.length - 1), ...missing, ''];
  } else {
    next = have.filter((l) => !lines.includes(l));
    if (next.length === have.length) return false;
  }
  atomicWriteFile(file, next.join('\n').replace(/\n*$/, '\n'));
  return true;
}

// ---- the two homes ---------------------------------------------------------

/** Runs git for the board's repository, failing with its last line. */
function gitIn(cwd: string, args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): string {
  return out(git(cwd, args, options));
}

/** The repository's top and the board's path in it. */
function boardInRepository(boardDir: string): { top: string; board: string } {
  const r = git(boardDir, ['rev-parse', '--show-toplevel'], { allowFail: true });
  if (r.status !== 0) throw new TasksError('E_INVALID', `the board ${boardDir} is not in a git repository`);
  const top = out(r);
  return { top, board: relative(top, boardDir) || '.' };
}

/** The committed task files of the board at HEAD, as tree entries by board-relative name (the base an adoption merges against). */
export function committedBoardTree(boardDir: string): Map<string, TreeEntry> {
  const { top, board } = boardInRepository(boardDir);
  const entries = new Map<string, TreeEntry>();
  const r = git(top, ['ls-tree', '-z', 'HEAD', '--', `${board}/`], { allowFail: true });
  if (r.status !== 0) return entries;
  for (const item of r.stdout.toString('utf8').split('\0')) {
    if (!item) continue;
    const tab = item.indexOf('\t');
    const [mode, type, sha] = item.slice(0, tab).split(' ');
    const name = item.slice(tab + 1).slice(board.length + 1);
    entries.set(name, { mode, type, sha });
  }
  return entries;
}

/** The checked-out commit; E_GIT in a repository with none yet (asked before a move writes anything). */
export function headCommit(boardDir: string): string {
  const { top } = boardInRepository(boardDir);
  const head = git(top, ['rev-parse', '--verify', '--quiet', 'HEAD'], { allowFail: true });
  if (head.status !== 0) throw new TasksError('E_GIT', 'the repository has no commit yet; commit once, then run this again');
  return out(head);
}

/**
 * Commits, on the checked-out branch, a change of the board's files only:
 * `remove` untracked (kept on disk), `add` taken from the work tree. Built in
 * a temporary index, so whatever else is staged stays staged and out of the
 * commit; the real index then gets the same change. Returns the commit.
 */
export function commitBoardFiles(boardDir: string, change: { remove: string[]; add: string[]; message: string }): string {
  const { top, board } = boardInRepository(boardDir);
  const parent = headCommit(boardDir);
  const paths = (names: string[]) => names.map((n) => (board === '.' ? n : `${board}/${n}`));
  const temp = mkdtempSync(join(tmpdir(), 'dotasks-index-'));
  try {
    const env = { ...process.env, GIT_INDEX_FILE: join(temp, 'index') };
    gitIn(top, ['read-tree', parent], { env });
    const apply = (e: NodeJS.ProcessEnv) => {
      if (change.remove.length)
        gitIn(top, ['rm', '--cached', '-q', '--ignore-unmatch', '--pathspec-from-file=-', '--pathspec-file-nul'], {
          env: e,
          input: paths(change.remove).join('\0'),
        });
      if (change.add.length) gitIn(top, ['add', '-f', '--pathspec-from-file=-', '--pathspec-file-nul'], { env: e, input: paths(change.add).join('\0') });
    };
    apply(env);
    const tree = gitIn(top, ['write-tree'], { env });
    const ident =
      git(top, ['var', 'GIT_COMMITTER_IDENT'], { allowFail: true }).status === 0
        ? process.env
        : {
            ...process.env,
            GIT_AUTHOR_NAME: userInfo().username,
            GIT_AUTHOR_EMAIL: 'dotasks@localhost',
            GIT_COMMITTER_NAME: userInfo().username,
            GIT_COMMITTER_EMAIL: 'dotasks@localhost',
          };
    const commit = gitIn(top, ['commit-tree', tree, '-p', parent], { input: change.message, env: ident });
    gitIn(top, ['update-ref', '-m', `tasks: ${change.message.split('\n')[0]}`, 'HEAD', commit, parent]);
    apply(process.env);
    return commit;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/** Whether the remote has the board branch (one `git ls-remote`; false when the remote cannot be reached). */
export function remoteHasBranch(cwd: string, remote: string, branch: string): boolean {
  const r = spawnSync('git', ['ls-remote', '--heads', '--exit-code', remote, `refs/heads/${branch}`], {
    cwd,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
  });
  return r.status === 0 && r.stdout.trim() !== '';
}
