/**
 * Commands quoted in messages, written so they work when pasted: a hint
 * that names a command carries the flags it needs for the owner it is
 * about (`'tasks done 3 --owner agent-1'`), not the flags of whoever reads it.
 */

/** One word of a pasted command: as it is when the shell leaves it alone, else in double quotes (hints sit inside single quotes). */
export function hintWord(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `"${word.replace(/["\\$`]/g, '\\$&')}"`;
}

/** ` --owner NAME` for a hint about an owner's task; nothing for nobody. */
export function ownerFlag(owner: string): string {
  return owner === '' ? '' : ` --owner ${hintWord(owner)}`;
}
