/**
 * What doctor's checks ask git, asked once per command and kept: whether the
 * merge driver is registered, which board files the code branch tracks, and
 * which commits created a task file. The scans that run under the board lock
 * (the repairs, the last look at what remains) read these answers and start
 * no git (docs/decisions.md, "No git inside a board transaction"); what they
 * need and was never asked counts as nothing to report.
 */
import { checkMergeDriver, type MergeDriverCheck } from '../git/git-setup.js';
import { trackedBoardFiles } from '../sync/board-home.js';
import { git } from '../sync/git-objects.js';

export class GitAnswers {
  private driver?: MergeDriverCheck;
  private tracked?: string[];

  constructor(
    private readonly boardDir: string,
    /** The commits that created each task file, by id. */
    private readonly history = new Map<number, string[]>(),
    /** Set on the answers a scan under the board lock reads: nothing more is asked. */
    private readonly settledOnly = false,
  ) {}

  /** The same answers, for a scan under the board lock: what was not asked before stays unasked. */
  settled(): GitAnswers {
    const answers = new GitAnswers(this.boardDir, this.history, true);
    answers.driver = this.driver;
    answers.tracked = this.tracked;
    return answers;
  }

  /** Whether the merge driver for task files is usable in this clone (git-setup.ts). */
  mergeDriver(): MergeDriverCheck {
    if (this.driver === undefined && !this.settledOnly) this.driver = checkMergeDriver(this.boardDir);
    return this.driver ?? {};
  }

  /** The task files and `.highwatermark` the code branch tracks (board-home.ts). */
  trackedBoardFiles(): string[] {
    if (this.tracked === undefined && !this.settledOnly) this.tracked = trackedBoardFiles(this.boardDir);
    return this.tracked ?? [];
  }

  /**
   * The commits of the checked-out history that created a task's file (two:
   * the id was handed out on two branches); `ask: false` only reads what an
   * earlier scan of the command asked.
   */
  commitsCreating(id: number, ask = true): string[] {
    if (!this.history.has(id)) {
      if (!ask || this.settledOnly) return [];
      this.history.set(id, commitsCreating(this.boardDir, id));
    }
    return this.history.get(id)!;
  }
}

function commitsCreating(boardDir: string, id: number): string[] {
  const r = git(boardDir, ['log', '--format=%H', '--diff-filter=A', '--full-history', '--', `task_${id}.json`], { allowFail: true });
  return r.status === 0 ? r.stdout.toString('utf8').split('\n').filter(Boolean) : [];
}
