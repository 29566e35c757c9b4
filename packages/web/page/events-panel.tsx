import { useMemo } from 'preact/hooks';
import type { WebEvent } from '../src/wire';
import { clock, describeEvent, eventMatches } from './model';

interface EventsPanelProps {
  events: WebEvent[];
  query: string;
  found: Set<number> | undefined;
  open: (id: number) => void;
}

/** The event log as it grows (the server follows `.runtime/events.jsonl`), newest first, filtered by the search box. */
export function EventsPanel({ events, query, found, open }: EventsPanelProps) {
  const shown = useMemo(
    () =>
      events
        .filter((e) => eventMatches(e, query, found))
        .slice(-200)
        .reverse(),
    [events, query, found],
  );
  return (
    <aside class="events" aria-label="events">
      <h2>
        Events <span class="count">{events.length ? `#${events[events.length - 1].seq}` : ''}</span>
      </h2>
      <ol>
        {shown.map((e) => (
          <li key={e.seq} class={`ev ${e.type.replace(/\./g, '-')}`} data-seq={e.seq}>
            <span class="muted">{clock(e.at)}</span> <b>{e.type}</b>{' '}
            {e.task !== undefined && (
              <button class="link" onClick={() => open(e.task!)}>
                #{e.task}
              </button>
            )}
            {e.owner && <span> by {e.owner}</span>} <span class="muted">{describeEvent(e)}</span>
          </li>
        ))}
        {shown.length === 0 && <li class="muted">{events.length ? 'nothing found' : 'no events yet'}</li>}
      </ol>
    </aside>
  );
}
