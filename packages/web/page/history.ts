import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { WebState, WebTask, WebTaskRef } from '../src/wire';
import type { Notice } from './act';
import { readHistory, readTask } from './api';
import { doneOrder } from './model';

/** How many completed tasks "show more" asks the server for at a time. */
const MORE = 100;

/** Where the Done column's next page starts: after `before`, for the search `q` ('' for none); `more` while the server has further ones. */
interface Cursor {
  q: string;
  before?: number;
  more: boolean;
  loading: boolean;
}

/** What the page knows of the history beyond the state, and how to get more. */
export interface PageHistory {
  /** Every task the page holds: the state's and the completed ones it asked for (the state's win). */
  tasks: WebTask[];
  /** Those by id, for the panel. */
  full: Map<number, WebTask>;
  /** Every task the page can name (the tasks, and the closed tasks they name). */
  names: Map<number, WebTaskRef>;
  /** The Done column has more on the server (for the search, when one is typed). */
  more: boolean;
  loading: boolean;
  /** Asks the server for the Done column's next page. */
  loadMore(): void;
  /** Asks the server for one task the page does not hold; false when the board has no such task. */
  loadTask(id: number): Promise<boolean>;
}

/**
 * The history on demand (docs/decisions.md, "The web board's history on
 * demand"): the state holds the open work and the latest completions; the
 * Done column asks for more a page at a time, a search asks the server for
 * the completed tasks it finds, and a task opened by its id is fetched. What
 * was fetched stays while the page is open, and so do the completions a new
 * state no longer holds (they fell out of its latest ones); a deletion on the
 * board clears it all, since a deleted task must leave the page.
 */
export function useHistory(state: WebState | undefined, query: string, say: (notice: Notice) => void): PageHistory {
  const [loaded, setLoaded] = useState<Map<number, WebTask>>(() => new Map());
  const [named, setNamed] = useState<Map<number, WebTaskRef>>(() => new Map());
  // Counts the deletions seen: the pages start again after one.
  const [reset, setReset] = useState(0);
  const previous = useRef<WebState | undefined>(undefined);

  const keep = useCallback((tasks: WebTask[], refs: WebTaskRef[]) => {
    if (tasks.length) setLoaded((m) => new Map([...m, ...tasks.map((t) => [t.id, t] as const)]));
    if (refs.length) setNamed((m) => new Map([...m, ...refs.map((r) => [r.id, r] as const)]));
  }, []);

  useEffect(() => {
    const before = previous.current;
    previous.current = state;
    if (!state || !before) return;
    if (before.history.deleted !== state.history.deleted) {
      setLoaded(new Map());
      setNamed(new Map());
      setReset((n) => n + 1);
      return;
    }
    const held = new Set(state.tasks.map((t) => t.id));
    keep(
      before.tasks.filter((t) => t.column === 'done' && !held.has(t.id)),
      [],
    );
  }, [state]);

  const tasks = useMemo(() => {
    if (!state) return [];
    const held = new Set(state.tasks.map((t) => t.id));
    return [...state.tasks, ...[...loaded.values()].filter((t) => !held.has(t.id))];
  }, [state, loaded]);
  const full = useMemo(() => new Map(tasks.map((t) => [t.id, t])), [tasks]);
  const names = useMemo(() => {
    const out = new Map<number, WebTaskRef>(named);
    for (const r of state?.refs ?? []) out.set(r.id, r);
    for (const t of tasks) out.set(t.id, t);
    return out;
  }, [state, named, tasks]);

  const { more, loading, loadMore } = useHistoryPages(state, tasks, query, keep, say, reset);
  const loadTask = async (id: number) => {
    try {
      const answer = await readTask(id);
      if (!answer) return false;
      keep([answer.task], answer.refs);
      return true;
    } catch (error) {
      say({ kind: 'error', text: (error as Error).message });
      return false;
    }
  };
  return { tasks, full, names, more, loading, loadMore, loadTask };
}

/** The Done column's pages: where the next one starts, for the search or without one, and asking for it. */
function useHistoryPages(
  state: WebState | undefined,
  tasks: WebTask[],
  query: string,
  keep: (tasks: WebTask[], refs: WebTaskRef[]) => void,
  say: (notice: Notice) => void,
  reset: number,
): Pick<PageHistory, 'more' | 'loading' | 'loadMore'> {
  const [cursor, setCursor] = useState<Cursor>({ q: '', more: true, loading: false });
  const q = query.trim();
  const fetchPage = useCallback(
    async (from: Cursor) => {
      setCursor({ ...from, loading: true });
      try {
        const page = await readHistory({ before: from.before, limit: MORE, q: from.q || undefined });
        if (!page) throw new Error('the server no longer has the task the Done column ended at: reload the page');
        keep(page.tasks, page.refs);
        setCursor((now) => (now.q === from.q ? { q: from.q, before: page.tasks.at(-1)?.id ?? from.before, more: page.more, loading: false } : now));
      } catch (error) {
        say({ kind: 'error', text: (error as Error).message });
        setCursor((now) => (now.q === from.q ? { ...from, loading: false } : now));
      }
    },
    [keep, say],
  );

  // A search asks the server for the completed tasks it finds, once the typing stops.
  useEffect(() => {
    if (!q) {
      setCursor({ q: '', more: true, loading: false });
      return;
    }
    setCursor({ q, more: true, loading: true });
    const timer = window.setTimeout(() => void fetchPage({ q, more: true, loading: false }), 250);
    return () => window.clearTimeout(timer);
  }, [q]);

  useEffect(() => setCursor({ q, more: true, loading: false }), [reset]);

  const doneHeld = useMemo(() => tasks.filter((t) => t.column === 'done').sort(doneOrder), [tasks]);
  const more = q ? cursor.q === q && cursor.more : doneHeld.length < (state?.history.completed ?? 0);
  const loadMore = () => {
    if (cursor.loading) return;
    // Without a search the next page starts after the last completed task the page holds.
    void fetchPage(q ? cursor : { q: '', before: doneHeld.at(-1)?.id, more: true, loading: false });
  };
  return { more, loading: cursor.loading, loadMore };
}
