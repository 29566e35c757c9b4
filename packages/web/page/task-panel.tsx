import { useEffect, useRef, useState } from 'preact/hooks';
import type { WebTask, WebTaskRef } from '../src/wire';
import type { Act } from './act';
import { LeaseLeft, ReviewButtons } from './kanban';
import { FamilyPart } from './family-part';
import { LinksPart } from './links-part';
import { dateTime, typedLabels } from './model';
import { PriorityOptions } from './priority-options';

interface Fields {
  subject: string;
  description: string;
  activeForm: string;
  owner: string;
}

const fieldsOf = (t: WebTask): Fields => ({ subject: t.subject, description: t.description, activeForm: t.activeForm ?? '', owner: t.owner });

interface TaskPanelProps {
  task: WebTask;
  byId: Map<number, WebTaskRef>;
  offset: number;
  act: Act;
  close: () => void;
  open: (id: number) => void;
}

/** Ids typed as the CLI takes them: `3`, `#3`, `3, 4`. */
function typedIds(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** What each part of the panel gets: the task, how to write, and whether `force` is ticked (as `--force`). */
interface PartProps {
  task: WebTask;
  act: Act;
  force: boolean;
}

/**
 * One task: its fields to edit (as `tasks update`), its priority and labels
 * (each change saved at once, as `tasks update --priority / --label /
 * --remove-label`), its notes and a line to add one (as `tasks note`), its
 * edges to add or remove (as `tasks dep add|rm`), and the moves of the
 * kanban as buttons, with `force` for someone else's task (as `--force`).
 */
export function TaskPanel({ task, byId, offset, act, close, open }: TaskPanelProps) {
  const [force, setForce] = useState(false);
  const name = (id: number) => {
    const t = byId.get(id);
    return t ? `#${id}: ${t.subject}` : `#${id}`;
  };
  return (
    <div class="panel" role="dialog" aria-label={`task #${task.id}`} data-panel={task.id}>
      <button class="close" onClick={close} aria-label="close">
        ×
      </button>
      <TaskHeading task={task} offset={offset} />
      <FamilyPart task={task} byId={byId} name={name} open={open} />
      <PlanPart task={task} act={act} force={force} />
      <FieldsForm task={task} act={act} force={force} />
      <TaskMoves task={task} act={act} force={force} setForce={setForce} close={close} />
      <NotesPart task={task} act={act} />
      <BlockersPart task={task} act={act} byId={byId} name={name} open={open} />
      <DependentsPart task={task} act={act} name={name} open={open} />
      <LinksPart task={task} name={name} open={open} />
    </div>
  );
}

/** The id, status and pills; who holds it and for how long; where it is worked; the last failure. */
function TaskHeading({ task, offset }: { task: WebTask; offset: number }) {
  return (
    <>
      <h2>
        #{task.id} <span class={`pill ${task.state}`}>{task.status.replace('_', ' ')}</span>
        {task.ready && <span class="pill ready">ready</span>}
        {task.critical && <span class="pill crit">critical path</span>}
        {task.column === 'review' && <span class="pill review">waits for review</span>}
      </h2>
      {task.column === 'review' && (
        <p class="meta" data-review="waiting">
          <b>{task.owner || 'nobody'}</b>'s work, waiting since {task.review?.since ? dateTime(task.review.since) : '?'}
          {task.reviewer && <> · reviewing: {task.reviewer}</>} · someone other than {task.owner || 'its owner'} approves it
        </p>
      )}
      {task.review?.state === 'approved' || task.review?.state === 'rejected' ? (
        <p class="meta" data-review={task.review.state}>
          {task.review.state} by {task.review.by || 'nobody'}
          {task.review.at ? ` at ${dateTime(task.review.at)}` : ''}
        </p>
      ) : null}
      {task.column === 'in_progress' && (
        <p class="meta">
          held by <b>{task.owner}</b>
          {task.lease && (
            <>
              {' '}
              · <LeaseLeft expiresAt={task.lease.expiresAt} offset={offset} /> · claimed {new Date(task.lease.claimedAt).toLocaleString()}
            </>
          )}
        </p>
      )}
      {(task.branch || task.worktree) && (
        <p class="meta where">
          {task.branch && <code>{task.branch}</code>} {task.worktree && <span class="path">{task.worktree}</span>}
        </p>
      )}
      {task.branchStatus && (
        <p class={`meta branch-status${task.branchStatus.clean ? '' : ' conflicts'}`}>
          → {task.branchStatus.target}: {task.branchStatus.summary}
        </p>
      )}
      {task.lastError && <pre class="last-error">{task.lastError}</pre>}
    </>
  );
}

/** Priority, place in the claim order, labels and files: each change saved at once. */
function PlanPart({ task, act, force }: PartProps) {
  const [newLabels, setNewLabels] = useState('');
  const closed = task.status === 'completed';
  const setPriority = (priority: number) => act('PATCH', `/tasks/${task.id}`, { priority, force: force || undefined }, `#${task.id} is now P${priority}`);
  const addLabels = async (e: Event) => {
    e.preventDefault();
    const labels = typedLabels(newLabels);
    if (!labels.length) return;
    if (
      await act('PATCH', `/tasks/${task.id}`, { addLabels: labels, force: force || undefined }, `labelled #${task.id} ${labels.map((l) => `#${l}`).join(' ')}`)
    )
      setNewLabels('');
  };
  const removeLabel = (label: string) =>
    act('PATCH', `/tasks/${task.id}`, { removeLabels: [label], force: force || undefined }, `#${task.id} no longer has #${label}`);
  return (
    <div class="plan">
      <label class="prio-edit">
        Priority{' '}
        <select
          name="priority"
          value={String(task.priority)}
          disabled={closed}
          onChange={(e) => void setPriority(Number((e.target as HTMLSelectElement).value))}
        >
          <PriorityOptions />
        </select>
      </label>
      {task.claimWhy && (
        <span class="muted claim-why" title="why it stands where it does in Ready (tasks ready --explain)">
          {task.claimOrder === 0 ? 'next to be claimed' : `${(task.claimOrder ?? 0) + 1}. to be claimed`}: {task.claimWhy}
        </span>
      )}
      <div class="labels">
        {task.labels.map((label) => (
          <span class="label" data-label={label}>
            #{label}
            {!closed && (
              <button class="x" title={`remove the label ${label}`} aria-label={`remove #${label}`} onClick={() => void removeLabel(label)}>
                ×
              </button>
            )}
          </span>
        ))}
        {task.labels.length === 0 && <span class="muted">no labels</span>}
      </div>
      {!closed && (
        <form onSubmit={addLabels} class="add-labels">
          <input name="labels" placeholder="add labels: ui, parser" value={newLabels} onInput={(e) => setNewLabels((e.target as HTMLInputElement).value)} />
          <button type="submit">Add</button>
        </form>
      )}
      {task.paths.length > 0 && (
        <p class="meta paths">
          files:{' '}
          {task.paths.map((p) => (
            <code>{p}</code>
          ))}
        </p>
      )}
    </div>
  );
}

/**
 * The fields as typed: they follow changes made elsewhere until the person
 * starts typing, and Save sends only what differs from the task.
 */
function useTaskFields({ task, act, force }: PartProps) {
  const [fields, setFields] = useState<Fields>(() => fieldsOf(task));
  const [dirty, setDirty] = useState(false);
  const typed = useRef(fields);
  typed.current = fields;
  useEffect(() => {
    if (!dirty) setFields(fieldsOf(task)); // follow changes made elsewhere until the person starts typing
  }, [task]);
  const edit = (key: keyof Fields) => (e: Event) => {
    setFields({ ...fields, [key]: (e.target as HTMLInputElement).value });
    setDirty(true);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const before = fieldsOf(task);
    const patch: Partial<Fields> = {};
    for (const key of Object.keys(fields) as (keyof Fields)[]) if (fields[key] !== before[key]) patch[key] = fields[key];
    if (!Object.keys(patch).length) return setDirty(false);
    const sent = fields;
    // Typing that went on while the write was in flight stays, and stays unsaved.
    if (await act('PATCH', `/tasks/${task.id}`, { ...patch, force: force || undefined }, `updated #${task.id}`)) setDirty(typed.current !== sent);
  };
  return { fields, dirty, edit, save };
}

/** Subject, description, activeForm and owner, saved together (as `tasks update`). */
function FieldsForm(props: PartProps) {
  const { fields, dirty, edit, save } = useTaskFields(props);
  const closed = props.task.status === 'completed';
  return (
    <form onSubmit={save} class="fields">
      <label>
        Subject
        <input name="subject" value={fields.subject} onInput={edit('subject')} disabled={closed} />
      </label>
      <label>
        Description
        <textarea name="description" rows={5} value={fields.description} onInput={edit('description')} disabled={closed} />
      </label>
      <label>
        <span>
          Doing now <span class="muted">(activeForm)</span>
        </span>
        <input name="activeForm" value={fields.activeForm} onInput={edit('activeForm')} disabled={closed} />
      </label>
      <label>
        <span>
          Owner <span class="muted">("" unassigns)</span>
        </span>
        <input name="owner" value={fields.owner} onInput={edit('owner')} disabled={closed} />
      </label>
      {!closed && (
        <button type="submit" class="primary" disabled={!dirty}>
          Save
        </button>
      )}
    </form>
  );
}

/** The kanban's moves as buttons, delete, and the `force` box they share with the rest of the panel. */
function TaskMoves({ task, act, force, setForce, close }: PartProps & { setForce: (force: boolean) => void; close: () => void }) {
  const closed = task.status === 'completed';
  return (
    <div class="actions">
      {(task.column === 'ready' || task.column === 'blocked') && (
        <button onClick={() => act('POST', `/tasks/${task.id}/start`, {}, `started #${task.id}`)}>Start</button>
      )}
      {task.column === 'review' && <ReviewButtons task={task} act={act} />}
      {!closed && task.column !== 'review' && (
        <button onClick={() => act('POST', `/tasks/${task.id}/done`, { force: force || undefined }, `finished #${task.id}`)}>Done</button>
      )}
      {task.status === 'in_progress' && (
        <button onClick={() => act('POST', `/tasks/${task.id}/release`, { force: force || undefined }, `released #${task.id}`)}>Release</button>
      )}
      <button
        class="danger"
        onClick={() =>
          confirm(`Delete #${task.id}? Its file stays as a tombstone; it blocks nobody any more.`) &&
          act('POST', `/tasks/${task.id}/delete`, {}, `deleted #${task.id}`).then((r) => r && close())
        }
      >
        Delete
      </button>
      {!closed && (
        <label class="force" title="as --force: complete or release a task someone else holds, or complete a blocked one">
          <input type="checkbox" checked={force} onChange={(e) => setForce((e.target as HTMLInputElement).checked)} /> force
        </label>
      )}
    </div>
  );
}

/** The notes, and a box to add one (as `tasks note`; Ctrl+Enter sends). */
function NotesPart({ task, act }: { task: WebTask; act: Act }) {
  const [note, setNote] = useState('');
  const addNote = async (e: Event) => {
    e.preventDefault();
    // Blank text goes to the server too: it refuses it in the words of `tasks note`.
    if (await act('POST', `/tasks/${task.id}/notes`, { text: note }, `noted on #${task.id}`)) setNote('');
  };
  return (
    <>
      <h3>Notes</h3>
      <ul class="notes">
        {task.notes.map((n) => (
          <li data-note>
            <span class="muted" title={n.at}>
              {dateTime(n.at)}
            </span>{' '}
            <b>{n.owner || 'nobody'}</b>: <span class="text">{n.text}</span>
          </li>
        ))}
        {task.notes.length === 0 && <li class="muted">none</li>}
      </ul>
      <form onSubmit={addNote} class="add-note">
        <textarea
          name="note"
          rows={2}
          placeholder="add a note: what you found, tried or decided"
          value={note}
          onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void addNote(e);
          }}
        />
        <button type="submit">Add note</button>
      </form>
    </>
  );
}

