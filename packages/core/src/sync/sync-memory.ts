/**
 * What one process remembers across its syncs (a worker, `watch --sync` and
 * `claim --sync` sync again and again): the remotes and branch names it
 * checked, each board's repository, when it last synced each board, and the
 * boards it already warned about or checked the home of. One object holds it
 * all, passed to a sync (`SyncOptions.memory`, the process's by default), so
 * a test or an embedding can start from nothing.
 */
import { isAbsolute, join } from 'node:path';
import { TasksError } from '../errors.js';
import { git, out } from './git-objects.js';
import { knowObjectsDir } from './object-store.js';
import type { RefClaims } from './claim-refs.js';

/** What a sync's last look at the remote found (remote-look.ts), for the claim that follows it. */
export interface RemoteSeen {
  /** The claim refs, as fetched (undefined: claim refs are off). */
  refClaims?: RefClaims;
  /** The board branch's high-water mark (undefined: no branch, or no mark on it). */
  branchMark?: number;
}

/** The top of a checkout and its common git folder. */
export interface Repository {
  top: string;
  gitDir: string;
}

export class SyncMemory {
  /** Remotes, and branch names on them, already checked per board. */
  private readonly checked = new Set<string>();
  private readonly repositories = new Map<string, Repository>();
  private readonly lastSynced = new Map<string, number>();
  private readonly clockWarned = new Set<string>();
  /** Boards whose home (board-home.ts) this process already checked. */
  readonly homeChecked = new Set<string>();
  private readonly seen = new Map<string, RemoteSeen>();

  /** Records what a look at the remote branch `where` of the board `dir` found. */
  sawRemote(dir: string, where: string, seen: RemoteSeen): void {
    this.seen.set(`${dir}\0${where}`, seen);
  }

  /** What the last look of this process at the remote branch `where` of the board `dir` found. */
  lastSeen(dir: string, where: string): RemoteSeen | undefined {
    return this.seen.get(`${dir}\0${where}`);
  }

  /** Checks what cannot change while a process syncs again and again: that the remote exists and the branch name is usable. */
  checkRemote(cwd: string, remote: string, branch: string): void {
    const checked = `${cwd}\0${remote}`;
    if (!this.checked.has(checked)) {
      const url = git(cwd, ['remote', 'get-url', remote], { allowFail: true });
      if (url.status !== 0) {
        if (/not a git repository/i.test(url.stderr))
          throw new TasksError('E_INVALID', `the board ${cwd} is not in a git repository; sync needs one with a remote`);
        throw new TasksError('E_INVALID', `no git remote named '${remote}'; add one (git remote add ${remote} URL) or pass --remote`, { remote });
      }
      this.checked.add(checked);
    }
    const branchChecked = `${checked}\0${branch}`;
    if (!this.checked.has(branchChecked)) {
      if (git(cwd, ['check-ref-format', `refs/heads/${branch}`], { allowFail: true }).status !== 0 || branch.startsWith('-'))
        throw new TasksError('E_USAGE', `not a usable branch name: '${branch}'`, { branch });
      this.checked.add(branchChecked);
    }
  }

  /** The repository of a board (it does not change while a process runs). */
  repositoryOf(cwd: string): Repository {
    let known = this.repositories.get(cwd);
    if (!known) {
      const [top, common, objects, format] = out(
        git(cwd, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir', '--git-path', 'objects', '--show-object-format']),
      ).split('\n');
      known = { top, gitDir: isAbsolute(common) ? common : join(cwd, common) };
      // The object folder and format, in the same git process: the sync writes its objects there itself (object-store.ts).
      knowObjectsDir(cwd, objects, format);
      this.repositories.set(cwd, known);
    }
    return known;
  }

  /** Records that a sync of the board `dir` just finished. */
  synced(dir: string): void {
    this.lastSynced.set(dir, Date.now());
  }

  /** Whether this process finished a sync of the board `dir` within the last `ms`. */
  syncedWithin(dir: string, ms: number): boolean {
    return Date.now() - (this.lastSynced.get(dir) ?? 0) < ms;
  }

  /** True the first time it is asked for a board: its clocks are warned about once per process. */
  firstClockWarning(dir: string): boolean {
    if (this.clockWarned.has(dir)) return false;
    this.clockWarned.add(dir);
    return true;
  }
}

/** The memory of this process's syncs, unless a caller passes its own. */
export const processSyncMemory = new SyncMemory();
