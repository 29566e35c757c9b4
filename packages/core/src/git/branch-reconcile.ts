/**
 * Settling ids two branches handed out twice, once git is done (docs/
 * protocol.md, "Ids across branches"): the board of the two sides and their
 * common ancestor is merged as a whole (git/branch-merge.ts) and what that
 * changes is written into the work tree, through the board's transaction,
 * and staged. Run by the hooks `tasks init --git` installs (after a merge, a
 * cherry-pick, a rebase: the commit git just made is amended, so no commit
 * of the branch keeps a task set aside) and by `tasks doctor --fix` (during
 * a conflicted merge or cherry-pick, or afterwards from the driver's record).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { locateGit } from './locate-git.js';
import { HIGHWATERMARK_FILE, type Transaction } from '../engine/transaction.js';
import { TasksError } from '../errors.js';
import { idFromFileName, parseTask, serializeTask, taskFileName, type Task } from '../format/format.js';
import { TaskStore } from '../store.js';
import { git, out, parseTree, readBlobs, readObjects } from '../sync/git-objects.js';
import { mergeBranchBoards, type BoardFiles, type BranchMergeResult, type BranchRenumbered } from './branch-merge.js';
import { clearClashes, readClashes, type ClashRecord, type IdClash } from './id-clashes.js';
import { mergeTaskText } from './merge.js';
import { moveMentionsIn, renameBranch, taskBranch } from './renumber.js';

/** Which git operation's sides to merge. */
export type ReconcileMode =
  /** A merge in progress (MERGE_HEAD): HEAD is ours. */
  | 'merging'
  /** HEAD is the merge commit just made: its parents are the sides. */
  | 'merged'
  /** A cherry-pick in progress or just committed (CHERRY_PICK_HEAD): the picked commit is theirs. */
  | 'cherry-pick'
  /** A rebase just done: the rebased branch as it was (ORIG_HEAD) is theirs, what it was rebased onto is ours. */
  | 'rebase';

export interface ReconcileOptions {
  mode: ReconcileMode;
  /** For 'rebase': the commit the branch was rebased onto. */
  onto?: string;
  /** For 'cherry-pick': the pick is committed already (HEAD's parent is ours). */
  committed?: boolean;
  /** Amend HEAD with the result (the hooks; a person's `doctor --fix` leaves the commit to them). */
  amend?: boolean;
}

export interface ReconcileReport {
  mode: ReconcileMode | 'record';
  renumbered: BranchRenumbered[];
  /** Files written (board-relative names). */
  written: string[];
  /** Task files left with git's markers: both sides changed a field differently. */
  conflicts: BranchMergeResult['conflicts'];
  amended: boolean;
}

interface Repository {
  top: string;
  /** This worktree's git dir (where MERGE_HEAD and the clash record are). */
  gitDir: string;
  /** The board's folder in the repository (`.tasks`). */
  board: string;
}

function repositoryOf(store: TaskStore, cwd: string): Repository {
  const found = locateGit(cwd);
  if (!found?.gitDir) throw new TasksError('E_INVALID', `${cwd} is not in a git repository`);
  return { top: found.worktreeRoot, gitDir: found.gitDir, board: relative(found.mainRoot, store.dir) || '.' };
}

/**
 * The board folder a git operation in `cwd`'s worktree merged: the board's
 * own in the main checkout, or, in a linked worktree, that worktree's copy of
 * the board's files (commands there use the main checkout's board, but git
 * merges the files of the worktree it runs in).
 */
export function operationBoard(store: TaskStore, cwd: string): TaskStore {
  const found = locateGit(cwd);
  if (!found?.linked) return store;
  const copy = join(found.worktreeRoot, relative(found.mainRoot, store.dir));
  return copy === store.dir ? store : new TaskStore(copy);
}

const refFile = (repo: Repository, name: string) => {
  const path = join(repo.gitDir, name);
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n')[0].trim() || undefined : undefined;
};

const revParse = (repo: Repository, rev: string): string | undefined => {
  const r = git(repo.top, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { allowFail: true });
  return r.status === 0 ? out(r) : undefined;
};

/** The board's task files and `.highwatermark` at `commit` (none when the commit has no board). */
function boardAt(repo: Repository, commit: string | undefined): BoardFiles {
  const files: BoardFiles = new Map();
  if (!commit) return files;
  const spec = repo.board === '.' ? `${commit}^{tree}` : `${commit}:${repo.board}`;
  const tree = readObjects(repo.top, [spec]).get(spec);
  if (!tree || tree.type !== 'tree') return files;
  const entries = [...parseTree(tree)].filter(([name, e]) => e.type === 'blob' && (name === HIGHWATERMARK_FILE || idFromFileName(name) !== undefined));
  const texts = readBlobs(
    repo.top,
    entries.map(([, e]) => e.sha),
  );
  for (const [name, e] of entries) {
    const text = texts.get(e.sha);
    if (text !== undefined) files.set(name, text);
  }
  return files;
}

