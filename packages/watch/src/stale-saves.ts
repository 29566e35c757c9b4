import { hashText, type BoardFinding } from '@dotasks/core/internal';

/** A repair the watcher made: the hash of the bytes it replaced, and the finding it settled. */
export interface Repair {
  replaced: string;
  finding: BoardFinding;
}

/**
 * The bytes each repair replaced, by file, with the repair. An editor that
 * had the file open saves its old buffer over the repair: those exact bytes
 * coming back are an old buffer, not a person removing the edge, and the
 * repair is made again instead of the removal being mirrored.
 */
export interface StaleSaveMemory {
  /** Remembers that a repair of task `id` replaced `before`. */
  remember(id: number, before: string, finding: BoardFinding): void;
  /**
   * The repair whose replaced bytes `text` is, if any: an editor's stale
   * save. Repairs are remembered until the memory is full, not forgotten when
   * the file moves on: an editor writes in place, so a look in the middle of
   * its save sees a half-written file, and an old buffer can come back after
   * other edits. Making a repair again re-checks it under the locks, so one
   * that no longer applies (the edge was removed from the other side) writes
   * nothing.
   */
  staleRepair(id: number, text: string | undefined): Repair | undefined;
  /** The last repair of task `id` (a new object each time a repair is made). */
  last(id: number): Repair | undefined;
}

export function createStaleSaveMemory(limit = 10_000): StaleSaveMemory {
  const repairs = new Map<number, Repair>();
  return {
    remember(id, before, finding) {
      repairs.delete(id); // re-inserted last: the oldest repair is the one dropped when full
      repairs.set(id, { replaced: hashText(before)!, finding });
      if (repairs.size > limit) repairs.delete(repairs.keys().next().value!);
    },
    staleRepair(id, text) {
      const repair = repairs.get(id);
      return repair && hashText(text) === repair.replaced ? repair : undefined;
    },
    last: (id) => repairs.get(id),
  };
}
