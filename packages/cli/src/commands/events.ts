import { followEvents, type TaskEvent } from '@dotasks/core';
import { openStore, type CommandOutput, type GlobalOptions } from '../context.js';
import { waitForSignal } from '../signals.js';
import type { CommandArgs } from '../command-table.js';
import { printable } from '../core-read.js';

/** What `tasks events` takes, as declared in the command table. */
export interface EventsOptions extends CommandArgs<'events'>, GlobalOptions {}

/** One event per line: `#seq at type #task owner`. */
export function formatEvent(e: TaskEvent): string {
  const { seq, at, type, task, owner, ...rest } = e;
  const extra = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return printable(`${seq} ${at} ${type}${task !== undefined ? ` #${task}` : ''}${owner ? ` by ${owner}` : ''}${extra ? ` ${extra}` : ''}`);
}

/** Prints the event log (docs/protocol.md, "Events"); with `follow`, streams it as it grows. */
export async function events(options: EventsOptions, write: (line: string) => void = (l) => process.stdout.write(l + '\n')): Promise<CommandOutput> {
  const store = openStore(options);
  if (options.follow) {
    const signals = waitForSignal();
    try {
      const follower = followEvents(store, {
        sinceSeq: options.since ?? 0,
        onEvent: (e) => write(options.json ? JSON.stringify(e) : formatEvent(e)),
      });
      await signals.signalled;
      follower.close();
      return {};
    } finally {
      signals.dispose();
    }
  }
  const list = store.readEvents(options.since ?? 0);
  if (options.json) return { text: list.map((e) => JSON.stringify(e)).join('\n') || undefined };
  return { text: list.map(formatEvent).join('\n') || '(no events yet)' };
}
