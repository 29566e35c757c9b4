/**
 * Tasks a sync moved to a new id while someone here held them
 * (`.runtime/renumbered.json`), so a command that still names the old id
 * does not act on the task the remote has under it now (docs/protocol.md,
 * "Ids across machines"). A runtime record: losing it loses the refusal,
 * never a task.
 */
import { join } from 'node:path';
import { TasksError, isErrnoException } from '../errors.js';
import { atomicWriteFile } from '../fs/fsio.js';
import type { Task } from '../format/format.js';

const { readFileSync } = process.getBuiltinModule('node:fs');

export const MOVES_FILE = 'renumbered.json';

interface MoveRecord {
  from: number;
  to: number;
  owner: string;
  at: string;
  where: string;
}

/** Remembers the tasks a sync moved to new ids while `owner` held them. */
export function recordMoves(runtimeDir: string, moved: { from: number; to: number; owner?: string }[], where: string): void {
  const held = moved.filter((m) => m.owner);
  if (held.length === 0) return;
  const at = new Date().toISOString();
  const records = [
    ...readMoves(runtimeDir).filter((r) => !held.some((m) => m.from === r.from)),
    ...held.map((m) => ({ from: m.from, to: m.to, owner: m.owner!, at, where })),
  ];
  atomicWriteFile(join(runtimeDir, MOVES_FILE), JSON.stringify(records, null, 2) + '\n', { fsync: false });
}

function readMoves(runtimeDir: string, text?: string): MoveRecord[] {
  try {
    const records = JSON.parse(text ?? readFileSync(join(runtimeDir, MOVES_FILE), 'utf8')) as MoveRecord[];
    return Array.isArray(records) ? records.filter((r) => Number.isSafeInteger(r?.from) && Number.isSafeInteger(r?.to) && typeof r.owner === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Refuses a command of `actor` on task `id` when a sync moved the task
 * `actor` held under that id to another id and `actor` still holds it
 * there: the id names another machine's task now.
 */
export function assertNotMovedAway(runtimeDir: string, id: number, actor: string | undefined, peek: (id: number) => Task | undefined): void {
  if (!actor) return;
  let text: string;
  try {
    text = readFileSync(join(runtimeDir, MOVES_FILE), 'utf8');
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'ENOTDIR')) return;
    throw error;
  }
  if (!text.includes(`"from": ${id},`)) return;
  const record = readMoves(runtimeDir, text).find((r) => r.from === id && r.owner === actor);
  if (!record) return;
  const now = peek(record.to);
  if (!now || now.status !== 'in_progress' || now.owner !== actor) return;
  throw new TasksError(
    'E_MOVED',
    `task #${id} is not the task ${actor} holds any more: tasks sync moved it to #${record.to} on ${record.at} (${record.where} had given #${id} to another task); act on #${record.to}`,
    { id, movedTo: record.to, owner: actor },
  );
}

/** Where a sync moved the task `owner` held as `id`, while `owner` still holds it there. */
export function findMove(runtimeDir: string, id: number, owner: string, peek: (id: number) => Task | undefined): number | undefined {
  const record = readMoves(runtimeDir).find((r) => r.from === id && r.owner === owner);
  if (!record) return undefined;
  const now = peek(record.to);
  return now && now.status === 'in_progress' && now.owner === owner ? record.to : undefined;
}
