import type { WebError, WebEvent, WebState, WebWriteResult } from '../src/wire';

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
