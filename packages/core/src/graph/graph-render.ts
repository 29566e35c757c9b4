import { isClosed, type Task, type TaskStatus } from '../format/format.js';
import { collectLinks, dotLinks, mermaidLinks, textLinks, type GraphLink } from './graph-links.js';
import { collectParents, dotParents, mermaidParents, textParents, type GraphParent } from './graph-parents.js';
import { isReady, openBlockers, type TaskLookup } from './graph.js';
import { boardLookup } from './hierarchy.js';
import { LongestChains, walkDepthFirst, type DepthFirstVisitor, type WalkEdge } from './walk.js';

/**
 * `tasks graph`: the dependency graph as Mermaid (renders on GitHub), Graphviz
 * dot, or text for a terminal. Status is shown by style; ready tasks and the
 * critical path (the longest chain of open tasks) stand out.
 */

export type GraphFormat = 'mermaid' | 'dot' | 'text';
export const GRAPH_FORMATS: readonly GraphFormat[] = ['mermaid', 'dot', 'text'];

/** How a node looks: its status, refined for pending tasks. */
export type NodeState = 'done' | 'active' | 'ready' | 'blocked' | 'waiting' | 'deleted';

export interface GraphNode {
  id: number;
  subject: string;
  status: TaskStatus;
  owner: string;
  activeForm?: string;
  state: NodeState;
  ready: boolean;
  critical: boolean;
}

/** `from` blocks `to` (`to` waits for `from`). */
export interface GraphEdge {
  from: number;
  to: number;
  critical: boolean;
}

/** The documented JSON shape of `tasks graph --json`. */
export interface GraphModel {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** Soft links between shown tasks (docs/protocol.md, "Links"): drawn apart, never on the critical path. */
  links: GraphLink[];
  /** Each shown child and its shown parent (docs/protocol.md, "Parents"): an edge of its own style, never on the critical path. */
  parents: GraphParent[];
  /** Ids of the longest chain of open tasks, in order; empty when no two open tasks are linked. */
  criticalPath: number[];
  ready: number[];
}

export interface GraphOptions {
  /** Include deleted tasks (hidden by default, like `tasks list`). */
  all?: boolean;
}

/** Builds the graph of a board's tasks: edges from both sides of every link, once each. */
export function buildGraph(tasks: Task[], options: GraphOptions = {}): GraphModel {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  // Knows each task's open children: a parent waits for them, so it is not ready (docs/protocol.md, "Parents").
  const lookup = boardLookup({ tasks, byId });
  const shown = tasks.filter((t) => options.all || t.status !== 'deleted').sort((a, b) => a.id - b.id);
  const shownIds = new Set(shown.map((t) => t.id));
  // Both sides of a link name it: every edge between shown tasks, sorted, then once each (no key strings: a
  // 300,000-task board has 600,000 sides).
  const sides: GraphEdge[] = [];
  for (const t of shown) {
    for (const d of t.blocks) if (shownIds.has(d)) sides.push({ from: t.id, to: d, critical: false });
    for (const b of t.blockedBy) if (shownIds.has(b)) sides.push({ from: b, to: t.id, critical: false });
  }
  sides.sort((a, b) => a.from - b.from || a.to - b.to);
  const edges = sides.filter((e, i) => i === 0 || e.from !== sides[i - 1]!.from || e.to !== sides[i - 1]!.to);

  const criticalPath = longestOpenChain(shown, edges);
  const onPath = new Set(criticalPath);
  const nextOnPath = new Map(criticalPath.slice(1).map((to, i) => [criticalPath[i]!, to]));
  for (const e of edges) if (nextOnPath.get(e.from) === e.to) e.critical = true;
  const nodes = shown.map((t): GraphNode => {
    const ready = isReady(t, lookup);
    const node: GraphNode = {
      id: t.id,
      subject: t.subject,
      status: t.status,
      owner: t.owner,
      state: nodeState(t, ready, lookup),
      ready,
      critical: onPath.has(t.id),
    };
    if (t.activeForm !== undefined) node.activeForm = t.activeForm;
    return node;
  });
  return { nodes, edges, links: collectLinks(shown), parents: collectParents(shown), criticalPath, ready: nodes.filter((n) => n.ready).map((n) => n.id) };
}

