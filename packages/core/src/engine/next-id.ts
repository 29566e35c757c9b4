// The next id a create hands out (docs/protocol.md, "Ids are never reused"):
// above `.highwatermark`, what the transaction created and what a bounded
// look past the mark finds, with the whole folder listed only when that look
// meets a name already taken.
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { TasksError } from '../errors.js';
import type { BoardFiles } from './board-files.js';
import { HIGHWATERMARK_FILE, type Transaction } from './transaction.js';

/** How many names past the next id a create looks at for task files `.highwatermark` does not count (docs/protocol.md, "Ids are never reused"). */
export const ID_LOOKAHEAD = 100;

/** What a transaction learned of the names above the mark: the highest present once the folder was listed, and how far the look past it went. */
interface IdLook {
  listed: boolean;
  highest: number;
  lookedTo: number;
}

/**
 * The next id: above `.highwatermark`, every task this transaction created
 * and every task file the look past the mark finds. Under the board lock no
 * other command adds a file, so what the transaction learned holds for its
 * later creates. The folder is listed (the whole board's names, which a
 * board of 100,000 tasks pays 100 ms and more for) only when the mark is
 * missing, or when a name within ID_LOOKAHEAD past the next id is taken: a
 * pull that did not raise the mark, tasks made by hand, a folder of that
 * name. A file further past is never overwritten either: the ids reach it
 * only through that look.
 */
export function allocateId(board: BoardFiles, tx: Transaction): number {
  const mark = tx.readHighWaterMark();
  const look = tx.memo<IdLook>('idLook', () => ({ listed: false, highest: 0, lookedTo: 0 }));
  let id = safeId(board, Math.max(mark, tx.highestStagedId(), look.highest) + 1);
  if (!look.listed && (!tx.hasHighWaterMark() || takenPast(board, look, id))) {
    look.listed = true;
    look.highest = board.listIds().at(-1) ?? 0;
    id = safeId(board, Math.max(id, look.highest + 1));
  }
  return id;
}

function safeId(board: BoardFiles, id: number): number {
  if (!Number.isSafeInteger(id))
    throw new TasksError(
      'E_INVALID',
      `no more ids: the next would be ${id}, above ${Number.MAX_SAFE_INTEGER} (check ${join(board.dir, HIGHWATERMARK_FILE)}; 'tasks doctor --fix' sets it from the board)`,
    );
  return id;
}

/** Whether a name from `id` to ID_LOOKAHEAD past it is taken (any entry: a bad file or a folder counts); looks at each name once per transaction. */
function takenPast(board: BoardFiles, look: IdLook, id: number): boolean {
  for (let n = Math.max(id, look.lookedTo + 1); n < id + ID_LOOKAHEAD; n++) {
    if (lstatSync(board.taskPath(n), { throwIfNoEntry: false })) return true;
    look.lookedTo = n;
  }
  return false;
}
