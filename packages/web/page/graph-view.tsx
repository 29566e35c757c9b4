import type { RefObject } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { WebState, WebTask } from '../src/wire';
import type { LayoutRequest, LayoutResult } from './layout-worker';

const NODE_W = 200;
const NODE_H = 46;

const STATE_WORDS: Record<WebTask['state'], string> = {
  done: 'done',
  active: 'in progress',
  ready: 'ready',
  blocked: 'blocked',
  waiting: 'assigned, waiting',
  deleted: 'deleted',
};

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

interface View {
  x: number;
  y: number;
  k: number;
}

interface GraphViewProps {
  state: WebState;
  found: Set<number> | undefined;
  open: (id: number) => void;
}

/**
 * The dependency graph as `tasks graph` marks it: blockers on the left of
 * what waits for them, ready tasks and the critical path (the longest chain
 * of open tasks) standing out; a click opens the task. Wheel zooms, dragging
 * the background pans.
 */
export function GraphView({ state, found, open }: GraphViewProps) {
  const [hideDone, setHideDone] = useState(() => state.tasks.length > 300);
  const shown = useMemo(() => state.tasks.filter((t) => !hideDone || t.status !== 'completed'), [state, hideDone]);
  const ids = useMemo(() => new Set(shown.map((t) => t.id)), [shown]);
  const edges = useMemo(() => state.edges.filter((e) => ids.has(e.from) && ids.has(e.to)), [state, ids]);
  const layout = useLayout(shown, edges);
  const box = useRef<HTMLDivElement>(null);
  const { view, fitAgain, handlers } = usePanZoom(box, layout);
  const byId = useMemo(() => new Map(state.tasks.map((t) => [t.id, t])), [state]);
  const critical = useMemo(() => new Set(state.edges.filter((e) => e.critical).map((e) => `${e.from}>${e.to}`)), [state]);
  const ready = state.tasks.filter((t) => t.ready).length;

  return (
    <div class="graph">
      <div class="graph-bar">
        <span class="legend">
          <i class="sw ready" /> ready ({ready}) <i class="sw active" /> in progress <i class="sw blocked" /> blocked <i class="sw waiting" /> assigned{' '}
          <i class="sw done" /> done <i class="sw crit" /> critical path (
          {state.criticalPath.length ? state.criticalPath.map((id) => `#${id}`).join(' → ') : 'none'})
        </span>
        <label>
          <input type="checkbox" checked={hideDone} onChange={(e) => setHideDone((e.target as HTMLInputElement).checked)} /> hide done
        </label>
        <button onClick={fitAgain}>fit</button>
        {layout && (
          <span class="muted">
            {layout.nodes.length} tasks laid out in {layout.ms} ms
          </span>
        )}
      </div>
      <div class="graph-box" ref={box} {...handlers}>
        {!layout || !view ? (
          <p class="empty">{shown.length ? `laying out ${shown.length} tasks…` : 'no tasks to draw'}</p>
        ) : (
          <GraphDrawing layout={layout} view={view} byId={byId} critical={critical} found={found} open={open} />
        )}
      </div>
    </div>
  );
}

/**
 * The layout of the tasks and edges shown, computed in a worker. It is asked
 * again only when which tasks and edges there are changes: a change of
 * status just recolours. An answer to an older request is dropped.
 */
function useLayout(shown: WebTask[], edges: WebState['edges']): LayoutResult | undefined {
  const [layout, setLayout] = useState<LayoutResult>();
  const worker = useRef<Worker | undefined>(undefined);
  const seq = useRef(0);
  const shape = useMemo(() => `${shown.map((t) => t.id).join(',')}|${edges.map((e) => `${e.from}>${e.to}`).join(',')}`, [shown, edges]);
  useEffect(() => {
    const w = new Worker(new URL('./layout-worker.ts', import.meta.url), { type: 'module' });
    w.onmessage = (e: MessageEvent<LayoutResult>) => {
      if (e.data.seq === seq.current) setLayout(e.data);
    };
    worker.current = w;
    return () => w.terminate();
  }, []);
  useEffect(() => {
    const request: LayoutRequest = {
      seq: ++seq.current,
      nodes: shown.map((t) => ({ id: t.id, width: NODE_W, height: NODE_H })),
      edges: edges.map((e) => ({ from: e.from, to: e.to })),
    };
    worker.current?.postMessage(request);
  }, [shape]);
  return layout;
}

