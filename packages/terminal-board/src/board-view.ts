import { createElement as h, useEffect, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { Box, Text, useApp, useInput, useStdout, type Key } from 'ink';
import { countTasks, inReview } from '@dotasks/core';
import { fitWidth, printable } from '@dotasks/core/terminal';
import {
  COLUMN_TITLES,
  buildColumns,
  cardDetails,
  cardHeading,
  nextPriorityFilter,
  describeEvent,
  moveSelection,
  scrollStart,
  settleSelection,
  type Card,
  type ColumnKey,
  type Columns,
  type Selection,
} from './board-model.js';
import type { BoardSource, BoardState } from './board-source.js';
import { renderDetail } from './task-detail.js';

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
  /** What the key `a` does: approve a task waiting for review (`tasks approve`). */
  approve?(id: number): Promise<string>;
  /** What the key `x` does, once its note is typed: send a task waiting for review back (`tasks reject --note`). */
  reject?(id: number, note: string): Promise<string>;
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
  /** Show the Review column even while nothing waits for review (config.json's "review"). */
  reviewLane?: boolean;
}

type Mode = 'board' | 'detail' | 'search' | 'note';

const KEYS_HELP = '←↓↑→/hjkl move · Enter show · s start · d done · r release · n note · p priority · / search · q quit';
/** The key line of a board that uses review: its two keys come first, where a narrow terminal still shows them. */
const REVIEW_KEYS_HELP = 'a approve · x reject · ←↓↑→/hjkl move · Enter show · s start · d done · r release · n note · p priority · / search · q quit';

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
 * the board draws passes through here or through `detailLine` (task-detail.ts).
 */
function fit(text: string, width: number): string {
  return fitWidth(printable(text), width);
}

/** A note being typed (mode 'note'), and the task it is for, fixed when `n` was pressed; `reject`: the note of a rejection (`x`). */
interface Draft {
  id: number;
  text: string;
  reject?: boolean;
}

/** The status line's message: the outcome of the last key. */
interface Message {
  text: string;
  error?: boolean;
}

/**
 * The view's state as the keys of one read left it. The handler may see
 * several keys of one read (typed ahead, key repeat): it works on this,
 * not on the render's values; each render starts it from the render's.
 */
interface LiveView {
  mode: Mode;
  selection: Selection;
  priority: number | undefined;
  draft: Draft | undefined;
}

/** What the key handler works with: the view's state and its setters, the columns on screen, and what a key can do. */
interface KeyContext {
  readonly live: LiveView;
  readonly columns: Columns;
  /** The search as this render has it (Esc clears a search only when there is one). */
  readonly search: string;
  readonly actions: BoardActions;
  readonly source: BoardSource;
  exit(): void;
  setMode(next: Mode): void;
  select(next: Selection): void;
  setPriority(next: number | undefined): void;
  setDraft(next: Draft | undefined): void;
  setSearch(update: (search: string) => string): void;
  setMessage(message: Message): void;
  setDetailScroll(update: (scroll: number) => number): void;
}

/** The state of the view (not of the board): what the keys change. */
function useViewState() {
  const [mode, setMode] = useState<Mode>('board');
  const [search, setSearch] = useState('');
  const [priority, setPriority] = useState<number | undefined>(undefined);
  const [draft, setDraft] = useState<Draft | undefined>(undefined);
  const [selection, setSelection] = useState<Selection>({ column: 'ready', index: 0 });
  const [message, setMessage] = useState<Message | undefined>();
  const [detailScroll, setDetailScroll] = useState(0);
  const scroll = useRef<Record<ColumnKey, number>>({ ready: 0, blocked: 0, in_progress: 0, review: 0, done: 0 });
  const live = useRef<LiveView>({ mode, selection, priority, draft });
  const values = { mode, search, priority, draft, selection, message, detailScroll, scroll: scroll.current, live };
  return { ...values, setMode, setSearch, setPriority, setDraft, setSelection, setMessage, setDetailScroll };
}

