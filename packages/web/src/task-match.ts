import type { WebTask } from './wire.js';

/** What a search reads of a task. */
export type SearchedFields = Pick<WebTask, 'id' | 'subject' | 'labels' | 'description' | 'notes' | 'owner' | 'activeForm' | 'branch'>;

/**
 * True when the search text finds the task: `#12`, or words in the fields
 * `tasks search` reads (subject, labels, description, notes) or in its owner,
 * progress text or branch; every word must be somewhere. Shared by the page
 * (its search box) and the server (the history it searches on demand), so
 * both find the same tasks; it imports nothing, as the page's bundle needs.
 */
export function matches(task: SearchedFields, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const id = /^#?(\d+)$/.exec(q);
  if (id) return task.id === Number(id[1]);
  const notes = task.notes.map((n) => n.text).join('\n');
  const hay =
    `${task.subject}\n${task.labels.join('\n')}\n${task.description}\n${notes}\n${task.owner}\n${task.activeForm ?? ''}\n${task.branch ?? ''}`.toLowerCase();
  return q.split(/\s+/).every((word) => hay.includes(word));
}
