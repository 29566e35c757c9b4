import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import type { TaskEvent } from '@dotasks/core';

export interface EventsOptions extends GlobalOptions {
  since?: number;
}

/** One event per line: `#seq at type #task owner`. */
export function formatEvent(e: TaskEvent): string {
  const { seq, at, type, task, owner, ...rest } = e;
  const extra = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${seq} ${at} ${type}${task !== undefined ? ` #${task}` : ''}${owner ? ` by ${owner}` : ''}${extra ? ` ${extra}` : ''}`;
}

/** Prints the event log (PROTOCOL §7). */
export async function events(options: EventsOptions): Promise<CommandOutput> {
  const store = openStore(options);
  const list = store.readEvents(options.since ?? 0);
  if (options.json) return { text: list.map((e) => JSON.stringify(e)).join('\n') || undefined };
  return { text: list.map(formatEvent).join('\n') || '(no events yet)' };
}