function nodeState(t: Task, ready: boolean, lookup: TaskLookup): NodeState {
  if (t.status === 'completed') return 'done';
  if (t.status === 'deleted') return 'deleted';
  if (t.status === 'in_progress') return 'active';
  if (ready) return 'ready';
  // Pending with no open blocker but claimed by someone: waiting for them, not blocked.
  return openBlockers(t, lookup).length || lookup.openChildren?.(t.id).length ? 'blocked' : 'waiting';
}

/**
 * The longest chain (by task count) of open tasks; ties go to lower ids.
 * Cycles are cut, not followed. One depth-first walk (walk.ts) remembering
 * each task's best length and next step rather than whole chains.
 */
function longestOpenChain(tasks: Task[], edges: GraphEdge[]): number[] {
  const open = new Set(tasks.filter((t) => !isClosed(t.status)).map((t) => t.id));
  const next = new Map<number, number[]>();
  for (const e of edges) if (open.has(e.from) && open.has(e.to) && e.from !== e.to) (next.get(e.from) ?? next.set(e.from, []).get(e.from)!).push(e.to);
  for (const list of next.values()) list.sort((a, b) => a - b);
  const chains = new LongestChains((id) => next.get(id) ?? []);
  let start: number | undefined;
  for (const id of [...open].sort((a, b) => a - b)) if (start === undefined || chains.length(id) > chains.length(start)) start = id;
  const longest = start === undefined ? [] : chains.chain(start);
  return longest.length >= 2 ? longest : [];
}

/** The second line of a node: what state it is in, in words. */
function stateText(n: GraphNode): string {
  switch (n.state) {
    case 'done':
      return 'done';
    case 'deleted':
      return 'deleted';
    case 'active':
      return n.activeForm ? `${n.owner || 'unowned'}: ${n.activeForm}` : `in progress (${n.owner || 'unowned'})`;
    case 'ready':
      return 'ready';
    case 'blocked':
      return 'blocked';
    case 'waiting':
      return `claimed by ${n.owner}`;
  }
}

// ---- Mermaid ------------------------------------------------------------------

const MERMAID_CLASSES: Record<NodeState, string> = {
  done: 'fill:#e6f4ea,stroke:#34a853,color:#5f6368',
  active: 'fill:#fef7e0,stroke:#f9ab00,stroke-width:2px',
  ready: 'fill:#e8f0fe,stroke:#1a73e8,stroke-width:2px',
  blocked: 'fill:#f1f3f4,stroke:#9aa0a6',
  waiting: 'fill:#f1f3f4,stroke:#9aa0a6',
  deleted: 'fill:#ffffff,stroke:#dadce0,stroke-dasharray:4 3,color:#9aa0a6',
};
const CRITICAL_COLOR = '#d93025';

