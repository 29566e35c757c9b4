import dagre from '@dagrejs/dagre';

/**
 * Lays the dependency graph out with dagre (a layered, Sugiyama-style
 * layout), off the page's thread: at 1,000 tasks a layout takes a second or
 * more, and the board must stay usable meanwhile.
 */

/** What the page sends: nodes with their box size, edges from blocker to waiter. */
export interface LayoutRequest {
  seq: number;
  nodes: { id: number; width: number; height: number }[];
  edges: { from: number; to: number }[];
}

/** What comes back: each node's centre, each edge's polyline, the drawing's size. */
export interface LayoutResult {
  seq: number;
  nodes: { id: number; x: number; y: number }[];
  edges: { from: number; to: number; points: { x: number; y: number }[] }[];
  width: number;
  height: number;
  ms: number;
}

/** Above this many nodes network-simplex ranking costs seconds; longest-path is several times faster and still layered. */
const SIMPLEX_LIMIT = 300;

export function layoutGraph(request: LayoutRequest): LayoutResult {
  const started = performance.now();
  const g = new dagre.graphlib.Graph();
  g.setGraph({
    rankdir: 'LR',
    nodesep: 14,
    ranksep: 56,
    marginx: 16,
    marginy: 16,
    ranker: request.nodes.length > SIMPLEX_LIMIT ? 'longest-path' : 'network-simplex',
  });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of request.nodes) g.setNode(String(n.id), { width: n.width, height: n.height });
  for (const e of request.edges) g.setEdge(String(e.from), String(e.to));
  dagre.layout(g);
  const graph = g.graph();
  return {
    seq: request.seq,
    nodes: request.nodes.map((n) => {
      const at = g.node(String(n.id));
      return { id: n.id, x: at.x, y: at.y };
    }),
    edges: request.edges.map((e) => ({
      from: e.from,
      to: e.to,
      points: (g.edge(String(e.from), String(e.to))?.points ?? []).map((p: { x: number; y: number }) => ({ x: p.x, y: p.y })),
    })),
    width: graph.width ?? 0,
    height: graph.height ?? 0,
    ms: Math.round(performance.now() - started),
  };
}

const scope = self as unknown as { onmessage: ((e: MessageEvent<LayoutRequest>) => void) | null; postMessage(result: LayoutResult): void };
scope.onmessage = (e) => scope.postMessage(layoutGraph(e.data));
