/**
 * Sorted lists of id ranges `[from, to]`, as the board index's header keeps
 * the closed tasks (IndexHeader.closed): a lookup, a union and a difference.
 */

/** Whether `id` is in one of the sorted `ranges`. */
export function inRanges(ranges: [number, number][], id: number): boolean {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (id < ranges[mid][0]) hi = mid - 1;
    else if (id > ranges[mid][1]) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Two sorted lists of id ranges as one, sorted, touching ranges joined. */
export function mergeRanges(a: [number, number][], b: [number, number][]): [number, number][] {
  const all = [...a, ...b].sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [from, to] of all) {
    const last = out.at(-1);
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/** Ranges without the ids of `ids`. */
export function rangesWithout(ranges: [number, number][], ids: ReadonlySet<number>): [number, number][] {
  if (ids.size === 0) return ranges.map(([a, b]) => [a, b]);
  const cut = [...ids].sort((a, b) => a - b);
  const out: [number, number][] = [];
  let k = 0;
  for (const [from, to] of ranges) {
    let start = from;
    while (k < cut.length && cut[k] < from) k++;
    while (k < cut.length && cut[k] <= to) {
      if (cut[k] > start) out.push([start, cut[k] - 1]);
      start = cut[k] + 1;
      k++;
    }
    if (start <= to) out.push([start, to]);
  }
  return out;
}