/** The three commits of a mode: base, ours, theirs. */
function sidesOf(repo: Repository, options: ReconcileOptions): { base?: string; ours: string; theirs: string } {
  const need = (rev: string | undefined, what: string) => {
    const commit = rev && revParse(repo, rev);
    if (!commit) throw new TasksError('E_GIT', `cannot settle the board's ids: ${what} is not there`);
    return commit;
  };
  const mergeBase = (a: string, b: string) => {
    const r = git(repo.top, ['merge-base', a, b], { allowFail: true });
    return r.status === 0 ? out(r) : undefined;
  };
  switch (options.mode) {
    case 'merging': {
      const ours = need('HEAD', 'HEAD');
      const theirs = need(refFile(repo, 'MERGE_HEAD'), 'MERGE_HEAD (no merge in progress)');
      return { base: mergeBase(ours, theirs), ours, theirs };
    }
    case 'merged': {
      const ours = need('HEAD^1', "HEAD's first parent");
      const theirs = need('HEAD^2', 'HEAD^2 (HEAD is not a merge commit)');
      return { base: mergeBase(ours, theirs), ours, theirs };
    }
    case 'cherry-pick': {
      const theirs = need(refFile(repo, 'CHERRY_PICK_HEAD'), 'CHERRY_PICK_HEAD (no cherry-pick in progress)');
      return { base: revParse(repo, `${theirs}^`), ours: need(options.committed ? 'HEAD^' : 'HEAD', 'HEAD'), theirs };
    }
    case 'rebase': {
      const theirs = need(refFile(repo, 'ORIG_HEAD'), 'ORIG_HEAD (the branch before the rebase)');
      const ours = need(options.onto, 'the commit the branch was rebased onto');
      return { base: mergeBase(ours, theirs), ours, theirs };
    }
  }
}

/**
 * Settles the ids of the git operation `options.mode` names (see the module
 * comment): writes what the whole-board merge changes, stages it, renames
 * the branches of moved tasks, amends HEAD when asked, and forgets the
 * driver's record.
 */
export async function reconcileBranches(board: TaskStore, cwd: string, options: ReconcileOptions): Promise<ReconcileReport> {
  const repo = repositoryOf(board, cwd);
  const store = operationBoard(board, cwd);
  const sides = sidesOf(repo, options);
  const result = mergeBranchBoards({
    base: boardAt(repo, sides.base),
    ours: boardAt(repo, sides.ours),
    theirs: boardAt(repo, sides.theirs),
    branchPattern: store.config.branchPattern,
  });
  const written = await writeBoard(store, repo, result.files);
  for (const r of result.renumbered) if (r.branch && !ownsBranch(store, r.from, r.branch.from)) renameBranch(repo.top, r.branch.from, r.branch.to);
  const amended = options.amend === true && written.length > 0 && amend(repo, result.renumbered);
  clearClashes(repo.gitDir);
  return { mode: options.mode, renumbered: result.renumbered, written, conflicts: result.conflicts, amended };
}

/** The board's high-water mark; -1 when git left it unreadable (its markers), so the settled one is written. */
function markOf(tx: Transaction): number {
  try {
    return tx.readHighWaterMark();
  } catch (error) {
    if (error instanceof TasksError && error.code === 'E_CORRUPT') return -1;
    throw error;
  }
}

/** Whether our side's task `id` (the one that kept it) has the branch `branch` as its own. */
function ownsBranch(store: TaskStore, id: number, branch: string): boolean {
  return store.peekTask(id)?.metadata?.branch === branch;
}

/**
 * Writes the files of `files` that differ from the work tree through one
 * board transaction, and stages them. A file still holding git's markers
 * (both sides changed a field differently) is a person's to settle: left.
 */
async function writeBoard(store: TaskStore, repo: Repository, files: BoardFiles): Promise<string[]> {
  const changed: string[] = [];
  await store.transact({ board: true }, (tx) => {
    changed.length = 0;
    for (const [name, text] of files) {
      if (name === HIGHWATERMARK_FILE) {
        const mark = Number(text.trim());
        if (mark > markOf(tx)) {
          tx.setHighWaterMark(mark);
          changed.push(name);
        }
        continue;
      }
      const id = idFromFileName(name)!;
      if (/^<{7}|^={7}|^>{7}/m.test(text)) continue;
      if (tx.readText(id) === text) continue;
      tx.putText(id, text);
      changed.push(name);
    }
  });
  if (changed.length) {
    const paths = changed.map((name) => (repo.board === '.' ? name : `${repo.board}/${name}`));
    git(repo.top, ['add', '--pathspec-from-file=-', '--pathspec-file-nul'], { input: paths.join('\0') });
  }
  return changed;
}

