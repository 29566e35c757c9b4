import { createElement as h, useEffect, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { Box, Text, useApp, useInput, useStdout, type Key } from 'ink';
import { countTasks, openBlockers, type Task } from '@dotasks/core';
import { fitWidth, printable } from '@dotasks/core/terminal';
import {
  COLUMN_KEYS,
  COLUMN_TITLES,
  buildColumns,
  cardDetails,
  cardTitle,
  nextPriorityFilter,
  describeEvent,
  leaseLeft,
  moveSelection,
  notesOf,
  scrollStart,
  settleSelection,
  worktreeOf,
  type Card,
  type ColumnKey,
  type Columns,
  type Selection,
} from './board-model.js';
import type { BoardSource, BoardState } from './board-source.js';

/**
 * The Ink view of the board, written with createElement rather than JSX so
 * that it is plain TypeScript like the rest of the repository (the lint and
 * the test typecheck read .ts files).
 */

/** What the keys `s`, `d` and `r` do: the CLI passes its own start, done and release commands, as the acting owner. */
export interface BoardActions {
  start(id: number): Promise<string>;
  done(id: number): Promise<string>;
  release(id: number): Promise<string>;
  /** What the key `n` does: add a note to the task (the CLI passes `tasks note`); without it `n` says notes are not available. */
  note?(id: number, text: string): Promise<string>;
}

/** Props of BoardApp. */
export interface BoardAppProps {
  source: BoardSource;
  actions: BoardActions;
  /** The acting owner, shown in the header. */
  owner: string;
  /** The board folder, shown in the header. */
  boardDir: string;
  /** Colours and inverse video; false under NO_COLOR. */
  color: boolean;
}

type Mode = 'board' | 'detail' | 'search' | 'note';

const KEYS_HELP = '←↓↑→/hjkl move · Enter show · s start · d done · r release · n note · p priority · / search · q quit';

function useTerminalSize(): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const measure = () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const [size, setSize] = useState(measure);
  useEffect(() => {
    const onResize = () => setSize(measure());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}

/** Re-renders every second, so lease times count down (no files are read for it). */
function useClock(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/**
 * A line as the board shows it: printable (a task's escape sequences, bidi
 * controls and invisible characters shown escaped, never sent to the
 * terminal) and cut to `width` cells between grapheme clusters. Every text
 * the board draws passes through here or through `detailLine`.
 */
function fit(text: string, width: number): string {
  return fitWidth(printable(text), width);
}

/** A line of the detail view, which wraps instead of cutting: tabs become spaces (a terminal would jump to its own tab stops). */
function detailLine(text: string): string {
  return printable(text.replace(/\t/g, '    '));
}

/** The full-screen board: four columns, a status line with counts and the last events, and a key line. */
export function BoardApp(props: BoardAppProps): ReactNode {
  const { source, actions, color } = props;
  const state = useSyncExternalStore(source.subscribe, source.get);
  const now = useClock();
  const { columns: width, rows } = useTerminalSize();
  const { exit } = useApp();
  const [mode, setMode] = useState<Mode>('board');
  const [search, setSearch] = useState('');
  const [priority, setPriority] = useState<number | undefined>(undefined);
  // The note being typed (mode 'note'), and the task it is for, fixed when `n` was pressed.
  const [draft, setDraft] = useState<{ id: number; text: string } | undefined>(undefined);
  const [selection, setSelection] = useState<Selection>({ column: 'ready', index: 0 });
  const [message, setMessage] = useState<{ text: string; error?: boolean } | undefined>();
  const [detailScroll, setDetailScroll] = useState(0);
  const scroll = useRef<Record<ColumnKey, number>>({ ready: 0, blocked: 0, in_progress: 0, done: 0 });

  const columns = buildColumns(state.snapshot, { leases: state.leases, completedSeq: state.completedSeq, search, priority });
  const selected = settleSelection(selection, columns);
  const selectedCard = columns[selected.column][selected.index];

  // The handler may see several keys of one read (typed ahead, key repeat): it works on refs, not on this render's values.
  const current = useRef({ mode, selection: selected });
  current.current = { mode, selection: selected };
  const setModeNow = (next: Mode) => {
    current.current.mode = next;
    setMode(next);
  };
  const select = (next: Selection) => {
    current.current.selection = next;
    setSelection(next);
  };
  const cardAt = (at: Selection) => columns[at.column][at.index];

  const act = (name: 'start' | 'done' | 'release') => {
    const card = cardAt(settleSelection(current.current.selection, columns));
    if (!card) return setMessage({ text: `no task selected to ${name}` });
    const id = card.task.id;
    setMessage({ text: `${name} #${id} …` });
    actions[name](id).then(
      (text) => setMessage({ text: text.split('\n').join(' · ') }),
      (error: unknown) => setMessage({ text: `tasks: ${(error as Error).message}`, error: true }),
    );
    // The write is seen through the file notifications anyway; reading now saves the debounce.
    setTimeout(() => source.refresh(), 0);
  };

  /** `n`: a one-line input for a note on the selected task; Enter saves it through the store, Esc drops it. */
  const startNote = () => {
    const card = cardAt(settleSelection(current.current.selection, columns));
    if (!card) return setMessage({ text: 'no task selected to note' });
    if (!actions.note) return setMessage({ text: 'notes are not available here', error: true });
    setDraft({ id: card.task.id, text: '' });
    setModeNow('note');
  };
  const saveNote = (note: { id: number; text: string }) => {
    setModeNow('board');
    setDraft(undefined);
    if (!note.text.trim()) return setMessage({ text: 'empty note: nothing saved' });
    setMessage({ text: `note #${note.id} …` });
    actions.note!(note.id, note.text).then(
      (text) => setMessage({ text: text.split('\n').join(' · ') }),
      (error: unknown) => setMessage({ text: `tasks: ${(error as Error).message}`, error: true }),
    );
    setTimeout(() => source.refresh(), 0);
  };

  // The priority filter as the keys of one read left it (see `current`).
  const priorityNow = useRef(priority);
  priorityNow.current = priority;
  // The draft as typed so far, for keys of one read (see `current`).
  const draftNow = useRef(draft);
  draftNow.current = draft;
  const setDraftNow = (next: { id: number; text: string } | undefined) => {
    draftNow.current = next;
    setDraft(next);
  };

  const onKey = (input: string, key: Key) => {
    const at = settleSelection(current.current.selection, columns);
    const mode = current.current.mode;
    if (mode === 'note') {
      const note = draftNow.current;
      if (!note) return setModeNow('board');
      if (key.return) saveNote(note);
      else if (key.escape) {
        setDraftNow(undefined);
        setModeNow('board');
        setMessage({ text: 'note dropped' });
      } else if (key.backspace || key.delete) setDraftNow({ ...note, text: note.text.slice(0, -1) });
      else if (input && !key.ctrl && !key.meta) setDraftNow({ ...note, text: note.text + input });
      return;
    }
    if (mode === 'search') {
      if (key.return) setModeNow('board');
      else if (key.escape) {
        setSearch('');
        setModeNow('board');
      } else if (key.backspace || key.delete) setSearch((s) => s.slice(0, -1));
      else if (input && !key.ctrl && !key.meta) setSearch((s) => s + input);
      return;
    }
    if (input === 'q') return exit();
    if (mode === 'detail') {
      if (key.escape || key.return || key.leftArrow || input === 'h') setModeNow('board');
      else if (key.downArrow || input === 'j') setDetailScroll((n) => n + 1);
      else if (key.upArrow || input === 'k') setDetailScroll((n) => Math.max(0, n - 1));
      else if (input === 's') act('start');
      else if (input === 'd') act('done');
      else if (input === 'r') act('release');
      else if (input === 'n') startNote();
      return;
    }
    const move = (dx: number, dy: number) => select(moveSelection(at, columns, dx, dy));
    if (key.leftArrow || input === 'h') move(-1, 0);
    else if (key.rightArrow || input === 'l') move(1, 0);
    else if (key.upArrow || input === 'k') move(0, -1);
    else if (key.downArrow || input === 'j') move(0, 1);
    else if (key.return && cardAt(at)) {
      select(at);
      setDetailScroll(0);
      setModeNow('detail');
    } else if (input === '/') setModeNow('search');
    else if (key.escape && search) setSearch('');
    else if (input === 's') act('start');
    else if (input === 'd') act('done');
    else if (input === 'r') act('release');
    else if (input === 'n') startNote();
    else if (input === 'p') {
      const next = nextPriorityFilter(priorityNow.current);
      priorityNow.current = next;
      setPriority(next);
      setMessage({ text: next === undefined ? 'showing every priority' : `showing P${next} only (p: next)` });
    }
  };

  useInput((input: string, key: Key) => {
    const plain = !key.ctrl && !key.meta && !key.return && !key.escape && !key.tab;
    if (plain && input.length > 1 && current.current.mode !== 'search' && current.current.mode !== 'note') for (const char of input) onKey(char, key);
    else onKey(input, key);
  });

  // One line short of the screen: a frame as tall as the terminal makes Ink clear the whole screen on every redraw.
  const height = Math.max(8, rows - 1);
  const bodyHeight = height - 4;

  const header = h(
    Box,
    { height: 1 },
    h(
      Text,
      { bold: color, wrap: 'truncate-end' },
      fit(
        `tasks board · ${props.boardDir} · acting as ${props.owner}${search ? ` · search: ${search}` : ''}${priority !== undefined ? ` · P${priority} only` : ''}`,
        width,
      ),
    ),
  );

  const body =
    mode === 'detail' && selectedCard
      ? renderDetail(selectedCard, state, { width, height: bodyHeight, scroll: detailScroll, now, color })
      : renderColumns(columns, selected, { width, height: bodyHeight, now, color, scroll: scroll.current });

  const counts = countTasks(state.snapshot);
  const live = counts.total - counts.deleted;
  const summary = [
    `${counts.completed}/${live} done`,
    `${counts.in_progress} in progress`,
    `${counts.ready} ready`,
    `${counts.blocked} blocked`,
    ...(state.snapshot.problems.length ? [`${state.snapshot.problems.length} bad file${state.snapshot.problems.length > 1 ? 's' : ''}`] : []),
  ].join(' · ');
  const eventsLine = state.events.length ? state.events.slice(-4).reverse().map(describeEvent).join(' · ') : '(no events yet)';
  const footerText =
    mode === 'search'
      ? `search: ${search}▏ (Enter keeps the filter, Esc clears it)`
      : mode === 'note' && draft
        ? `note #${draft.id}: ${draft.text}▏ (Enter saves, Esc drops it)`
        : (message?.text ?? (state.error ? `tasks: ${state.error}` : KEYS_HELP));
  const footerIsError = mode !== 'search' && mode !== 'note' && (message ? message.error : Boolean(state.error));

  return h(
    Box,
    { flexDirection: 'column', width, height },
    header,
    body,
    h(Text, { wrap: 'truncate-end' }, fit(summary, width)),
    h(Text, { wrap: 'truncate-end', dimColor: color }, fit(`last: ${eventsLine}`, width)),
    h(Text, { wrap: 'truncate-end', color: color && footerIsError ? 'red' : undefined }, fit(footerText, width)),
  );
}

interface LayoutOptions {
  width: number;
  height: number;
  now: number;
  color: boolean;
}

const COLUMN_COLORS: Record<ColumnKey, string> = { ready: 'cyan', blocked: 'gray', in_progress: 'yellow', done: 'green' };

function renderColumns(columns: Columns, selected: Selection, options: LayoutOptions & { scroll: Record<ColumnKey, number> }): ReactNode {
  const columnWidth = Math.max(12, Math.floor(options.width / COLUMN_KEYS.length));
  const inner = columnWidth - 2;
  const room = Math.max(1, options.height - 3); // borders and the title line
  return h(
    Box,
    { flexDirection: 'row', height: options.height },
    ...COLUMN_KEYS.map((key) => {
      const cards = columns[key];
      const isSelectedColumn = selected.column === key;
      const lines = cards.map((card) => [cardTitle(card.task), ...cardDetails(card, key, options.now)]);
      const heights = lines.map((l) => l.length);
      const selectedIndex = isSelectedColumn ? selected.index : 0;
      const start = isSelectedColumn
        ? scrollStart(heights, selectedIndex, room, options.scroll[key])
        : Math.min(options.scroll[key], Math.max(0, cards.length - 1));
      options.scroll[key] = start;
      const children: ReactNode[] = [];
      let used = 0;
      if (start > 0) {
        children.push(h(Text, { key: 'up', dimColor: options.color }, fit(`↑ ${start} more`, inner)));
        used++;
      }
      let shown = start;
      for (let i = start; i < cards.length; i++) {
        const reserve = i < cards.length - 1 ? 1 : 0;
        if (used + heights[i] + reserve > room && i > start) break;
        const isSelected = isSelectedColumn && i === selected.index;
        children.push(
          h(
            Box,
            { key: cards[i].task.id, flexDirection: 'column' },
            ...lines[i].map((line, n) =>
              h(
                Text,
                {
                  key: n,
                  wrap: 'truncate-end',
                  inverse: options.color && isSelected,
                  bold: options.color && isSelected,
                  dimColor: options.color && !isSelected && n > 0,
                },
                fit(`${n === 0 ? (isSelected ? '› ' : '  ') : '    '}${line}`, inner),
              ),
            ),
          ),
        );
        used += heights[i];
        shown = i + 1;
      }
      if (shown < cards.length) children.push(h(Text, { key: 'down', dimColor: options.color }, fit(`↓ ${cards.length - shown} more`, inner)));
      if (cards.length === 0) children.push(h(Text, { key: 'empty', dimColor: options.color }, fit('  (none)', inner)));
      return h(
        Box,
        {
          key,
          flexDirection: 'column',
          width: columnWidth,
          height: options.height,
          borderStyle: isSelectedColumn ? 'bold' : 'single',
          borderColor: options.color ? COLUMN_COLORS[key] : undefined,
          overflow: 'hidden',
        },
        h(
          Text,
          { bold: options.color, color: options.color ? COLUMN_COLORS[key] : undefined, wrap: 'truncate-end' },
          fit(`${COLUMN_TITLES[key]} (${cards.length})`, inner),
        ),
        ...children,
      );
    }),
  );
}

function describeTaskRef(id: number, lookup: (id: number) => Task | undefined): string {
  const task = lookup(id);
  return task ? `#${id} ${task.subject} (${task.status.replace('_', ' ')})` : `#${id} (missing)`;
}

function renderDetail(card: Card, state: BoardState, options: LayoutOptions & { scroll: number }): ReactNode {
  const { task } = card;
  const lookup = (id: number) => state.snapshot.byId.get(id);
  const lines: string[] = [cardTitle(task), `status: ${task.status.replace('_', ' ')}${task.owner ? ` · owner: ${task.owner}` : ''}`];
  if (task.activeForm) lines.push(`now: ${task.activeForm}`);
  const left = leaseLeft(card.lease, options.now);
  if (left) lines.push(`lease: ${left}${card.lease?.pid ? ` · pid ${card.lease.pid}` : ''}${card.lease ? ` · host ${card.lease.host}` : ''}`);
  const worktree = worktreeOf(card);
  if (worktree) lines.push(`worktree: ${worktree}`);
  const open = task.status === 'pending' ? openBlockers(task, lookup) : [];
  lines.push(
    `blocked by: ${task.blockedBy.length ? task.blockedBy.map((id) => describeTaskRef(id, lookup)).join(', ') : '(none)'}${open.length ? ` · waiting for ${open.map((id) => `#${id}`).join(', ')}` : ''}`,
  );
  lines.push(`blocks: ${task.blocks.length ? task.blocks.map((id) => describeTaskRef(id, lookup)).join(', ') : '(none)'}`);
  for (const [key, value] of Object.entries(task.metadata ?? {})) lines.push(`meta.${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  lines.push('', ...(task.description ? task.description.split('\n') : ['(no description)']));
  const notes = notesOf(task);
  if (notes) lines.push('', `notes (${notes.length}):`, ...notes.map((note) => `- ${note}`));
  const room = Math.max(1, options.height - 2);
  const start = Math.min(options.scroll, Math.max(0, lines.length - 1));
  return h(
    Box,
    { flexDirection: 'column', height: options.height, width: options.width, borderStyle: 'single', overflow: 'hidden' },
    ...lines.slice(start, start + room).map((line, n) => h(Text, { key: n, wrap: 'wrap', bold: options.color && n + start === 0 }, detailLine(line) || ' ')),
  );
}