/** The full-screen board: four columns, a status line with counts and the last events, and a key line. */
export function BoardApp(props: BoardAppProps): ReactNode {
  const { source, actions, color } = props;
  const state = useSyncExternalStore(source.subscribe, source.get);
  const now = useClock();
  const { columns: width, rows } = useTerminalSize();
  const { exit } = useApp();
  const view = useViewState();
  const { mode, search, priority, draft } = view;

  const columns = buildColumns(state.snapshot, {
    leases: state.leases,
    completedSeq: state.completedSeq,
    search,
    priority,
    reviewLane: props.reviewLane,
    branches: state.branches,
  });
  const selected = settleSelection(view.selection, columns);
  const selectedCard = columns[selected.column][selected.index];

  const live = view.live.current;
  Object.assign(live, { mode, selection: selected, priority, draft });
  const keys: KeyContext = {
    live,
    columns,
    search,
    actions,
    source,
    exit,
    setMode: (next) => view.setMode((live.mode = next)),
    select: (next) => view.setSelection((live.selection = next)),
    setPriority: (next) => view.setPriority((live.priority = next)),
    setDraft: (next) => view.setDraft((live.draft = next)),
    setSearch: view.setSearch,
    setMessage: view.setMessage,
    setDetailScroll: view.setDetailScroll,
  };
  useInput((input: string, key: Key) => onRead(keys, input, key));

  // One line short of the screen: a frame as tall as the terminal makes Ink clear the whole screen on every redraw.
  const height = Math.max(8, rows - 1);
  const bodyHeight = height - 4;
  const title = `tasks board · ${props.boardDir} · acting as ${props.owner}${search ? ` · search: ${search}` : ''}${priority !== undefined ? ` · P${priority} only` : ''}`;
  const header = h(Box, { height: 1 }, h(Text, { bold: color, wrap: 'truncate-end' }, fit(title, width)));
  const body =
    mode === 'detail' && selectedCard
      ? renderDetail(selectedCard, state, { width, height: bodyHeight, scroll: view.detailScroll, now, color })
      : renderColumns(columns, selected, { width, height: bodyHeight, now, color, scroll: view.scroll });
  return h(Box, { flexDirection: 'column', width, height }, header, body, ...renderStatus(state, columns, view, width, color));
}

/** The three lines under the columns: the board's counts, the last events, and the key line (or the search, the note, a message). */
function renderStatus(
  state: BoardState,
  columns: Columns,
  view: { mode: Mode; search: string; draft?: Draft; message?: Message },
  width: number,
  color: boolean,
): ReactNode[] {
  const { mode, search, draft, message } = view;
  const reviewing = columns.shown.includes('review');
  const counts = countTasks(state.snapshot);
  const live = counts.total - counts.deleted;
  const waiting = reviewing ? state.snapshot.tasks.filter(inReview).length : 0;
  const summary = [
    `${counts.completed}/${live} done`,
    `${counts.in_progress - waiting} in progress`,
    ...(reviewing ? [`${waiting} in review`] : []),
    // As the columns stand them (countTasks counts a parent waiting for its children as neither, and an assigned task as not ready).
    `${columns.pending.ready} ready`,
    `${columns.pending.blocked} blocked`,
    ...(state.snapshot.problems.length ? [`${state.snapshot.problems.length} bad file${state.snapshot.problems.length > 1 ? 's' : ''}`] : []),
  ].join(' · ');
  const eventsLine = state.events.length ? state.events.slice(-4).reverse().map(describeEvent).join(' · ') : '(no events yet)';
  const footerText =
    mode === 'search'
      ? `search: ${search}▏ (Enter keeps the filter, Esc clears it)`
      : mode === 'note' && draft
        ? draft.reject
          ? `reject #${draft.id}, what to fix: ${draft.text}▏ (Enter sends it back, Esc keeps it in review)`
          : `note #${draft.id}: ${draft.text}▏ (Enter saves, Esc drops it)`
        : (message?.text ?? (state.error ? `tasks: ${state.error}` : reviewing ? REVIEW_KEYS_HELP : KEYS_HELP));
  const footerIsError = mode !== 'search' && mode !== 'note' && (message ? message.error : Boolean(state.error));
  return [
    h(Text, { wrap: 'truncate-end' }, fit(summary, width)),
    h(Text, { wrap: 'truncate-end', dimColor: color }, fit(`last: ${eventsLine}`, width)),
    h(Text, { wrap: 'truncate-end', color: color && footerIsError ? 'red' : undefined }, fit(footerText, width)),
  ];
}

