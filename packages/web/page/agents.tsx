import { useMemo } from 'preact/hooks';
import type { WebEvent, WebState, WebTask } from '../src/wire';
import { LeaseLeft } from './kanban';
import { clock, describeEvent } from './model';

interface Agent {
  name: string;
  holds: WebTask[];
  assigned: WebTask[];
  done: number;
  events: WebEvent[];
}

interface AgentsProps {
  state: WebState;
  events: WebEvent[];
  offset: number;
  open: (id: number) => void;
}

/** Every owner on the board: what it holds, its leases counting down, where it works, what it did last. */
export function Agents({ state, events, offset, open }: AgentsProps) {
  const agents = useMemo(() => {
    const by = new Map<string, Agent>();
    const get = (name: string) => by.get(name) ?? by.set(name, { name, holds: [], assigned: [], done: 0, events: [] }).get(name)!;
    for (const t of state.tasks) {
      if (t.owner === '') continue;
      const agent = get(t.owner);
      if (t.status === 'in_progress') agent.holds.push(t);
      else if (t.status === 'pending') agent.assigned.push(t);
      else if (t.status === 'completed') agent.done++;
    }
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i];
      const agent = e.owner ? by.get(e.owner) : undefined;
      if (agent && agent.events.length < 5) agent.events.push(e);
    }
    return [...by.values()].sort((a, b) => b.holds.length - a.holds.length || a.name.localeCompare(b.name));
  }, [state, events]);

  if (!agents.length) return <p class="empty">Nobody owns a task yet.</p>;
  return (
    <div class="agents">
      {agents.map((a) => (
        <section class="agent" data-agent={a.name}>
          <h2>
            {a.name}{' '}
            <span class="muted">
              {a.holds.length ? `holds ${a.holds.length}` : 'holds nothing'} · {a.done} done
            </span>
          </h2>
          {a.holds.map((t) => (
            <div class="held">
              <button class="link" onClick={() => open(t.id)}>
                #{t.id}: {t.subject}
              </button>
              {t.activeForm && <span class="active"> — {t.activeForm}</span>}
              <div class="meta">
                {t.lease ? <LeaseLeft expiresAt={t.lease.expiresAt} offset={offset} /> : <span class="lease never">no claim record</span>}
                {t.lease?.pid !== undefined && (
                  <span class="muted">
                    {' '}
                    · pid {t.lease.pid}@{t.lease.host}
                  </span>
                )}
              </div>
              {(t.branch || t.worktree) && (
                <div class="meta where">
                  {t.branch && <code>{t.branch}</code>} {t.worktree && <span class="path">{t.worktree}</span>}
                </div>
              )}
            </div>
          ))}
          {a.assigned.length > 0 && (
            <p class="meta">
              assigned:{' '}
              {a.assigned.map((t) => (
                <button class="link" onClick={() => open(t.id)}>
                  #{t.id}
                </button>
              ))}
            </p>
          )}
          <ol class="recent">
            {a.events.map((e) => (
              <li>
                <span class="muted">{clock(e.at)}</span> {e.type} {e.task !== undefined && `#${e.task}`} <span class="muted">{describeEvent(e)}</span>
              </li>
            ))}
            {a.events.length === 0 && <li class="muted">no recent events</li>}
          </ol>
        </section>
      ))}
    </div>
  );
}