/**
 * Amends HEAD with what is staged: the same parents, author and message, and
 * a line per task brought back. Written with plumbing (write-tree,
 * commit-tree, update-ref), which works where `git commit --amend` does not
 * (git is still inside the merge while post-merge runs), and runs no hooks.
 */
function amend(repo: Repository, renumbered: BranchRenumbered[]): boolean {
  const head = out(git(repo.top, ['rev-parse', 'HEAD']));
  const tree = out(git(repo.top, ['write-tree']));
  const [, ...parents] = out(git(repo.top, ['rev-list', '--parents', '-n', '1', 'HEAD'])).split(' ');
  const [name, email, date, ...body] = git(repo.top, ['log', '-1', '--format=%an%x00%ae%x00%ad%x00%B', '--date=raw', 'HEAD'])
    .stdout.toString('utf8')
    .split('\0');
  const lines = renumbered.map((r) => `tasks: the other side's #${r.from} (${JSON.stringify(r.subject)}) is #${r.to} now`);
  const message = `${body.join('\0').replace(/\n+$/, '')}\n\n${lines.join('\n')}\n`;
  const env = { ...process.env, GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_AUTHOR_DATE: date };
  const commit = out(git(repo.top, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])], { input: message, env }));
  git(repo.top, ['update-ref', '-m', 'tasks: settled ids two branches handed out twice', 'HEAD', commit, head]);
  return true;
}

/**
 * Without the commits of the operation (it is over, and no hook ran): from
 * the driver's record alone. Each task set aside comes back under a free id;
 * a task whose edge names the clashing id is rewired to the one its side
 * meant, which the two versions of that task tell (edges are stored on both
 * sides: the task set aside lists the tasks it waits for and blocks); its
 * own text's mentions follow it.
 */
export async function reconcileFromRecord(board: TaskStore, cwd: string, record: ClashRecord): Promise<ReconcileReport> {
  const repo = repositoryOf(board, cwd);
  const store = operationBoard(board, cwd);
  const renumbered: BranchRenumbered[] = [];
  const written: string[] = [];
  await store.transact({ board: true }, async (tx) => {
    renumbered.length = 0;
    written.length = 0;
    let next = store.listIds().reduce((a, b) => Math.max(a, b), markOf(tx)) + 1;
    for (const clash of [...record.clashes].sort((a, b) => a.id - b.id)) {
      let theirs: Task;
      try {
        theirs = parseTask(clash.theirs, taskFileName(clash.id));
      } catch {
        continue;
      }
      const ours = tx.tryRead(clash.id);
      if (!ours || ours.subject !== clash.oursSubject) continue; // settled by hand since
      if (clash.kind === 'moved') {
        written.push(...settleMoved(store, tx, clash, ours, theirs));
        continue;
      }
      const to = next++;
      const moves = new Map([[clash.id, to]]);
      const linked = new Set([...theirs.blocks, ...theirs.blockedBy]);
      const oursLinked = new Set([...ours.blocks, ...ours.blockedBy]);
      for (const other of linked) {
        const task = tx.tryRead(other);
        if (!task) continue;
        const edit = { ...task, blockedBy: [...task.blockedBy], blocks: [...task.blocks] };
        for (const key of ['blockedBy', 'blocks'] as const) {
          if (!edit[key].includes(clash.id)) continue;
          edit[key] = [...new Set([...edit[key].filter((x) => x !== clash.id || oursLinked.has(other)), to])].sort((a, b) => a - b);
        }
        if (serializeTask(edit) !== serializeTask(task)) {
          tx.put(edit);
          written.push(taskFileName(other));
        }
      }
      const moved: Task = { ...theirs, id: to, description: moveMentionsIn(theirs.description, moves) };
      if (moved.notes) moved.notes = moved.notes.map((n) => ({ ...n, text: moveMentionsIn(n.text, moves) }));
      const entry: BranchRenumbered = { from: clash.id, to, subject: theirs.subject };
      if (typeof moved.metadata?.branch === 'string' && moved.metadata.branch === taskBranch(store.config.branchPattern, clash.id)) {
        entry.branch = { from: moved.metadata.branch, to: taskBranch(store.config.branchPattern, to) };
        moved.metadata = { ...moved.metadata, branch: entry.branch.to };
      }
      await tx.lockNewTask(to);
      tx.put(moved);
      written.push(taskFileName(to));
      renumbered.push(entry);
      tx.setHighWaterMark(to);
    }
  });
  for (const r of renumbered) if (r.branch && !ownsBranch(store, r.from, r.branch.from)) renameBranch(repo.top, r.branch.from, r.branch.to);
  if (written.length && git(repo.top, ['ls-files', '--error-unmatch', '--', repo.board], { allowFail: true }).status === 0) {
    const paths = [...new Set(written), HIGHWATERMARK_FILE].map((name) => (repo.board === '.' ? name : `${repo.board}/${name}`));
    git(repo.top, ['add', '--pathspec-from-file=-', '--pathspec-file-nul'], { input: paths.join('\0') });
  }
  clearClashes(repo.gitDir);
  return { mode: 'record', renumbered, written, conflicts: [], amended: false };
}

