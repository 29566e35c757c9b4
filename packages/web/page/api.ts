import type { WebError, WebEvent, WebHistoryPage, WebState, WebTaskAnswer, WebWriteResult } from '../src/wire';

/**
 * Talking to `tasks serve`: the run's token comes from the page's URL (the
 * one the command printed) and goes with every call; reads of the board come
 * as server-sent events.
 */
const token = new URLSearchParams(location.search).get('token') ?? '';

/** True when the page was opened without the token: it can show the board's URL hint instead of failing every call. */
export const hasToken = token !== '';

/** A write: one TaskStore method on the server. Throws with the server's message when it is refused. */
export async function write(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<WebWriteResult> {
  let response: Response;
  try {
    response = await fetch(`/api${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-tasks-token': token },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new Error('the server does not answer: is tasks serve still running?');
  }
  const data = (await response.json().catch(() => undefined)) as WebWriteResult | WebError | undefined;
  if (!response.ok || !data || 'error' in data) throw new Error(data && 'error' in data ? data.error.message : `the server answered ${response.status}`);
  return data;
}

/** A read of what the state leaves out. Undefined when the server says there is no such thing (404); throws with its message otherwise. */
async function read<T>(path: string): Promise<T | undefined> {
  let response: Response;
  try {
    response = await fetch(`/api${path}`, { headers: { 'x-tasks-token': token } });
  } catch {
    throw new Error('the server does not answer: is tasks serve still running?');
  }
  if (response.status === 404) return undefined;
  const data = (await response.json().catch(() => undefined)) as T | WebError | undefined;
  if (!response.ok || !data || (typeof data === 'object' && 'error' in data))
    throw new Error(data && typeof data === 'object' && 'error' in data ? data.error.message : `the server answered ${response.status}`);
  return data;
}

/** A page of the completed tasks, latest first, after `before`; those the words find when `q` is given. */
export function readHistory(options: { before?: number; limit: number; q?: string }): Promise<WebHistoryPage | undefined> {
  const query = new URLSearchParams({ limit: String(options.limit) });
  if (options.before !== undefined) query.set('before', String(options.before));
  if (options.q) query.set('q', options.q);
  return read<WebHistoryPage>(`/history?${query}`);
}

/** One task the state does not hold (a closed one), with the closed tasks it names; undefined when it is not on the board. */
export function readTask(id: number): Promise<WebTaskAnswer | undefined> {
  return read<WebTaskAnswer>(`/task/${id}`);
}

/** What the stream reports. */
export interface StreamHandlers {
  state(state: WebState): void;
  events(events: WebEvent[]): void;
  connected(up: boolean): void;
}

/** Follows the board: a full state on every change, and the event log as it grows. Returns a function that stops it. */
export function follow(handlers: StreamHandlers): () => void {
  const source = new EventSource(`/api/events?token=${encodeURIComponent(token)}`);
  source.addEventListener('state', (e) => handlers.state(JSON.parse((e as MessageEvent<string>).data) as WebState));
  source.addEventListener('events', (e) => handlers.events(JSON.parse((e as MessageEvent<string>).data) as WebEvent[]));
  source.addEventListener('open', () => handlers.connected(true));
  source.addEventListener('error', () => handlers.connected(false));
  return () => source.close();
}
