import type { WebTask, WebTaskRef } from '../src/wire';

/**
 * A task's place in the hierarchy (docs/protocol.md, "Parents"), read only:
 * the chain of its parents, nearest first ("part of #2: Story, under #1:
 * Epic"), and its children with their status under their progress.
 * `tasks update ID --parent` changes it.
 */
export function FamilyPart({
  task,
  byId,
  name,
  open,
}: {
  task: WebTask;
  byId: Map<number, WebTaskRef>;
  name: (id: number) => string;
  open: (id: number) => void;
}) {
  const chain = ancestors(task, byId);
  const children = [...byId.values()].filter((t) => t.parent === task.id).sort((a, b) => a.id - b.id);
  if (chain.length === 0 && children.length === 0) return null;
  return (
    <>
      {chain.length > 0 && (
        <p class="meta parents" data-parents={chain.join(' ')}>
          part of{' '}
          {chain.map((id, i) => (
            <>
              {i > 0 && ', under '}
              <button class="link" onClick={() => open(id)}>
                {name(id)}
              </button>
            </>
          ))}
        </p>
      )}
      {children.length > 0 && (
        <>
          <h3>Children{task.progress && <span class="muted"> {`${task.progress.done}/${task.progress.total} done`}</span>}</h3>
          <ul class="edges children">
            {children.map((child) => (
              <li data-child={child.id}>
                <button class="link" onClick={() => open(child.id)}>
                  {name(child.id)}
                </button>{' '}
                <span class="muted">{child.column === 'review' ? 'in review' : child.status.replace('_', ' ')}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

/** The parents of `task`, nearest first; the chain stops at one not on the page (deleted or missing) and where it repeats (a cycle made by hand). */
function ancestors(task: WebTask, byId: Map<number, WebTaskRef>): number[] {
  const out: number[] = [];
  const seen = new Set([task.id]);
  for (let parent = task.parent; parent !== undefined && !seen.has(parent); parent = byId.get(parent)?.parent) {
    out.push(parent);
    seen.add(parent);
  }
  return out;
}
