import { memo } from 'preact/compat';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Column, WebState, WebTask } from '../src/wire';
import type { PageHistory } from './history';
import type { Act, Notice } from './act';
import { DEFAULT_PRIORITY, formatLeft, kanbanColumns, planMove, shownColumns } from './model';

/** A column shows this many cards until asked for all (a 1,000-task board stays quick to draw). */
const PAGE = 150;

/** A priority other than the default as a `P0` badge, and the labels as `#label`: what `tasks list` shows after the subject. */
export function PlanningTags({ task }: { task: WebTask }) {
  if (task.priority === DEFAULT_PRIORITY && task.labels.length === 0) return null;
  return (
    <span class="tags">
      {task.priority !== DEFAULT_PRIORITY && (
        <span class={`prio p${task.priority}`} data-priority={task.priority} title={`priority ${task.priority} (0 most urgent, default 2)`}>
          P{task.priority}
        </span>
      )}
      {task.labels.map((label) => (
        <span class="label" data-label={label}>
          #{label}
        </span>
      ))}
    </span>
  );
}

/** Time left on a lease, ticking every second on the server's clock. */
export function LeaseLeft({ expiresAt, offset }: { expiresAt: string | null; offset: number }) {
  const [now, setNow] = useState(() => Date.now() + offset);
  useEffect(() => {
    if (expiresAt === null) return;
    const timer = window.setInterval(() => setNow(Date.now() + offset), 1000);
    return () => window.clearInterval(timer);
  }, [expiresAt, offset]);
  if (expiresAt === null)
    return (
      <span class="lease never" data-lease="never">
        no expiry
      </span>
    );
  const left = Date.parse(expiresAt) - now;
  return (
    <span class={left <= 0 ? 'lease expired' : left < 60_000 ? 'lease soon' : 'lease'} data-lease={String(left)}>
      {formatLeft(left)}
    </span>
  );
}

interface CardProps {
  task: WebTask;
  /** How deep it stands under its parent in the column (0: a card of its own). */
  depth: number;
  /** The parent standing elsewhere, shown as `↑ #4 Epic`; only for a child not under its parent. Plain values, so the memoised card compares them. */
  parentId?: number;
  /** Its subject; absent for a parent not on the page (deleted, or missing). */
  parentSubject?: string;
  offset: number;
  open: (id: number) => void;
  drag: (task: WebTask | undefined) => void;
  act: Act;
}

/** The verdict buttons of a task waiting for review: Approve completes it, Reject asks what to fix and sends it back to its owner. */
export function ReviewButtons({ task, act }: { task: WebTask; act: Act }) {
  const reject = () => {
    const note = window.prompt(`Send #${task.id} back to ${task.owner || 'the board'}: what is to fix?`);
    if (note?.trim()) void act('POST', `/tasks/${task.id}/reject`, { note }, `sent #${task.id} back to ${task.owner || 'the board'}`);
  };
  return (
    <div class="review-actions" onClick={(e) => e.stopPropagation()}>
      <button class="approve" onClick={() => act('POST', `/tasks/${task.id}/approve`, {}, `approved #${task.id}: ${task.subject}`)}>
        Approve
      </button>
      <button class="reject" onClick={reject}>
        Reject
      </button>
    </div>
  );
}

/** A card's first line (`└` under its parent, the progress of a parent), and the `↑ #4 Epic` of a child whose parent stands elsewhere. */
function CardHeading({ task, depth, parentId, parentSubject }: Pick<CardProps, 'task' | 'depth' | 'parentId' | 'parentSubject'>) {
  return (
    <>
      <div class="line">
        {depth > 0 && <span class="under">└</span>}
        <span class="id">#{task.id}</span>
        <span class="subject">{task.subject}</span>
        {task.progress && (
          <span class="progress" data-progress={`${task.progress.done}/${task.progress.total}`} title="its children: completed of all but the deleted ones">
            ({task.progress.done}/{task.progress.total} done)
          </span>
        )}
      </div>
      {parentId !== undefined && (
        <div class="meta parent-ref" data-parent={parentId} title={`part of #${parentId}${parentSubject ? `: ${parentSubject}` : ''}`}>
          ↑ #{parentId} {parentSubject ?? '(not on the board)'}
        </div>
      )}
    </>
  );
}

