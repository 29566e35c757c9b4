/**
 * Merged means done, for the commands that look (docs/protocol.md, "The way
 * back to main"): `tasks list`, `tasks ready` and `tasks claim --next`
 * complete the open tasks whose branch the target now holds before they
 * read the board (a task that requires review waits for it instead, and the
 * line says so). The look itself is a few file reads (mergedLookDue); the
 * core's merge code loads only when the target moved.
 */
import { mergedLookDue, printable, type BoardConfig } from './core-read.js';

/** Completes what the target now holds, when it moved; returns a line for each (and one for a look that failed). */
export async function settleMergedWork(dir: string, config: BoardConfig): Promise<string[]> {
  if (!mergedLookDue(dir, config)) return [];
  try {
    const [{ TaskStore }, { completeMergedTasks }] = await Promise.all([import('@dotasks/core/store'), import('@dotasks/core/internal')]);
    const done = await completeMergedTasks(new TaskStore(dir));
    return done.map((d) =>
      d.waitsForReview
        ? `tasks: #${d.id}'s branch ${printable(d.branch)} is merged into ${printable(d.into)}; it waits for review ('tasks approve ${d.id}')`
        : `tasks: completed #${d.id}: its branch ${printable(d.branch)} is merged ("mergedMeansDone" in config.json)`,
    );
  } catch (error) {
    // A read goes on without it: the next look tries again.
    return [`tasks: could not complete merged tasks ("mergedMeansDone"): ${printable((error as Error).message)}`];
  }
}
