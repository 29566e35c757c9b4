/**
 * A task's soft links (docs/protocol.md, "Links"): `related` (symmetric),
 * `discoveredFrom` (the tasks this one was found while working on) and its
 * other side, `discovered`. Arrays of ids kept on both sides like edges,
 * never part of readiness. Here only their shape in a file: how they are
 * read, written and copied; format.ts calls these for its Task.
 */

/** The link fields of a task file, in canonical order. */
export const LINK_FIELDS = ['related', 'discoveredFrom', 'discovered'] as const;
export type LinkField = (typeof LINK_FIELDS)[number];

/** The field the other task states a link in: `related` both ways, `discoveredFrom` on the found task and `discovered` on the one it was found from. */
export const LINK_OTHER_SIDE: Readonly<Record<LinkField, LinkField>> = { related: 'related', discoveredFrom: 'discovered', discovered: 'discoveredFrom' };

/** The link fields a task may have; each absent when it has no ids. */
export type TaskLinks = { [K in LinkField]?: number[] };

/** Sorted ascending, without duplicates (the same as format.ts's normalizeIds, which this file may not import). */
function sortedIds(ids: Iterable<number>): number[] {
  if (Array.isArray(ids) && ascending(ids)) return ids.slice();
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** True when every id is greater than the one before: sorted without repeats already. */
function ascending(ids: readonly number[]): boolean {
  for (let i = 1; i < ids.length; i++) if (!(ids[i] > ids[i - 1])) return false;
  return true;
}

/**
 * The link fields present in a parsed task file, copied; `fail` refuses the
 * file at a key. Lenient where edges are: unsorted and repeated ids are read
 * as they are (the next write sorts them).
 */
export function readLinkFields(obj: Record<string, unknown>, fail: (key: string, problem: string) => never, show: (value: unknown) => string): TaskLinks {
  const links: TaskLinks = {};
  for (const key of LINK_FIELDS) {
    const value = obj[key];
    if (value === undefined) continue;
    if (!Array.isArray(value)) fail(key, `"${key}" must be an array of task ids, got ${show(value)}`);
    for (const item of value as unknown[])
      if (typeof item !== 'number' || !Number.isSafeInteger(item) || item < 1) fail(key, `"${key}" must hold positive integer ids, got ${show(item)}`);
    links[key] = [...(value as number[])];
  }
  return links;
}

/** Sets the link fields that have ids on `out`, sorted without repeats: an empty list is written as nothing. */
export function writeLinkFields(links: TaskLinks, set: (key: LinkField, value: number[]) => void): void {
  for (const key of LINK_FIELDS) if (links[key]?.length) set(key, sortedIds(links[key]));
}

/** Fresh copies of the link fields that are present. */
export function copyLinkFields(links: TaskLinks): TaskLinks {
  const copy: TaskLinks = {};
  for (const key of LINK_FIELDS) if (links[key] !== undefined) copy[key] = [...links[key]];
  return copy;
}

/** The ids a task's links name, every field together, sorted without repeats. */
export function linkedIds(links: TaskLinks): number[] {
  return sortedIds(LINK_FIELDS.flatMap((key) => links[key] ?? []));
}

/** Adds `id` to `field` of `links`; true when it was not there. */
export function addLink(links: TaskLinks, field: LinkField, id: number): boolean {
  const list = links[field] ?? [];
  if (list.includes(id)) return false;
  links[field] = sortedIds([...list, id]);
  return true;
}

/** Removes `id` from `field` of `links` (the field goes when it empties); true when it was there. */
export function removeLink(links: TaskLinks, field: LinkField, id: number): boolean {
  const list = links[field];
  if (!list?.includes(id)) return false;
  const rest = list.filter((x) => x !== id);
  if (rest.length) links[field] = rest;
  else delete links[field];
  return true;
}

/** The link fields that have ids, sorted without repeats: what views show (an empty list shows as nothing). */
export function presentLinks(links: TaskLinks): TaskLinks {
  const out: TaskLinks = {};
  writeLinkFields(links, (key, ids) => (out[key] = ids));
  return out;
}
