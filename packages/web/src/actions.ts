import { parseTaskId, TasksError, type MutationResult, type TaskStatus, type TaskStore, type UpdateTaskInput } from '@dotasks/core';
import type { WebWriteResult } from './wire.js';

/**
 * The writes the page can ask for, each one TaskStore method, so a write from
 * the page is validated, locked, logged and refused exactly as the same
 * command of the CLI (create, update, start, done, release, delete, dep,
 * note).
 * Request bodies are checked for shape here; everything about the board is
 * the store's to decide.
 */

/** A write the page asks for: method, path below /api, and the parsed JSON body. */
export interface WriteRequest {
  method: string;
  path: string;
  body: unknown;
}

type Body = Record<string, unknown>;

function asBody(body: unknown): Body {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new TasksError('E_USAGE', 'the request body must be a JSON object');
  return body as Body;
}

function optionalString(body: Body, key: string): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new TasksError('E_USAGE', `${key} must be a string`);
  return value;
}

function optionalFlag(body: Body, key: string): boolean | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new TasksError('E_USAGE', `${key} must be true or false`);
  return value;
}

/** Ids as the CLI takes them: `3`, `#3`, `task_3`, comma-separated in a string or as a list. */
function idList(body: Body, key: string): number[] {
  const value = body[key];
  if (value === undefined || value === null) return [];
  const parts = Array.isArray(value) ? value : [value];
  const out: number[] = [];
  for (const part of parts) {
    if (typeof part !== 'string' && typeof part !== 'number') throw new TasksError('E_USAGE', `${key} must list task ids`);
    for (const piece of String(part).split(',')) if (piece.trim() !== '') out.push(parseTaskId(piece.trim()));
  }
  return out;
}

/** Labels as the CLI's `--label` takes them: a list, or comma-separated in a string. */
function labelList(body: Body, key: string): string[] | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  const parts = Array.isArray(value) ? value : [value];
  if (parts.some((part) => typeof part !== 'string')) throw new TasksError('E_USAGE', `${key} must be a list of labels`);
  return (parts as string[])
    .flatMap((part) => part.split(','))
    .map((label) => label.trim())
    .filter(Boolean);
}

/**
 * A priority as `--priority` takes it (`0` … `4`, also `"P0"`), or null for
 * the default; the store checks the range and says it in the CLI's words.
 */
function optionalPriority(body: Body): number | null | undefined {
  const value = body.priority;
  if (value === undefined) return undefined;
  if (value === null || typeof value === 'number') return value;
  const m = typeof value === 'string' ? /^[pP]?(\d+)$/.exec(value.trim()) : null;
  if (!m) throw new TasksError('E_USAGE', `priority takes 0 (highest) to 4, got ${JSON.stringify(value)}`);
  return Number(m[1]);
}

const STATUSES: readonly string[] = ['pending', 'in_progress', 'completed', 'deleted'];

function optionalStatus(body: Body): TaskStatus | undefined {
  const status = optionalString(body, 'status');
  if (status !== undefined && !STATUSES.includes(status)) throw new TasksError('E_USAGE', `status must be one of ${STATUSES.join(', ')}, not '${status}'`);
  return status as TaskStatus | undefined;
}

function answer(result: MutationResult): WebWriteResult {
  return { task: result.task.id, unblocked: result.unblocked };
}

/**
 * Runs one write as `actor`. Routes (below /api):
 * `POST /tasks` create; `PATCH /tasks/N` change fields (as `tasks update`:
 * `priority`, `addLabels` and `removeLabels` among them);
 * `POST /tasks/N/start|done|release|delete|approve`; `POST /tasks/N/reject` `{note}`
 * (docs/protocol.md, "Review"); `POST /tasks/N/notes` `{text}`
 * appends a note as `tasks note` does; `POST /tasks/N/blockers`
 * `{blocker}` and `DELETE /tasks/N/blockers/M`: N waits (no longer waits) for
 * M, as `tasks dep add|rm N M`. Returns undefined for a route it does not know.
 */
export async function runWrite(store: TaskStore, actor: string, request: WriteRequest): Promise<WebWriteResult | undefined> {
  const { method, path } = request;
  const parts = path.split('/').filter(Boolean);
  if (parts[0] !== 'tasks') return undefined;
  if (parts.length === 1 && method === 'POST') {
    const body = asBody(request.body);
    const subject = optionalString(body, 'subject');
    if (subject === undefined || subject.trim() === '') throw new TasksError('E_USAGE', 'a task needs a subject');
    const result = await store.createTask(
      {
        subject,
        description: optionalString(body, 'description'),
        activeForm: optionalString(body, 'activeForm') || undefined,
        owner: optionalString(body, 'owner'),
        blockedBy: idList(body, 'blockedBy'),
        blocks: idList(body, 'blocks'),
        priority: optionalPriority(body),
        labels: labelList(body, 'labels'),
      },
      { actor },
    );
    return answer(result);
  }
  if (parts.length < 2) return undefined;
  const id = parseTaskId(parts[1]);
  if (parts.length === 2 && method === 'PATCH') {
    const body = asBody(request.body);
    const activeForm = optionalString(body, 'activeForm');
    const patch: UpdateTaskInput = {
      subject: optionalString(body, 'subject'),
      description: optionalString(body, 'description'),
      activeForm: activeForm === '' ? null : activeForm,
      owner: optionalString(body, 'owner'),
      status: optionalStatus(body),
      priority: optionalPriority(body),
      addLabels: labelList(body, 'addLabels'),
      removeLabels: labelList(body, 'removeLabels'),
    };
    return answer(await store.updateTask(id, patch, { actor, force: optionalFlag(body, 'force') }));
  }
  if (parts.length === 3 && method === 'POST') {
    const body = asBody(request.body);
    const force = optionalFlag(body, 'force');
    switch (parts[2]) {
      case 'start':
        return answer(await store.startTask(id, { owner: actor, actor, activeForm: optionalString(body, 'activeForm') || undefined }));
      case 'done':
        // As `tasks done`: the task's check before done runs first (a failing one is a 409 E_VERIFY, with its note written).
        return answer(await store.finishTask(id, { actor, force }));
      case 'release':
        return answer(await store.releaseTask(id, { actor, force }));
      case 'approve':
        // As `tasks approve`: a task waiting for review, not the server's owner's own (409 E_OWN_REVIEW).
        return answer(await store.approveTask(id, { actor }));
      case 'reject': {
        // As `tasks reject --note`: the note says what to fix; without one it is a usage error.
        const note = optionalString(body, 'note');
        if (!note?.trim()) throw new TasksError('E_USAGE', 'reject needs a note: what to fix, for its owner');
        return answer(await store.rejectTask(id, { actor, note }));
      }
      case 'delete':
        return answer(await store.deleteTask(id, { actor }));
      case 'notes': {
        // As `tasks note`: text that is only blanks is a usage error; the store trims it and appends it.
        const text = optionalString(body, 'text');
        if (!text?.trim()) throw new TasksError('E_USAGE', 'note needs some text');
        return answer(await store.addNote(id, text, { actor }));
      }
      case 'blockers': {
        const blockers = idList(body, 'blocker');
        if (blockers.length !== 1) throw new TasksError('E_USAGE', 'name one blocker: {"blocker": 3}');
        return answer(await store.addDependency(id, blockers[0], { actor }));
      }
    }
    return undefined;
  }
  if (parts.length === 4 && parts[2] === 'blockers' && method === 'DELETE') return answer(await store.removeDependency(id, parseTaskId(parts[3]), { actor }));
  return undefined;
}
