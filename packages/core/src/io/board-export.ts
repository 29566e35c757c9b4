import { isClosed, type TaskNote } from '../format/format.js';
import { openBlockers } from '../graph/graph.js';
import { boardLookup, hierarchyOf } from '../graph/hierarchy.js';
import { filterTasks, planningTags, renderSummary } from '../views/render.js';
import { toTaskView } from '../views/task-view.js';
import { printableTask } from '../views/printable.js';
import { cutGraphemes } from '../views/graphemes.js';
import type { BoardSnapshot } from '../store.js';

/** `tasks export`: the board for reports and other tools. */

export type ExportFormat = 'json' | 'jsonl' | 'markdown';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['json', 'jsonl', 'markdown'];

export interface ExportOptions {
  /** Include deleted tasks (hidden by default). */
  all?: boolean;
}

/**
 * The board in a format: `json` is `{"tasks": [TaskView…]}` (the `--json`
 * shape of `tasks list`), `jsonl` one TaskView a line, `markdown` a checklist
 * with descriptions that reads well in a pull request or an issue: a
 * priority other than the default and the labels after the subject as in
 * `tasks list` (`P0 #ui`), the file scope after the state, the parent
 * (`part of #1`) and a parent's progress (`1/2 done`), and the notes
 * under the description, oldest first, one line each. Markdown is read on
 * terminals as often as in files, so its texts are the printable ones
 * (printable.ts: escape sequences, bidi controls and invisible characters
 * shown escaped); json and jsonl keep the bytes.
 */
export function exportBoard(snapshot: BoardSnapshot, format: ExportFormat, options: ExportOptions = {}): string {
  // Knows each task's open children: a parent waits for them, so it is not ready (docs/protocol.md, "Parents").
  const lookup = boardLookup(snapshot);
  const hierarchy = hierarchyOf(snapshot);
  const tasks = filterTasks(snapshot, { all: options.all });
  if (format === 'json') return JSON.stringify({ tasks: tasks.map((t) => toTaskView(t, lookup)) }, null, 2);
  if (format === 'jsonl') return tasks.map((t) => JSON.stringify(toTaskView(t, lookup))).join('\n');
  const lines = ['# Tasks', ''];
  if (tasks.length === 0) lines.push('No tasks.');
  else lines.push(renderSummary(snapshot), '');
  for (const t of tasks.map(printableTask)) {
    const notes: string[] = [];
    if (t.status === 'in_progress') notes.push(`in progress${t.owner ? ` by ${t.owner}` : ''}${t.activeForm ? `: ${t.activeForm}` : ''}`);
    if (t.status === 'deleted') notes.push('deleted');
    if (!isClosed(t.status)) {
      const open = openBlockers(t, lookup);
      const children = t.status === 'pending' ? (lookup.openChildren?.(t.id) ?? []) : [];
      if (open.length) notes.push(`blocked by ${open.map((id) => `#${id}`).join(', ')}`);
      if (children.length) notes.push(`waits for its children ${children.map((id) => `#${id}`).join(', ')}`);
      else if (!open.length && t.status === 'pending' && t.owner === '') notes.push('ready');
      if (t.status === 'pending' && t.owner) notes.push(`owner: ${t.owner}`);
    }
    if (t.parent !== undefined) notes.push(`part of #${t.parent}`);
    const progress = hierarchy.progress(t.id);
    if (progress) notes.push(`${progress.done}/${progress.total} done`);
    if (t.paths?.length) notes.push(`paths ${t.paths.map(codeSpan).join(', ')}`);
    const subject = t.status === 'deleted' ? `~~${markdownText(t.subject)}~~` : markdownText(t.subject);
    const tags = markdownText(planningTags(t));
    lines.push(`- [${t.status === 'completed' ? 'x' : ' '}] #${t.id} ${subject}${tags}${notes.length ? ` — ${notes.join('; ')}` : ''}`);
    if (t.description.trim()) for (const l of t.description.trimEnd().split('\n')) lines.push(l.trim() ? `  ${l}` : '');
    for (const note of t.notes ?? []) lines.push(`  - ${noteLine(note)}`);
  }
  return lines.join('\n');
}

/** Longer notes (a worker's failure output) are cut, between graphemes: the export summarises, `tasks show` has the rest. */
const NOTE_CHARS = 200;

/** `note by ann, 2026-01-01 10:15Z: text`: a note's first line, escaped, with how many lines were left out. */
function noteLine(note: TaskNote): string {
  const [first, ...rest] = note.text.trim().split('\n');
  const more = rest.filter((l) => l.trim()).length;
  const text = cutGraphemes(first, NOTE_CHARS);
  const at = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(note.at);
  return `note by ${markdownText(note.owner || 'nobody')}${at ? `, ${at[1]} ${at[2]}Z` : ''}: ${markdownText(text)}${more ? ` (+${more} more line${more === 1 ? '' : 's'})` : ''}`;
}

/** A glob as inline code (so `*` stays a star), in a span long enough for the backticks it holds. */
function codeSpan(text: string): string {
  const fence = '`'.repeat((text.match(/`+/g) ?? []).reduce((longest, run) => Math.max(longest, run.length), 0) + 1);
  return fence.length > 1 ? `${fence} ${text} ${fence}` : `${fence}${text}${fence}`;
}

/** Keeps a subject from turning into Markdown syntax it did not mean. */
function markdownText(text: string): string {
  return text.replace(/([\\`*_[\]<>|])/g, '\\$1');
}
