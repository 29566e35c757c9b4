import { DEFAULT_PRIORITY, PRIORITIES } from './model';

/** The `<option>`s of a priority `<select>`: P0 (most urgent) … P4, the default marked; the panel's and the create form's. */
export function PriorityOptions() {
  return (
    <>
      {PRIORITIES.map((p) => (
        <option value={String(p)}>
          P{p}
          {p === 0 ? ' (most urgent)' : p === DEFAULT_PRIORITY ? ' (default)' : ''}
        </option>
      ))}
    </>
  );
}
