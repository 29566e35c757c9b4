import type { InvalidFinding } from './watch-events.js';

/**
 * The problems already reported, by file, so a periodic reconcile or another
 * change to a file does not report them again. Bounded by the board: one
 * entry per file that has problems now.
 */
export interface ProblemMemory {
  /** Reports the problems of `found` not reported before; `replaceFiles` forget what they had (they were read again). */
  reportNew(found: InvalidFinding[], replaceFiles: Iterable<string>): Promise<void>;
  /** The whole board was looked at: forget problems that are gone, report the new ones. */
  reportWholeBoard(found: InvalidFinding[]): Promise<void>;
  /** Forgets everything (the board is gone). */
  forget(): void;
}

const problemKey = (f: InvalidFinding) => `${f.line ?? ''}:${f.column ?? ''}:${f.problem}`;

export function createProblemMemory(report: (finding: InvalidFinding) => Promise<void>): ProblemMemory {
  let reported = new Map<string, Set<string>>();
  return {
    async reportNew(found, replaceFiles) {
      const next = new Map<string, Set<string>>();
      for (const file of replaceFiles) next.set(file, new Set());
      const fresh: InvalidFinding[] = [];
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
      for (const f of fresh) await report(f);
    },
    async reportWholeBoard(found) {
      const previous = reported;
      const next = new Map<string, Set<string>>();
      const fresh: InvalidFinding[] = [];
      for (const f of found) {
        const key = problemKey(f);
        let set = next.get(f.file);
        if (!set) next.set(f.file, (set = new Set()));
        if (!set.has(key) && !previous.get(f.file)?.has(key)) fresh.push(f);
        set.add(key);
      }
      reported = next;
      for (const f of fresh) await report(f);
    },
    forget() {
      reported = new Map();
    },
  };
}