/** Mermaid text that renders as a labelled entity, never as syntax. */
function mermaidText(text: string): string {
  return text
    .replace(/#(?=\w+;)/g, '#35;')
    .replace(/"/g, '#quot;')
    .replace(/</g, '#lt;')
    .replace(/>/g, '#gt;');
}

/** A Mermaid flowchart; paste it into a ```mermaid block. */
export function renderMermaid(model: GraphModel): string {
  const lines = ['graph LR'];
  for (const n of model.nodes) lines.push(`  t${n.id}["${mermaidText(`#${n.id} ${n.subject}`)}<br/>${mermaidText(stateText(n))}"]:::${n.state}`);
  const byId = new Map(model.nodes.map((n) => [n.id, n]));
  const critical: number[] = [];
  model.edges.forEach((e, i) => {
    const arrow = e.critical ? '==>' : byId.get(e.from)!.state === 'done' || byId.get(e.from)!.state === 'deleted' ? '-.->' : '-->';
    lines.push(`  t${e.from} ${arrow} t${e.to}`);
    if (e.critical) critical.push(i);
  });
  for (const line of mermaidLinks(model.links)) lines.push(line);
  for (const line of mermaidParents(model.parents, model.edges.length + model.links.length)) lines.push(line);
  const used = new Set(model.nodes.map((n) => n.state));
  for (const state of Object.keys(MERMAID_CLASSES) as NodeState[]) if (used.has(state)) lines.push(`  classDef ${state} ${MERMAID_CLASSES[state]}`);
  for (const n of model.nodes) if (n.critical) lines.push(`  style t${n.id} stroke:${CRITICAL_COLOR},stroke-width:3px`);
  if (critical.length) lines.push(`  linkStyle ${critical.join(',')} stroke:${CRITICAL_COLOR},stroke-width:3px`);
  return lines.join('\n');
}

// ---- Graphviz dot -------------------------------------------------------------------

const DOT_STYLES: Record<NodeState, Record<string, string>> = {
  done: { fillcolor: '"#e6f4ea"', color: '"#34a853"', fontcolor: '"#5f6368"' },
  active: { fillcolor: '"#fef7e0"', color: '"#f9ab00"', penwidth: '2' },
  ready: { fillcolor: '"#e8f0fe"', color: '"#1a73e8"', penwidth: '2' },
  blocked: { fillcolor: '"#f1f3f4"', color: '"#9aa0a6"' },
  waiting: { fillcolor: '"#f1f3f4"', color: '"#9aa0a6"' },
  deleted: { fillcolor: '"#ffffff"', color: '"#dadce0"', fontcolor: '"#9aa0a6"', style: '"rounded,filled,dashed"' },
};

/** Text inside a dot string: quotes and backslashes escaped, one line. */
function dotEscape(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, ' ');
}

/** Graphviz dot: `tasks graph --format dot | dot -Tsvg > graph.svg`. */
export function renderDot(model: GraphModel): string {
  const lines = ['digraph tasks {', '  rankdir=LR;', '  node [shape=box, style="rounded,filled", fontname="Helvetica"];', '  edge [color="#5f6368"];'];
  for (const n of model.nodes) {
    const label = `"${dotEscape(`#${n.id} ${n.subject}`)}\\n${dotEscape(stateText(n))}"`;
    const attrs: Record<string, string> = { label, ...DOT_STYLES[n.state], ...(n.critical ? { color: `"${CRITICAL_COLOR}"`, penwidth: '3' } : {}) };
    lines.push(
      `  t${n.id} [${Object.entries(attrs)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}];`,
    );
  }
  const byId = new Map(model.nodes.map((n) => [n.id, n]));
  for (const e of model.edges) {
    const from = byId.get(e.from)!;
    const attrs = e.critical
      ? ` [color="${CRITICAL_COLOR}", penwidth=3]`
      : from.state === 'done' || from.state === 'deleted'
        ? ' [style=dashed, color="#9aa0a6"]'
        : '';
    lines.push(`  t${e.from} -> t${e.to}${attrs};`);
  }
  for (const line of dotLinks(model.links)) lines.push(line);
  for (const line of dotParents(model.parents)) lines.push(line);
  lines.push('}');
  return lines.join('\n');
}

// ---- text ---------------------------------------------------------------------

/** Levels of indentation before a subtree is continued as a tree of its own. */
const MAX_TREE_DEPTH = 24;

const MARKS: Record<TaskStatus, string> = { pending: '[ ]', in_progress: '[>]', completed: '[x]', deleted: '[-]' };

/**
 * The graph as a tree for a terminal: each task is followed by the tasks that
 * wait for it; a task reached a second time is shown as `#N (see above)`.
 */
export function renderGraphText(model: GraphModel): string {
  if (model.nodes.length === 0) return '(no tasks yet: add one with \'tasks create "subject"\')';
  const byId = new Map(model.nodes.map((n) => [n.id, n]));
  const children = new Map<number, number[]>();
  const parents = new Map<number, number[]>();
  for (const e of model.edges) {
    if (e.from === e.to) continue;
    (children.get(e.from) ?? children.set(e.from, []).get(e.from)!).push(e.to);
    (parents.get(e.to) ?? parents.set(e.to, []).get(e.to)!).push(e.from);
  }
  const lines: string[] = [];
  const printed = new Set<number>();
  const describe = (n: GraphNode): string => {
    const notes: string[] = [];
    if (n.state === 'active') notes.push(n.activeForm ? `${n.owner || 'unowned'}: ${n.activeForm}` : n.owner || 'unowned');
    if (n.state === 'ready') notes.push('ready');
    if (n.state === 'waiting') notes.push(`claimed by ${n.owner}`);
    if (n.state === 'deleted') notes.push('deleted');
    // Under one parent the tree says what a task waits for; under several, name the ones still open.
    const from = parents.get(n.id) ?? [];
    const open = from.filter((p) => !isClosed(byId.get(p)!.status));
    if (from.length > 1 && open.length) notes.push(`waits for ${open.map((p) => `#${p}`).join(', ')}`);
    if (n.critical) notes.push('critical path');
    return `${MARKS[n.status]} #${n.id}: ${n.subject}${notes.length ? ` (${notes.join('; ')})` : ''}`;
  };
  // Depth-first through the graph walker (walk.ts), so a 10,000-task chain
  // cannot overflow the call stack; below MAX_TREE_DEPTH a subtree continues as a tree of its own
  // further down, so indentation (and output) stays linear in the tasks.
  const later: number[] = [];
  const childPrefix = new Map<number, string>();
  const place = (edge: WalkEdge | undefined) => ({
    prefix: edge ? childPrefix.get(edge.from)! : '',
    branch: !edge ? '' : edge.index === edge.count - 1 ? '└── ' : '├── ',
  });
  const visitor: DepthFirstVisitor = {
    next: (id) => children.get(id) ?? [],
    enter: (id, edge) => {
      const { prefix, branch } = place(edge);
      if ((edge?.depth ?? 0) > MAX_TREE_DEPTH) {
        lines.push(`${prefix}${branch}#${id} (continued below)`);
        later.push(id);
        return false;
      }
      lines.push(`${prefix}${branch}${describe(byId.get(id)!)}`);
      childPrefix.set(id, prefix + (branch === '' ? '' : branch === '└── ' ? '    ' : '│   '));
      return true;
    },
    revisit: (id, edge) => {
      const { prefix, branch } = place(edge);
      lines.push(`${prefix}${branch}#${id} (see above)`);
    },
  };
  const walk = (root: number) => walkDepthFirst(root, visitor, printed);
  const roots = model.nodes.filter((n) => !parents.get(n.id)?.length).map((n) => n.id);
  for (const r of roots) walk(r);
  for (let i = 0; i < later.length; i++) if (!printed.has(later[i])) walk(later[i]);
  // Tasks only reachable through a cycle have no root; show them anyway.
  for (const n of model.nodes) if (!printed.has(n.id)) walk(n.id);
  for (const line of textLinks(model.links)) lines.push(line);
  for (const line of textParents(model.parents)) lines.push(line);
  lines.push('');
  lines.push(
    model.criticalPath.length
      ? `critical path: ${model.criticalPath.map((id) => `#${id}`).join(' -> ')} (${model.criticalPath.length} open tasks in a row)`
      : 'critical path: none (no open task waits for another)',
  );
  lines.push(`ready: ${model.ready.length ? model.ready.map((id) => `#${id}`).join(', ') : 'nothing'}`);
  return lines.join('\n');
}

/** Renders the model in a format. */
export function renderGraph(model: GraphModel, format: GraphFormat): string {
  return format === 'mermaid' ? renderMermaid(model) : format === 'dot' ? renderDot(model) : renderGraphText(model);
}
