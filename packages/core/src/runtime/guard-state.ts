import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { atomicWriteFile, readFileIfExists } from '../fs/fsio.js';
import { withLock } from '../fs/locks.js';
import type { TaskStore } from '../store.js';

/**
 * What the stop guard already said in one agent session
 * (`.tasks/.runtime/guard/<hash of the session id>.json`), so it nudges at
 * most once per task per session and an agent is never trapped in a loop.
 */
interface GuardSession {
  session: string;
  nudged: number[];
}

function sessionFile(store: TaskStore, sessionId: string): string {
  const hash = createHash('sha1').update(sessionId).digest('hex').slice(0, 20);
  return join(store.runtimeDir, 'guard', `${hash}.json`);
}

function readSession(file: string, sessionId: string): GuardSession {
  const text = readFileIfExists(file);
  if (text !== undefined) {
    try {
      const parsed = JSON.parse(text) as GuardSession;
      if (parsed.session === sessionId && Array.isArray(parsed.nudged)) return parsed;
    } catch {
      // unreadable: start over for this session
    }
  }
  return { session: sessionId, nudged: [] };
}

/** Task ids the guard already nudged about in this session. */
export function readNudged(store: TaskStore, sessionId: string): number[] {
  return readSession(sessionFile(store, sessionId), sessionId).nudged;
}

/**
 * Records a nudge for `taskId` in `sessionId`; true when this is the first
 * one (the caller may nudge), false when it was nudged before. Locked, so two
 * hooks firing at once nudge once.
 */
export async function markNudged(store: TaskStore, sessionId: string, taskId: number): Promise<boolean> {
  const file = sessionFile(store, sessionId);
  mkdirSync(join(store.runtimeDir, 'guard'), { recursive: true });
  return withLock(`${file}.lock`, store.lockOptions, (lock) => {
    const state = readSession(file, sessionId);
    if (state.nudged.includes(taskId)) return false;
    state.nudged.push(taskId);
    lock.assertHeld();
    atomicWriteFile(file, JSON.stringify(state, null, 2) + '\n');
    return true;
  });
}