/** One key, by the mode the keys before it in the same read left. */
/**
 * One read of the terminal: several keys when typed ahead or pasted. On the
 * board each is a key of its own; once one opens the search or a note, the
 * rest of the read is that line's text (`nhello` is a note "hello").
 */
function onRead(keys: KeyContext, input: string, key: Key): void {
  const plain = !key.ctrl && !key.meta && !key.return && !key.escape && !key.tab;
  if (!plain || input.length <= 1 || typing(keys.live.mode)) return onKey(keys, input, key);
  const chars = [...input];
  for (let i = 0; i < chars.length; i++) {
    onKey(keys, chars[i], key);
    if (typing(keys.live.mode) && i + 1 < chars.length) return onKey(keys, chars.slice(i + 1).join(''), key);
  }
}

const typing = (mode: Mode) => mode === 'search' || mode === 'note';

function onKey(keys: KeyContext, input: string, key: Key): void {
  const mode = keys.live.mode;
  if (mode === 'note') return onNoteKey(keys, input, key);
  if (mode === 'search') return onSearchKey(keys, input, key);
  if (input === 'q') return keys.exit();
  if (mode === 'detail') return onDetailKey(keys, input, key);
  onBoardKey(keys, input, key);
}

function onNoteKey(keys: KeyContext, input: string, key: Key): void {
  const note = keys.live.draft;
  if (!note) return keys.setMode('board');
  if (key.return) saveNote(keys, note);
  else if (key.escape) {
    keys.setDraft(undefined);
    keys.setMode('board');
    keys.setMessage({ text: note.reject ? `#${note.id} stays in review` : 'note dropped' });
  } else if (key.backspace || key.delete) keys.setDraft({ ...note, text: note.text.slice(0, -1) });
  else if (input && !key.ctrl && !key.meta) keys.setDraft({ ...note, text: note.text + input });
}

function onSearchKey(keys: KeyContext, input: string, key: Key): void {
  if (key.return) keys.setMode('board');
  else if (key.escape) {
    keys.setSearch(() => '');
    keys.setMode('board');
  } else if (key.backspace || key.delete) keys.setSearch((s) => s.slice(0, -1));
  else if (input && !key.ctrl && !key.meta) keys.setSearch((s) => s + input);
}

function onDetailKey(keys: KeyContext, input: string, key: Key): void {
  if (key.escape || key.return || key.leftArrow || input === 'h') keys.setMode('board');
  else if (key.downArrow || input === 'j') keys.setDetailScroll((n) => n + 1);
  else if (key.upArrow || input === 'k') keys.setDetailScroll((n) => Math.max(0, n - 1));
  else onTaskKey(keys, input);
}

function onBoardKey(keys: KeyContext, input: string, key: Key): void {
  const { columns } = keys;
  const at = settleSelection(keys.live.selection, columns);
  const move = (dx: number, dy: number) => keys.select(moveSelection(at, columns, dx, dy));
  if (key.leftArrow || input === 'h') move(-1, 0);
  else if (key.rightArrow || input === 'l') move(1, 0);
  else if (key.upArrow || input === 'k') move(0, -1);
  else if (key.downArrow || input === 'j') move(0, 1);
  else if (key.return && columns[at.column][at.index]) {
    keys.select(at);
    keys.setDetailScroll(() => 0);
    keys.setMode('detail');
  } else if (input === '/') keys.setMode('search');
  else if (key.escape && keys.search) keys.setSearch(() => '');
  else if (input === 'p') {
    const next = nextPriorityFilter(keys.live.priority);
    keys.setPriority(next);
    keys.setMessage({ text: next === undefined ? 'showing every priority' : `showing P${next} only (p: next)` });
  } else onTaskKey(keys, input);
}