/** What an edge list gets: the task, how to write, how to name and open the task at the other end. */
interface EdgePartProps {
  task: WebTask;
  act: Act;
  name: (id: number) => string;
  open: (id: number) => void;
}

/** What the task waits for (as `tasks dep add|rm`). */
function BlockersPart({ task, act, byId, name, open }: EdgePartProps & { byId: Map<number, WebTaskRef> }) {
  const [newBlocker, setNewBlocker] = useState('');
  const closed = task.status === 'completed';
  const addBlocker = async (e: Event) => {
    e.preventDefault();
    for (const id of typedIds(newBlocker)) if (!(await act('POST', `/tasks/${task.id}/blockers`, { blocker: id }, `#${task.id} now waits for ${id}`))) return;
    setNewBlocker('');
  };
  return (
    <>
      <h3>Waits for</h3>
      <ul class="edges">
        {task.blockedBy.map((id) => (
          <li>
            <button class="link" onClick={() => open(id)}>
              {name(id)}
            </button>{' '}
            <span class="muted">{byId.get(id)?.status.replace('_', ' ') ?? 'not on the board'}</span>{' '}
            <button
              class="x"
              title={`#${task.id} no longer waits for #${id}`}
              onClick={() => act('DELETE', `/tasks/${task.id}/blockers/${id}`, undefined, `#${task.id} no longer waits for #${id}`)}
            >
              remove
            </button>
          </li>
        ))}
        {task.blockedBy.length === 0 && <li class="muted">nothing</li>}
      </ul>
      {!closed && (
        <form onSubmit={addBlocker} class="add-edge">
          <input name="blocker" placeholder="#id it waits for" value={newBlocker} onInput={(e) => setNewBlocker((e.target as HTMLInputElement).value)} />
          <button type="submit">Add</button>
        </form>
      )}
    </>
  );
}

