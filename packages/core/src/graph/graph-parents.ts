/**
 * The parents of `tasks graph` (docs/protocol.md, "Parents"): each child's
 * `parent`, drawn as an edge of its own style from the child to its parent
 * (the parent waits for its children, as a task waits for its blockers, so
 * the layout reads the same way), labelled `part of`, never on the critical
 * path or in the text tree's order. graph-render.ts adds them to each format.
 */
import type { Task } from '../format/format.js';

/** `child`'s parent is `parent`; both shown. */
export interface GraphParent {
  child: number;
  parent: number;
}

/** The colour of the parent edges in Mermaid and dot. */
const PARENT_COLOR = '#8e24aa';

/** The child → parent pairs among the shown tasks, by parent then child (a task named its own parent by hand is left out). */
export function collectParents(shown: readonly Task[]): GraphParent[] {
  const ids = new Set(shown.map((t) => t.id));
  const out: GraphParent[] = [];
  for (const t of shown) if (t.parent !== undefined && t.parent !== t.id && ids.has(t.parent)) out.push({ child: t.id, parent: t.parent });
  return out.sort((a, b) => a.parent - b.parent || a.child - b.child);
}

/** Mermaid: a labelled line with a circle at the parent's end, in purple; `first` is the index of the first of them among the graph's links (for linkStyle). */
export function mermaidParents(parents: readonly GraphParent[], first: number): string[] {
  if (parents.length === 0) return [];
  const lines = parents.map((p) => `  t${p.child} -- part of --o t${p.parent}`);
  lines.push(`  linkStyle ${parents.map((_, i) => first + i).join(',')} stroke:${PARENT_COLOR},stroke-width:2px`);
  return lines;
}

/** Graphviz dot: bold purple, a hollow diamond at the parent (the whole), labelled. */
export function dotParents(parents: readonly GraphParent[]): string[] {
  return parents.map(
    (p) => `  t${p.child} -> t${p.parent} [style=bold, arrowhead=odiamond, color="${PARENT_COLOR}", fontcolor="${PARENT_COLOR}", label="part of"];`,
  );
}

/** Text: a section of its own under the tree, one child a line; nothing when there are none. */
export function textParents(parents: readonly GraphParent[]): string[] {
  if (parents.length === 0) return [];
  return ['', 'parents (a parent waits for its children):', ...parents.map((p) => `  #${p.child} part of #${p.parent}`)];
}