/** A card's task branch against the merge target: `⎇ task/4 ↑2 ↓1`, `⎇ task/4 ↑2 ↓1 conflicts`, `⎇ task/4 merged` (the panel says it in full). */
function BranchLine({ task }: { task: WebTask }) {
  const status = task.branchStatus;
  if (!status || !task.branch) return null;
  return (
    <div class={`meta branch-status${status.clean ? '' : ' conflicts'}`} title={`${task.branch} → ${status.target}: ${status.summary}`}>
      ⎇ <code>{task.branch}</code> {status.short}
    </div>
  );
}

const Card = memo(function Card({ task, depth, parentId, parentSubject, offset, open, drag, act }: CardProps) {
  return (
    <article
      class={`card ${task.state}${task.critical ? ' critical' : ''}${depth ? ` child depth-${Math.min(depth, 4)}` : ''}`}
      draggable={task.column !== 'done'}
      data-task-id={task.id}
      data-depth={depth}
      title={task.claimWhy ? `claim order: ${task.claimWhy}` : undefined}
      onDragStart={(e) => {
        e.dataTransfer?.setData('text/plain', String(task.id));
        if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
        drag(task);
      }}
      onDragEnd={() => drag(undefined)}
      onClick={() => open(task.id)}
      tabIndex={0}
      onKeyDown={(e) => e.key === 'Enter' && open(task.id)}
    >
      <CardHeading task={task} depth={depth} parentId={parentId} parentSubject={parentSubject} />
      <PlanningTags task={task} />
      {task.column === 'blocked' && <div class="meta">waits for {[...task.openBlockers, ...task.openChildren].map((b) => `#${b}`).join(', ')}</div>}
      {task.column === 'ready' && task.owner !== '' && <div class="meta">assigned to {task.owner}</div>}
      {task.column === 'in_progress' && (
        <div class="meta">
          <b class="owner">{task.owner}</b>
          {task.activeForm && <span class="active">: {task.activeForm}</span>}
          {task.lease && (
            <div>
              <LeaseLeft expiresAt={task.lease.expiresAt} offset={offset} />
            </div>
          )}
          {(task.worktree || (task.branch && !task.branchStatus)) && (
            <div class="where" title={task.worktree}>
              {task.branch && !task.branchStatus ? <code>{task.branch}</code> : null} {task.worktree ? <span class="path">{task.worktree}</span> : null}
            </div>
          )}
        </div>
      )}
      {task.column === 'review' && (
        <div class="meta">
          <b class="owner">{task.owner || 'unowned'}</b>: waits for review
          {task.reviewer && <div class="reviewer">reviewing: {task.reviewer}</div>}
          <ReviewButtons task={task} act={act} />
        </div>
      )}
      {task.column === 'done' && task.owner !== '' && <div class="meta">by {task.owner}</div>}
      {task.column !== 'ready' && task.column !== 'blocked' && <BranchLine task={task} />}
      {task.notes.length > 0 && (
        <div class="meta notes-count" title={task.notes.at(-1)!.text}>
          {task.notes.length} note{task.notes.length === 1 ? '' : 's'}
        </div>
      )}
      {task.lastError && task.column !== 'done' && (
        <div class="meta error" title={task.lastError}>
          last run failed
        </div>
      )}
      {task.critical && (
        <span class="badge crit" title="on the critical path (the longest chain of open tasks)">
          critical
        </span>
      )}
    </article>
  );
});

