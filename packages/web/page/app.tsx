import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { WebEvent, WebState } from '../src/wire';
import type { Act, Notice } from './act';
import { follow, hasToken, write } from './api';
import { Agents } from './agents';
import { CreateForm } from './create-form';
import { EventsPanel } from './events-panel';
import { GraphView } from './graph-view';
import { useHistory } from './history';
import { Kanban } from './kanban';
import { keepUnchanged, matches, PRIORITIES } from './model';
import { TaskPanel } from './task-panel';

type Tab = 'board' | 'graph' | 'agents';
const KEEP_EVENTS = 500;

/** The board as the server sends it: the latest state, the recent events, whether the stream is up, the server clock's offset. */
function useBoardFeed() {
  const [state, setState] = useState<WebState>();
  const [events, setEvents] = useState<WebEvent[]>([]);
  const [connected, setConnected] = useState(false);
  const [offset, setOffset] = useState(0);
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
  return { state, events, connected, offset };
}

/** The open tab, kept in the address's `#` so a reload shows the same one. */
function useTab() {
  const [tab, setTab] = useState<Tab>(() => (location.hash === '#graph' ? 'graph' : location.hash === '#agents' ? 'agents' : 'board'));
  useEffect(() => {
    history.replaceState(null, '', `${location.pathname}${location.search}${tab === 'board' ? '' : `#${tab}`}`);
  }, [tab]);
  return [tab, setTab] as const;
}

/** The notice at the bottom of the page, gone after a while (an error stays longer); and `act`, which writes and says how it went. */
function useActions() {
  const [notice, setNotice] = useState<Notice>();
  const noticeTimer = useRef<number | undefined>(undefined);
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
  return { notice, dismiss: () => setNotice(undefined), say, act };
}

export function App() {
  const { state, events, connected, offset } = useBoardFeed();
  const [tab, setTab] = useTab();
  const [query, setQuery] = useState('');
  const [priority, setPriority] = useState<number>();
  const [selected, setSelected] = useState<number>();
  const [creating, setCreating] = useState(false);
  const { notice, dismiss, say, act } = useActions();
  const history = useHistory(state, query, say);

  // The search box and the priority filter (the terminal board's `p`) narrow the same set.
  const found = useMemo(() => {
    if (!state || (!query.trim() && priority === undefined)) return undefined;
    return new Set(history.tasks.filter((t) => matches(t, query) && (priority === undefined || t.priority === priority)).map((t) => t.id));
  }, [state, history.tasks, query, priority]);

  const selectedTask = selected === undefined ? undefined : history.full.get(selected);
  // A task the page does not hold (a completed one outside the Done column's pages): asked for once, else it is not on the board.
  const [missing, setMissing] = useState<number>();
  useEffect(() => {
    if (selected === undefined || selectedTask || !state) return;
    let current = true;
    void history.loadTask(selected).then((found) => current && !found && setMissing(selected));
    return () => {
      current = false;
    };
  }, [selected, selectedTask === undefined, state === undefined]);

  return (
    <div class="app">
      <TopBar {...{ tab, setTab, query, setQuery, priority, setPriority, connected, state }} create={() => setCreating(true)} />
      {!hasToken && <p class="warn">This page was opened without its token: open the URL that tasks serve printed.</p>}
      {state && state.problems.length > 0 && <Problems problems={state.problems} />}
      <div class="body">
        <main class="view">
          {!state ? (
            <p class="empty">Reading the board…</p>
          ) : tab === 'board' ? (
            <Kanban state={state} history={history} found={found} offset={offset} open={setSelected} act={act} say={say} />
          ) : tab === 'graph' ? (
            <GraphView state={state} found={found} open={setSelected} />
          ) : (
            <Agents state={state} events={events} offset={offset} open={setSelected} />
          )}
        </main>
        <EventsPanel events={events} query={query} found={found} open={setSelected} />
      </div>
      {selectedTask && (
        <TaskPanel
          key={selectedTask.id}
          task={selectedTask}
          byId={history.names}
          offset={offset}
          act={act}
          close={() => setSelected(undefined)}
          open={setSelected}
        />
      )}
      {selected !== undefined && !selectedTask && state && <MissingTask id={selected} loading={missing !== selected} close={() => setSelected(undefined)} />}
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
          <button class="close" onClick={dismiss} aria-label="dismiss">
            ×
          </button>
        </div>
      )}
    </div>
  );
}

interface TopBarProps {
  tab: Tab;
  setTab: (tab: Tab) => void;
  query: string;
  setQuery: (query: string) => void;
  priority: number | undefined;
  setPriority: (priority: number | undefined) => void;
  connected: boolean;
  state: WebState | undefined;
  create: () => void;
}

/** The tabs, the search box and the priority filter, New task, and whether the page follows the board. */
function TopBar({ tab, setTab, query, setQuery, priority, setPriority, connected, state, create }: TopBarProps) {
  return (
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
      <button class="primary" onClick={create}>
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
  );
}

/** The files the board could not read, with where. */
function Problems({ problems }: { problems: WebState['problems'] }) {
  return (
    <ul class="problems">
      {problems.map((p) => (
        <li>
          ! {p.file}
          {p.line !== undefined ? `:${p.line}:${p.column ?? 1}` : ''}: {p.message}
        </li>
      ))}
    </ul>
  );
}

/** The panel of a task the page does not hold: while it is asked for, then if the board does not have it (any more). */
function MissingTask({ id, loading, close }: { id: number; loading: boolean; close: () => void }) {
  return (
    <div class="panel" role="dialog" aria-label={`task #${id}`}>
      <button class="close" onClick={close} aria-label="close">
        ×
      </button>
      <p>{loading ? `Reading task #${id}…` : `Task #${id} is not on the board (deleted, or its file is not a valid task).`}</p>
    </div>
  );
}