/**
 * Where the drawing sits in its box: fitted to the box on each new layout
 * until the person zooms or pans (then kept), fitted again by `fit`.
 */
function usePanZoom(box: RefObject<HTMLDivElement | null>, layout: LayoutResult | undefined) {
  const [view, setView] = useState<View>();
  const moved = useRef(false);
  const drag = useRef<{ x: number; y: number; vx: number; vy: number } | undefined>(undefined);
  const fit = (result: LayoutResult) => {
    const el = box.current;
    if (!el || !result.width) return;
    const k = Math.min(1, Math.max(0.05, Math.min(el.clientWidth / result.width, el.clientHeight / result.height)));
    setView({ k, x: (el.clientWidth - result.width * k) / 2, y: Math.max(0, (el.clientHeight - result.height * k) / 2) });
  };
  useEffect(() => {
    if (layout && (!moved.current || !view)) fit(layout);
  }, [layout]);
  const onWheel = (e: WheelEvent) => {
    if (!view || !box.current) return;
    e.preventDefault();
    const r = box.current.getBoundingClientRect();
    const px = e.clientX - r.left;
    const py = e.clientY - r.top;
    const k = Math.min(3, Math.max(0.03, view.k * Math.exp(-e.deltaY / 400)));
    moved.current = true;
    setView({ k, x: px - ((px - view.x) * k) / view.k, y: py - ((py - view.y) * k) / view.k });
  };
  const handlers = {
    onWheel,
    onMouseDown: (e: MouseEvent) => {
      if ((e.target as Element).closest('.node') || !view) return;
      drag.current = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y };
    },
    onMouseMove: (e: MouseEvent) => {
      const d = drag.current;
      if (!d || !view) return;
      moved.current = true;
      setView({ ...view, x: d.vx + e.clientX - d.x, y: d.vy + e.clientY - d.y });
    },
    onMouseUp: () => (drag.current = undefined),
    onMouseLeave: () => (drag.current = undefined),
  };
  const fitAgain = () => layout && ((moved.current = false), fit(layout));
  return { view, fitAgain, handlers };
}

interface GraphDrawingProps {
  layout: LayoutResult;
  view: View;
  byId: Map<number, WebTask>;
  /** The critical path's edges, as `from>to`. */
  critical: Set<string>;
  found: Set<number> | undefined;
  open: (id: number) => void;
}

/** The laid-out graph: edges (the critical path's marked), then one box per task; what the search did not find is dimmed. */
function GraphDrawing({ layout, view, byId, critical, found, open }: GraphDrawingProps) {
  return (
    <svg width="100%" height="100%" role="img" aria-label="dependency graph">
      <defs>
        <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" class="arrow" />
        </marker>
        <marker id="arrow-crit" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M 0 0 L 10 5 L 0 10 z" class="arrow crit" />
        </marker>
      </defs>
      <g transform={`translate(${view.x},${view.y}) scale(${view.k})`}>
        {layout.edges.map((e) => {
          const crit = critical.has(`${e.from}>${e.to}`);
          const dim = found && !(found.has(e.from) && found.has(e.to));
          return (
            <polyline
              class={`edge${crit ? ' crit' : ''}${dim ? ' dim' : ''}`}
              points={e.points.map((p) => `${p.x},${p.y}`).join(' ')}
              marker-end={crit ? 'url(#arrow-crit)' : 'url(#arrow)'}
            />
          );
        })}
        {layout.nodes.map((n) => {
          const t = byId.get(n.id);
          if (!t) return null;
          const dim = found && !found.has(t.id);
          return (
            <g
              class={`node ${t.state}${t.critical ? ' crit' : ''}${dim ? ' dim' : ''}`}
              transform={`translate(${n.x - NODE_W / 2},${n.y - NODE_H / 2})`}
              data-node-id={t.id}
              onClick={() => open(t.id)}
            >
              <title>{`#${t.id}: ${t.subject}`}</title>
              <rect width={NODE_W} height={NODE_H} rx="6" />
              <text x="8" y="18" class="t1">
                #{t.id} {cut(t.subject, 24)}
              </text>
              <text x="8" y="36" class="t2">
                {STATE_WORDS[t.state]}
                {t.owner ? ` · ${cut(t.owner, 14)}` : ''}
                {t.critical ? ' · critical' : ''}
              </text>
            </g>
          );
        })}
      </g>
    </svg>
  );
}
