import { statSync } from 'node:fs';

/** Whether the board folder is there. */
export function boardExists(board: string): boolean {
  return statSync(board, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** What a file looks like now (ino:size:mtime, or `gone`), to tell whether it moved on since it was read. */
export function fileSignature(path: string): string {
  const s = statSync(path, { throwIfNoEntry: false });
  return s ? `${s.ino}:${s.size}:${s.mtimeMs}` : 'gone';
}
