import type { Writable } from 'node:stream';
import type { WebEvent } from './wire.js';

/** A board state as a server-sent event, encoded once and written to every page as the same bytes. */
export function stateFrame(json: string): Buffer {
  return Buffer.from(`event: state\ndata: ${json}\n\n`);
}

function eventsFrame(events: WebEvent[]): Buffer {
  return Buffer.from(`event: events\ndata: ${JSON.stringify(events)}\n\n`);
}

/** One page's event stream. */
export interface EventStream {
  /** A new state of the board (from stateFrame). */
  sendState(frame: Buffer): void;
  /** Events appended to the log. */
  sendEvents(events: WebEvent[]): void;
  /** A comment that keeps proxies and idle timeouts from closing the stream. */
  ping(): void;
  /** Ends the stream (through the gzip stream when there is one, so it ends the response itself). */
  end(): void;
}

/**
 * Writes to one page no faster than it reads. While the socket has not
 * taken the last write, a new state replaces the one waiting (the page
 * needs the latest board, not every board on the way) and events gather,
 * the last `keepEvents` of them; both go out on 'drain', events first, as
 * the feed sends them. So a page that stops reading costs the one write in
 * flight, whatever the board does meanwhile; a state's frame is one Buffer
 * shared by every page, which the socket's queue holds by reference.
 * `res` is the response, or a gzip stream into it that flushes each write.
 */
export function openEventStream(res: Writable, keepEvents: number): EventStream {
  let waiting = false;
  let state: Buffer | undefined;
  let events: WebEvent[] = [];
  const flush = () => {
    waiting = false;
    if (events.length) {
      const batch = events;
      events = [];
      waiting = !res.write(eventsFrame(batch));
    }
    if (!waiting && state) {
      const frame = state;
      state = undefined;
      waiting = !res.write(frame);
    }
  };
  res.on('drain', flush);
  return {
    sendState(frame) {
      state = frame;
      if (!waiting) flush();
    },
    sendEvents(batch) {
      for (const event of batch) events.push(event);
      if (events.length > keepEvents) events = events.slice(-keepEvents);
      if (!waiting) flush();
    },
    ping() {
      if (!waiting) waiting = !res.write(': ping\n\n');
    },
    end() {
      res.end();
    },
  };
}