/** The Done column's button that asks the server for the next page of the history (for the search, when one is typed). */
function MoreHistory({ history, searching, left }: { history: PageHistory; searching: boolean; left: number }) {
  if (!history.more) return null;
  return (
    <button class="more" data-more="history" disabled={history.loading} onClick={history.loadMore}>
      {history.loading ? 'reading…' : searching ? 'find more in the history' : `show more (${left} more)`}
    </button>
  );
}

interface KanbanProps {
  state: WebState;
  /** The tasks the page holds (the state's, and the completed ones it asked for), and how to ask for more. */
  history: PageHistory;
  found: Set<number> | undefined;
  offset: number;
  open: (id: number) => void;
  act: Act;
  say: (notice: Notice) => void;
}

/** The board in its columns (Review on a board that uses review); a card dropped on another column runs that move's command (model.ts, planMove). */
export function Kanban({ state, history, found, offset, open, act, say }: KanbanProps) {
  const [dragging, setDragging] = useState<WebTask>();
  const [over, setOver] = useState<Column>();
  const [all, setAll] = useState<Set<Column>>(new Set());
  const byId = history.names;
  // Children under their parent in each column (docs/decisions.md, "Parents on the boards").
  const columns = useMemo(() => kanbanColumns(history.tasks, found), [history.tasks, found]);

  const drop = async (to: Column, id: number) => {
    setOver(undefined);
    setDragging(undefined);
    const task = history.full.get(id);
    if (!task) return;
    const move = planMove(task, to);
    if (move.kind === 'refuse') say({ kind: 'error', text: move.message });
    if (move.kind !== 'call') return;
    const verb = move.verb === 'start' ? 'started' : move.verb === 'done' ? 'completed' : move.verb === 'approve' ? 'approved' : 'released';
    await act('POST', move.path, {}, `${verb} #${id}: ${task.subject}`);
  };

  return (
    <div class="kanban">
      {shownColumns(state).map(({ id, title }) => {
        const cards = columns[id];
        const shown = all.has(id) ? cards : cards.slice(0, PAGE);
        // Done counts the board's completed tasks, of which the page holds the latest (the rest on demand); a search counts what it found.
        const count = id === 'done' && !found ? state.history.completed : cards.length;
        const move = dragging ? planMove(dragging, id) : undefined;
        const hint = move?.kind === 'call' ? 'drop' : move?.kind === 'refuse' ? 'nodrop' : '';
        return (
          <section
            class={`column ${hint}${over === id ? ' over' : ''}`}
            data-column={id}
            aria-label={title}
            title={move?.kind === 'refuse' ? move.message : undefined}
            onDragOver={(e) => {
              e.preventDefault();
              if (over !== id) setOver(id);
            }}
            onDragLeave={() => setOver((o) => (o === id ? undefined : o))}
            onDrop={(e) => {
              e.preventDefault();
              const taskId = Number(e.dataTransfer?.getData('text/plain') || dragging?.id);
              if (taskId) void drop(id, taskId);
            }}
          >
            <h2 title={id === 'ready' ? 'in the order claim --next takes them: priority, the chain of open work behind, id' : undefined}>
              {title} <span class="count">{count}</span>
            </h2>
            <div class="cards">
              {shown.map(({ task: t, depth, parentElsewhere }) => (
                <Card
                  key={t.id}
                  task={t}
                  depth={depth}
                  parentId={parentElsewhere}
                  parentSubject={parentElsewhere === undefined ? undefined : byId.get(parentElsewhere)?.subject}
                  offset={offset}
                  open={open}
                  drag={setDragging}
                  act={act}
                />
              ))}
              {shown.length < cards.length && (
                <button class="more" onClick={() => setAll(new Set([...all, id]))}>
                  show all {cards.length} ({cards.length - shown.length} more)
                </button>
              )}
              {id === 'done' && shown.length === cards.length && <MoreHistory history={history} searching={found !== undefined} left={count - cards.length} />}
              {cards.length === 0 && !(id === 'done' && history.more) && <p class="empty">{found ? 'nothing found' : 'none'}</p>}
            </div>
          </section>
        );
      })}
    </div>
  );
}
