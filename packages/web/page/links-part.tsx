import type { WebTask } from '../src/wire';

/**
 * A task's soft links (docs/protocol.md, "Links"), read only: "related:
 * #4 #9", "found while on #3", "found here: #7". They block nothing, so they
 * stand apart from the edges; `tasks update --related` changes them.
 */
export function LinksPart({ task, name, open }: { task: WebTask; name: (id: number) => string; open: (id: number) => void }) {
  const rows: [string, number[]][] = [
    ['related:', task.related],
    ['found while on', task.discoveredFrom],
    ['found here:', task.discovered],
  ];
  if (rows.every(([, ids]) => ids.length === 0)) return null;
  return (
    <p class="meta links">
      {rows
        .filter(([, ids]) => ids.length > 0)
        .map(([label, ids]) => (
          <span class="link-row" data-links={label}>
            {label}{' '}
            {ids.map((id) => (
              <button class="link" title={name(id)} onClick={() => open(id)}>
                #{id}
              </button>
            ))}{' '}
          </span>
        ))}
    </p>
  );
}