/**
 * A file the driver kept ours of because the id named another task on each
 * side (id-clashes.ts, `moved`), settled from the record: their change goes
 * to the task it was made to. When our side changed the subject: that task
 * is the one of this board with the base's subject under another id (an
 * earlier merge moved it there), else this one (a rename). When their side
 * did, and this board has the base's task under another id (their side moved
 * it, and that file came in), our version goes there and theirs takes this
 * id. Returns the files changed.
 */
function settleMoved(store: TaskStore, tx: Transaction, clash: IdClash, ours: Task, theirs: Task): string[] {
  let base: Task | undefined;
  try {
    base = clash.base ? parseTask(clash.base, taskFileName(clash.id)) : undefined;
  } catch {
    base = undefined;
  }
  if (!base) return [];
  const elsewhere = (subject: string) => {
    const found = store.loadBoard().tasks.filter((t) => t.id !== clash.id && t.subject.trim() === subject.trim());
    return found.length === 1 ? found[0].id : undefined;
  };
  const mergeInto = (id: number, b: Task, o: Task, t: Task): boolean => {
    const as = (task: Task) => serializeTask({ ...task, id });
    const result = mergeTaskText(as(b), as(o), as(t), taskFileName(id));
    if (result.conflicts.length) return false;
    tx.putText(id, result.text);
    return true;
  };
  if (ours.subject.trim() !== base.subject.trim()) {
    const target = elsewhere(base.subject) ?? clash.id;
    const current = tx.tryRead(target);
    return current && mergeInto(target, base, current, theirs) ? [taskFileName(target)] : [];
  }
  const moved = elsewhere(base.subject);
  if (moved === undefined) return mergeInto(clash.id, base, ours, theirs) ? [taskFileName(clash.id)] : [];
  const there = tx.tryRead(moved);
  if (!there || !mergeInto(moved, base, ours, there)) return [];
  tx.putText(clash.id, serializeTask(theirs));
  return [taskFileName(moved), taskFileName(clash.id)];
}

/** What `tasks doctor` finds to settle (pendingReconcile). */
export interface PendingReconcile {
  /** How: the commits of an operation in progress or just made, or the driver's record alone. */
  how: { mode: ReconcileMode } | { record: ClashRecord };
  /** The ids in question: recorded clashes, and task files git could not merge. */
  ids: number[];
  /** The clashes the driver recorded. */
  clashes: ClashRecord['clashes'];
}

/**
 * What `tasks doctor --fix` settles now, judged from the repository's state:
 * a merge or cherry-pick in progress with a clash recorded or a task file git
 * could not merge; else a clash the driver recorded and no hook settled (by
 * the merge commit when HEAD is it, else from the record). Undefined:
 * nothing to settle.
 */
export function pendingReconcile(board: TaskStore, cwd: string): PendingReconcile | undefined {
  const store = operationBoard(board, cwd);
  const found = locateGit(cwd);
  if (!found?.gitDir) return undefined;
  const record = readClashes(found.gitDir);
  const inProgress = ['MERGE_HEAD', 'CHERRY_PICK_HEAD'].find((name) => existsSync(join(found.gitDir!, name)));
  const unmergedIds = (): number[] => {
    if (!inProgress) return [];
    const r = git(store.dir, ['ls-files', '-u', '-z', '--', '.'], { allowFail: true });
    if (r.status !== 0) return [];
    const ids = r.stdout
      .toString('utf8')
      .split('\0')
      .map((line) => idFromFileName(line.split('\t')[1]?.split('/').pop() ?? ''))
      .filter((id): id is number => id !== undefined);
    return [...new Set(ids)];
  };
  const clashes = record?.clashes ?? [];
  const ids = [...new Set([...clashes.map((c) => c.id), ...unmergedIds()])].sort((a, b) => a - b);
  if (inProgress && ids.length) return { how: { mode: inProgress === 'MERGE_HEAD' ? 'merging' : 'cherry-pick' }, ids, clashes };
  if (!record || clashes.length === 0) return undefined;
  const parents = git(store.dir, ['rev-list', '--parents', '-n', '1', 'HEAD'], { allowFail: true });
  const [, first, second] = out(parents).split(' ');
  return { how: second && record.head && first === record.head ? { mode: 'merged' } : { record }, ids, clashes };
}
