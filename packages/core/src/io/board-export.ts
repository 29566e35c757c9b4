import { isClosed } from '../format/format.js';
import { openBlockers, type TaskLookup } from '../graph/graph.js';
import { filterTasks, renderSummary, toTaskView } from '../views/render.js';
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
 * with descriptions that reads well in a pull request or an issue.
 */
export function exportBoard(snapshot: BoardSnapshot, format: ExportFormat, options: ExportOptions = {}): string {
  const lookup: TaskLookup = (id) => snapshot.byId.get(id);
  const tasks = filterTasks(snapshot, { all: options.all });
  if (format === 'json') return JSON.stringify({ tasks: tasks.map((t) => toTaskView(t, lookup)) }, null, 2);
  if (format === 'jsonl') return tasks.map((t) => JSON.stringify(toTaskView(t, lookup))).join('\n');
  const lines = ['# Tasks', ''];
  if (tasks.length === 0) lines.push('No tasks.');
  else lines.push(renderSummary(snapshot), '');
  for (const t of tasks) {
    const notes: string[] = [];
    if (t.status === 'in_progress') notes.push(`in progress${t.owner ? ` by ${t.owner}` : ''}${t.activeForm ? `: ${t.activeForm}` : ''}`);
    if (t.status === 'deleted') notes.push('deleted');
    if (!isClosed(t.status)) {
      const open = openBlockers(t, lookup);
      if (open.length) notes.push(`blocked by ${open.map((id) => `#${id}`).join(', ')}`);
      else if (t.status === 'pending' && t.owner === '') notes.push('ready');
      if (t.status === 'pending' && t.owner) notes.push(`owner: ${t.owner}`);
    }
    const subject = t.status === 'deleted' ? `~~${markdownText(t.subject)}~~` : markdownText(t.subject);
    lines.push(`- [${t.status === 'completed' ? 'x' : ' '}] #${t.id} ${subject}${notes.length ? ` — ${notes.join('; ')}` : ''}`);
    if (t.description.trim()) for (const l of t.description.trimEnd().split('\n')) lines.push(l.trim() ? `  ${l}` : '');
  }
  return lines.join('\n');
}

/** Keeps a subject from turning into Markdown syntax it did not mean. */
function markdownText(text: string): string {
  return text.replace(/([\\`*_[\]<>|])/g, '\\$1');
}
