import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { WebEvent, WebState, WebWriteResult } from '../src/wire';
import { follow, hasToken, write } from './api';
import { Agents } from './agents';
import { CreateForm } from './create-form';
import { EventsPanel } from './events-panel';
import { GraphView } from './graph-view';
import { Kanban } from './kanban';
import { keepUnchanged, matches, PRIORITIES } from './model';
import { TaskPanel } from './task-panel';

type Tab = 'board' | 'graph' | 'agents';
const KEEP_EVENTS = 500;

/** A message at the bottom of the page: what a write did, or why it was refused. */
export interface Notice {
  kind: 'ok' | 'error';
  text: string;
}

/** What components call to change the board; refusals become a notice with the server's message. */
export type Act = (method: 'POST' | 'PATCH' | 'DELETE', path: string, body: unknown, done: string) => Promise<WebWriteResult | undefined>;

export function App() {
  const [state, setState] = useState<WebState>();
  const [events, setEvents] = useState<WebEvent[]>([]);
  const [connected, setConnected] = useState(false);
  const [tab, setTab] = useState<Tab>(() => (location.hash === '#graph' ? 'graph' : location.hash === '#agents' ? 'agents' : 'board'));
  const [query, setQuery] = useState('');
  const [priority, setPriority] = useState<number>();
  const [selected, setSelected] = useState<number>();
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState<Notice>();
  const [offset, setOffset] = useState(0);
  const noticeTimer = useRef<number | undefined>(undefined);

  useEffect(
    () =>
      follow({
        state: (next) => {
          setOffset(Date.parse(next.now) - Date.now());
          setState((previous) => keepUnchanged(previous, next));
        },
        events: (batch) => setEvents((previous) => [...previous, ...batch].slice(-KEEP_EVENTS)),
        connected: setConnected,
      }),
    [],
  );
  useEffect(() => {
    history.replaceState(null, '', `${location.pathname}${location.search}${tab === 'board' ? '' : `#${tab}`}`);
  }, [tab]);

  const say = useCallback((next: Notice) => {
    setNotice(next);
    window.clearTimeout(noticeTimer.current);
    noticeTimer.current = window.setTimeout(() => setNotice(undefined), next.kind === 'error' ? 12_000 : 4_000);
  }, []);

  const act: Act = useCallback(
    async (method, path, body, done) => {
      try {
        const result = await write(method, path, body);
        const unblocked = result.unblocked.length ? `; unblocked ${result.unblocked.map((id) => `#${id}`).join(', ')}` : '';
        say({ kind: 'ok', text: `${done}${unblocked}` });
        return result;
      } catch (error) {
        say({ kind: 'error', text: (error as Error).message });
        return undefined;
      }
    },
    [say],
  );

  // The search box and the priority filter (the terminal board's `p`) narrow the same set.
  const found = useMemo(() => {
    if (!state || (!query.trim() && priority === undefined)) return undefined;
    return new Set(state.tasks.filter((t) => matches(t, query) && (priority === undefined || t.priority === priority)).map((t) => t.id));
  }, [state, query, priority]);

  const byId = useMemo(() => new Map((state?.tasks ?? []).map((t) => [t.id, t])), [state]);
  const selectedTask = selected === undefined ? undefined : byId.get(selected);

  return (
    <div class="app">
      <header class="top">
        <h1>tasks</h1>
        <nav class="tabs" role="tablist">
          {(['board', 'graph', 'agents'] as Tab[]).map((t) => (
            <button role="tab" aria-selected={tab === t} class={tab === t ? 'tab on' : 'tab'} onClick={() => setTab(t)} data-tab={t}>
              {t === 'board' ? 'Board' : t === 'graph' ? 'Graph' : 'Agents'}
            </button>
          ))}
        </nav>
        <input
          class="search"
          type="search"
          placeholder="Search: #id, words, labels, notes, owner…"
          aria-label="search"
          value={query}
          onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
        />
        <select
          class="prio-filter"
          name="priority-filter"
          aria-label="priority filter"
          title="show one priority only"
          value={priority === undefined ? '' : String(priority)}
          onChange={(e) => {
            const value = (e.target as HTMLSelectElement).value;
            setPriority(value === '' ? undefined : Number(value));
          }}
        >
          <option value="">all priorities</option>
          {PRIORITIES.map((p) => (
            <option value={String(p)}>P{p} only</option>
          ))}
        </select>
        <button class="primary" onClick={() => setCreating(true)}>
          New task
        </button>
        <span class={connected ? 'live on' : 'live'} title={connected ? 'following the board' : 'reconnecting…'}>
          {connected ? 'live' : 'offline'}
        </span>
        {state && (
          <span class="who" title={state.board}>
            as <b>{state.actor}</b>
          </span>
        )}
      </header>
      {!hasToken && <p class="warn">This page was opened without its token: open the URL that tasks serve printed.</p>}
      {state && state.problems.length > 0 && (
        <ul class="problems">
          {state.problems.map((p) => (
            <li>
              ! {p.file}
              {p.line !== undefined ? `:${p.line}:${p.column ?? 1}` : ''}: {p.message}
            </li>
          ))}
        </ul>
      )}
      <div class="body">
        <main class="view">
          {!state ? (
            <p class="empty">Reading the board…</p>
          ) : tab === 'board' ? (
            <Kanban state={state} found={found} offset={offset} open={setSelected} act={act} say={say} />
          ) : tab === 'graph' ? (
            <GraphView state={state} found={found} open={setSelected} />
          ) : (
            <Agents state={state} events={events} offset={offset} open={setSelected} />
          )}
        </main>
        <EventsPanel events={events} query={query} found={found} open={setSelected} />
      </div>
      {selectedTask && (
        <TaskPanel key={selectedTask.id} task={selectedTask} byId={byId} offset={offset} act={act} close={() => setSelected(undefined)} open={setSelected} />
      )}
      {selected !== undefined && !selectedTask && state && (
        <div class="panel" role="dialog" aria-label={`task #${selected}`}>
          <button class="close" onClick={() => setSelected(undefined)} aria-label="close">
            ×
          </button>
          <p>Task #{selected} is not on the board (deleted, or its file is not a valid task).</p>
        </div>
      )}
      {creating && (
        <CreateForm
          act={act}
          close={(id) => {
            setCreating(false);
            if (id !== undefined) setSelected(id);
          }}
        />
      )}
      {notice && (
        <div class={`notice ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'} data-notice={notice.kind}>
          {notice.text}
          <button class="close" onClick={() => setNotice(undefined)} aria-label="dismiss">
            ×
          </button>
        </div>
      )}
    </div>
  );
}
