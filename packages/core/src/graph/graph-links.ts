/**
 * The soft links of `tasks graph` (docs/protocol.md, "Links"): `related`
 * and `discovered-from`, drawn apart from the edges (dotted, labelled, and
 * never on the critical path or in the text tree's order) since they block
 * nothing. graph-render.ts adds them to each format.
 */
import type { Task } from '../format/format.js';

/** A soft link between two shown tasks: `related` (`from` < `to`, once), or `discovered-from` (`from` was found while working on `to`). */
export interface GraphLink {
  from: number;
  to: number;
  type: 'related' | 'discovered-from';
}

/** The links between the shown tasks, from either side's word, once each, in id order. */
export function collectLinks(shown: readonly Task[]): GraphLink[] {
  const ids = new Set(shown.map((t) => t.id));
  const sides: GraphLink[] = [];
  const add = (from: number, to: number, type: GraphLink['type']) => {
    if (from !== to && ids.has(from) && ids.has(to)) sides.push({ from, to, type });
  };
  for (const t of shown) {
    for (const r of t.related ?? []) add(Math.min(t.id, r), Math.max(t.id, r), 'related');
    for (const source of t.discoveredFrom ?? []) add(t.id, source, 'discovered-from');
    for (const found of t.discovered ?? []) add(found, t.id, 'discovered-from');
  }
  // Sorted, then once each: both sides of a link name it (no key strings, a board's worth of them).
  sides.sort((a, b) => a.from - b.from || a.to - b.to || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  return sides.filter((l, i) => i === 0 || l.from !== sides[i - 1]!.from || l.to !== sides[i - 1]!.to || l.type !== sides[i - 1]!.type);
}

/** Mermaid: dotted, labelled, without an arrow for `related` (after the edges, so their linkStyle indexes stand). */
export function mermaidLinks(links: readonly GraphLink[]): string[] {
  return links.map((l) => (l.type === 'related' ? `  t${l.from} -. related .- t${l.to}` : `  t${l.from} -. found while on .-> t${l.to}`));
}

/** Graphviz dot: dotted, grey, labelled, and not pulling the layout's ranks (`constraint=false`). */
export function dotLinks(links: readonly GraphLink[]): string[] {
  return links.map((l) =>
    l.type === 'related'
      ? `  t${l.from} -> t${l.to} [style=dotted, dir=none, constraint=false, color="#9aa0a6", fontcolor="#9aa0a6", label="related"];`
      : `  t${l.from} -> t${l.to} [style=dotted, constraint=false, color="#9aa0a6", fontcolor="#9aa0a6", label="found while on"];`,
  );
}

/** Text: a section of its own under the tree, one link a line; nothing when there are none. */
export function textLinks(links: readonly GraphLink[]): string[] {
  if (links.length === 0) return [];
  return [
    '',
    'links (they block nothing):',
    ...links.map((l) => (l.type === 'related' ? `  #${l.from} ~ #${l.to} related` : `  #${l.from} found while on #${l.to}`)),
  ];
}
