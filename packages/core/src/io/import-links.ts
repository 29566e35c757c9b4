/**
 * The soft links of an import (docs/protocol.md, "Links"): a source's
 * `related` and `discovered-from` relations between two tasks of the list
 * become the fields `related` and `discoveredFrom`/`discovered`, written on
 * both sides; a relation to a task the list does not have, or of a kind
 * without a field (beads' `parent-child`, Backlog.md's parent), stays in
 * `metadata.links` (board-import.ts).
 */
import type { Task } from '../format/format.js';
import { addLink, type LinkField } from '../format/task-links.js';

/** The relation kinds that are soft links, and the field of the task that names them. */
const LINK_TYPES: Readonly<Record<string, LinkField>> = { related: 'related', 'discovered-from': 'discoveredFrom', discovered: 'discovered' };

/** A source relation `{type, id}` of a task: whether it becomes a link field (the other task came along). */
export function becomesLinkField(link: { type: string; id: string }, resolve: (id: string) => number | undefined): boolean {
  return LINK_TYPES[link.type] !== undefined && resolve(link.id) !== undefined;
}

/** One task's relations as the import resolves them: its new id and the relations it states. */
export interface ImportedLinks {
  id: number;
  sourceId: string;
  subject: string;
  links?: { type: string; id: string }[];
}

/**
 * Writes the soft links among the imported tasks on both sides. Between two
 * tasks imported before, the board's links stand (as its edges do); a new
 * link to a task deleted on the board, or to the task itself, is dropped
 * with a warning.
 */
export function wireLinks(
  tasks: readonly ImportedLinks[],
  resolve: (id: string) => number | undefined,
  byId: ReadonlyMap<number, Task>,
  beforeIds: ReadonlySet<number>,
  warnings: string[],
): void {
  const other = { related: 'related', discoveredFrom: 'discovered', discovered: 'discoveredFrom' } as const;
  for (const t of tasks) {
    for (const link of t.links ?? []) {
      const field = LINK_TYPES[link.type];
      const to = resolve(link.id);
      if (field === undefined || to === undefined) continue;
      if (to === t.id) {
        warnings.push(`${t.sourceId} (${t.subject}): dropped a ${link.type} link to itself`);
        continue;
      }
      if (beforeIds.has(t.id) && beforeIds.has(to)) continue;
      // A link may only name a task that is not deleted (docs/protocol.md, "Links").
      const gone = [t.id, to].find((id) => byId.get(id)!.status === 'deleted');
      if (gone !== undefined) {
        warnings.push(`${t.sourceId} (${t.subject}): dropped a ${link.type} link: #${gone} is deleted${beforeIds.has(gone) ? ' on the board' : ''}`);
        continue;
      }
      addLink(byId.get(t.id)!, field, to);
      addLink(byId.get(to)!, other[field], t.id);
    }
  }
}