/** What waits for the task (as `tasks dep add|rm` on the other task). */
function DependentsPart({ task, act, name, open }: EdgePartProps) {
  const [newDependent, setNewDependent] = useState('');
  const closed = task.status === 'completed';
  const addDependent = async (e: Event) => {
    e.preventDefault();
    for (const id of typedIds(newDependent))
      if (!(await act('POST', `/tasks/${id.replace(/^#/, '')}/blockers`, { blocker: task.id }, `${id} now waits for #${task.id}`))) return;
    setNewDependent('');
  };
  return (
    <>
      <h3>Blocks</h3>
      <ul class="edges">
        {task.blocks.map((id) => (
          <li>
            <button class="link" onClick={() => open(id)}>
              {name(id)}
            </button>{' '}
            {!closed && (
              <button
                class="x"
                title={`#${id} no longer waits for #${task.id}`}
                onClick={() => act('DELETE', `/tasks/${id}/blockers/${task.id}`, undefined, `#${id} no longer waits for #${task.id}`)}
              >
                remove
              </button>
            )}
          </li>
        ))}
        {task.blocks.length === 0 && <li class="muted">nothing</li>}
      </ul>
      <form onSubmit={addDependent} class="add-edge">
        <input
          name="dependent"
          placeholder="#id that waits for this one"
          value={newDependent}
          onInput={(e) => setNewDependent((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Add</button>
      </form>
    </>
  );
}