/** The keys that act on the selected task, on the board and in its detail. */
function onTaskKey(keys: KeyContext, input: string): void {
  if (input === 's') act(keys, 'start');
  else if (input === 'd') act(keys, 'done');
  else if (input === 'r') act(keys, 'release');
  else if (input === 'n') startNote(keys);
  else if (input === 'a') approveSelected(keys);
  else if (input === 'x') startNote(keys, true);
}

/** `a`: approves the selected task (the core refuses one that does not wait for review, or is the acting owner's own). */
function approveSelected(keys: KeyContext): void {
  const card = selectedCardNow(keys);
  if (!card) return keys.setMessage({ text: 'no task selected to approve' });
  if (!keys.actions.approve) return keys.setMessage({ text: 'approving is not available here', error: true });
  keys.setMessage({ text: `approve #${card.task.id} …` });
  report(keys, keys.actions.approve(card.task.id));
}

/** The selected card as the keys of this read left the selection. */
function selectedCardNow(keys: KeyContext): Card | undefined {
  const at = settleSelection(keys.live.selection, keys.columns);
  return keys.columns[at.column][at.index];
}

/** Shows an action's answer (or its error) on the status line once it comes. */
function report(keys: KeyContext, answer: Promise<string>): void {
  answer.then(
    (text) => keys.setMessage({ text: text.split('\n').join(' · ') }),
    (error: unknown) => keys.setMessage({ text: `tasks: ${(error as Error).message}`, error: true }),
  );
  // The write is seen through the file notifications anyway; reading now saves the debounce.
  setTimeout(() => keys.source.refresh(), 0);
}

function act(keys: KeyContext, name: 'start' | 'done' | 'release'): void {
  const card = selectedCardNow(keys);
  if (!card) return keys.setMessage({ text: `no task selected to ${name}` });
  const id = card.task.id;
  keys.setMessage({ text: `${name} #${id} …` });
  report(keys, keys.actions[name](id));
}

/** `n`: a one-line input for a note on the selected task; Enter saves it through the store, Esc drops it. `x` (reject): the note of a rejection. */
function startNote(keys: KeyContext, reject = false): void {
  const card = selectedCardNow(keys);
  if (!card) return keys.setMessage({ text: `no task selected to ${reject ? 'reject' : 'note'}` });
  if (!(reject ? keys.actions.reject : keys.actions.note))
    return keys.setMessage({ text: `${reject ? 'rejecting' : 'notes'} ${reject ? 'is' : 'are'} not available here`, error: true });
  if (reject && !inReview(card.task)) return keys.setMessage({ text: `#${card.task.id} does not wait for review`, error: true });
  keys.setDraft({ id: card.task.id, text: '', ...(reject ? { reject } : {}) });
  keys.setMode('note');
}

function saveNote(keys: KeyContext, note: Draft): void {
  keys.setMode('board');
  keys.setDraft(undefined);
  if (!note.text.trim()) return keys.setMessage({ text: note.reject ? `a rejection needs a note: #${note.id} stays in review` : 'empty note: nothing saved' });
  keys.setMessage({ text: `${note.reject ? 'reject' : 'note'} #${note.id} …` });
  report(keys, note.reject ? keys.actions.reject!(note.id, note.text) : keys.actions.note!(note.id, note.text));
}

interface LayoutOptions {
  width: number;
  height: number;
  now: number;
  color: boolean;
}

const COLUMN_COLORS: Record<ColumnKey, string> = { ready: 'cyan', blocked: 'gray', in_progress: 'yellow', review: 'magenta', done: 'green' };

function renderColumns(columns: Columns, selected: Selection, options: LayoutOptions & { scroll: Record<ColumnKey, number> }): ReactNode {
  const columnWidth = Math.max(12, Math.floor(options.width / columns.shown.length));
  const inner = columnWidth - 2;
  const room = Math.max(1, options.height - 3); // borders and the title line
  return h(
    Box,
    { flexDirection: 'row', height: options.height },
    ...columns.shown.map((key) => {
      const cards = columns[key];
      const isSelectedColumn = selected.column === key;
      // A child's lines stand under its parent's: its details indented as deep as its title.
      const lines = cards.map((card) => [cardHeading(card), ...cardDetails(card, key, options.now).map((line) => '  '.repeat(card.depth ?? 0) + line)]);
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
