/**
 * The board index's history file (`board-history.v3`): the closed tasks'
 * entries as an exact pass last wrote them, one sealed part, named in the
 * index's header by its inode, size and seal (IndexHeader.history). A change
 * of the open work leaves it as it is (docs/decisions.md, "History the open
 * work does not pay for"); a history the header does not name is not read.
 */
import { SEAL_BYTES, seal, sealed, tempName, BOARD_HISTORY_FILE, type HistoryRef } from './index-file.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { closeSync, fstatSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } = process.getBuiltinModule('node:fs');

/**
 * The history file's bytes: the closed tasks' entry lines as a part
 * (`[line,\nline]\n`) and a seal over them.
 */
export function encodeHistory(lines: string[]): Buffer {
  const body = Buffer.from(`[${lines.join(',\n')}]\n`);
  return Buffer.concat([body, seal(body, body.length)]);
}

/**
 * The history file's part (its entries as a JSON array), when the file is the
 * one `ref` names (inode, size) and its seal holds; undefined otherwise, and
 * then every closed task is read from its file by the next exact pass.
 */
export function readHistory(file: string, ref: HistoryRef): string | undefined {
  let buf: Buffer;
  try {
    const stat = statSync(file);
    if (stat.ino !== ref.ino || stat.size !== ref.size) return undefined;
    buf = readFileSync(file);
  } catch {
    return undefined;
  }
  if (buf.length !== ref.size || !sealed(buf, buf.length) || buf.toString('latin1', buf.length - SEAL_BYTES + 1, buf.length - 1) !== ref.seal) return undefined;
  return buf.toString('utf8', 0, buf.length - SEAL_BYTES);
}

/** The seal of a history file's bytes, as its HistoryRef names it. */
export function historySeal(bytes: Buffer): string {
  return bytes.toString('latin1', bytes.length - SEAL_BYTES + 1, bytes.length - 1);
}

/**
 * Puts the history's `data` in place (a temp file of its own, renamed):
 * the reference the index then names it by, or undefined when it could not
 * be written (the index then keeps every closed entry in its rest part).
 */
export function writeHistoryFile(runtimeDir: string, target: string, data: Buffer, entries: number): HistoryRef | undefined {
  const path = tempName(runtimeDir, BOARD_HISTORY_FILE);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'wx', 0o644);
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    const { ino, size } = fstatSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(path, target);
    return { ino, size, seal: historySeal(data), entries };
  } catch {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // never made, or renamed
    }
    return undefined;
  }
}
