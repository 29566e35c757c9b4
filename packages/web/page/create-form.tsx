import { useState } from 'preact/hooks';
import type { Act } from './act';
import { DEFAULT_PRIORITY, typedLabels } from './model';
import { PriorityOptions } from './priority-options';

interface CreateFormProps {
  act: Act;
  /** Called with the new task's id, or nothing when cancelled. */
  close: (id?: number) => void;
}

/**
 * A new task, as `tasks create`: subject, description, owner, priority,
 * labels (`ui, parser`), and the ids it waits for or blocks (`3, #4`); the store refuses what the CLI refuses
 * (an empty or multi-line subject, a missing task, a cycle).
 */
export function CreateForm({ act, close }: CreateFormProps) {
  const [subject, setSubject] = useState('');
  const [description, setDescription] = useState('');
  const [owner, setOwner] = useState('');
  const [blockedBy, setBlockedBy] = useState('');
  const [blocks, setBlocks] = useState('');
  const [priority, setPriority] = useState(String(DEFAULT_PRIORITY));
  const [labels, setLabels] = useState('');
  const value = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);
  const submit = async (e: Event) => {
    e.preventDefault();
    const result = await act(
      'POST',
      '/tasks',
      { subject, description, owner, blockedBy, blocks, priority: Number(priority), labels: typedLabels(labels) },
      `created a task: ${subject}`,
    );
    if (result) close(result.task);
  };
  return (
    <div class="modal" onClick={(e) => e.target === e.currentTarget && close()}>
      <form class="create" onSubmit={submit} aria-label="new task">
        <h2>New task</h2>
        <label>
          Subject
          <input name="subject" required value={subject} onInput={value(setSubject)} autoFocus />
        </label>
        <label>
          Description
          <textarea name="description" rows={4} value={description} onInput={value(setDescription)} />
        </label>
        <label>
          <span>
            Waits for <span class="muted">(ids: 2, 3)</span>
          </span>
          <input name="blockedBy" value={blockedBy} onInput={value(setBlockedBy)} />
        </label>
        <label>
          <span>
            Blocks <span class="muted">(ids)</span>
          </span>
          <input name="blocks" value={blocks} onInput={value(setBlocks)} />
        </label>
        <label>
          <span>
            Assign to <span class="muted">(optional)</span>
          </span>
          <input name="owner" value={owner} onInput={value(setOwner)} />
        </label>
        <div class="row">
          <label>
            Priority
            <select name="priority" value={priority} onChange={value(setPriority)}>
              <PriorityOptions />
            </select>
          </label>
          <label>
            <span>
              Labels <span class="muted">(ui, parser)</span>
            </span>
            <input name="labels" value={labels} onInput={value(setLabels)} />
          </label>
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Create
          </button>
          <button type="button" onClick={() => close()}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}
