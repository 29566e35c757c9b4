/**
 * The board index's bytes (index-file.ts), made from its entry lines: the
 * entries sorted into the open part and the rest, the header's counts,
 * closed ranges, parents and closed neighbours of open tasks worked out from
 * them, and the header's own length settled. An exact pass (board-index.ts)
 * writes it from every entry; the open view (index-write-back.ts) from the
 * open work, with what the history file holds beside it (HeldHistory).
 */
import { isClosed } from '../format/format.js';
import { mergeRanges } from './id-ranges.js';
import { FORMAT, KNOWN_KEYS, VERSION, crc32Of, seal, type DirId, type FileId, type HistoryRef, type IndexHeader, type IndexLine } from './index-file.js';

/** Closed tasks an index counts without their entries among those it is written from: the ones its history file holds. */
export interface HeldHistory {
  closed: [number, number][];
  completed: number;
  deleted: number;
  kids: [number, number, 0 | 1][];
  blockers: [number, number][];
}

/** What an index says besides its entries. */
export interface IndexFields {
  dir: DirId | null;
  hwm: number | null;
  bad: string[];
  stamp: number | null;
  git: FileId | null;
}

/**
 * The header's line with `openBytes` set to what it measures, header
 * included, until the number written is the one it measures: a length that
 * crosses a power of ten (998 bytes with "openBytes":0, 1,000 with 998 in
 * it, 1,001 with 1000) takes a third look, and three passes stopped one
 * short, leaving a header that named the open part one byte off (the next
 * reader found the index unusable).
 */
function settleHeader(header: IndexHeader, openLength: number): string {
  for (;;) {
    const text = JSON.stringify(header) + '\n';
    const openBytes = Buffer.byteLength(text) + openLength;
    if (openBytes === header.openBytes) return text;
    header.openBytes = openBytes;
  }
}

/** IndexHeader.content: the parts' CRC, the history's seal, the bad names. */
function contentKey(entries: IndexLine[], openText: string, restText: string, history: HistoryRef | null, bad: string[], held: boolean): string {
  const crc32 = crc32Of();
  // Written from every entry (an exact pass): their lines in id order, wherever each is kept (history or rest part).
  if (!held) {
    let crc = 0;
    for (const e of entries) crc = crc32(e.line, crc32('\n', crc));
    return `${crc.toString(16)}-${bad.join('/')}`;
  }
  // Written from the open work alone (open-view.ts): the parts and the history they go with.
  return `v${crc32(restText, crc32(openText)).toString(16)}-${history?.seal ?? ''}-${bad.join('/')}`;
}

/** The closed children and the closed blockers of open tasks: from the entries, and what `held` says of the history's. */
function closedAroundOpen(
  openIds: ReadonlySet<number>,
  withParent: IndexLine[],
  withBlocks: IndexLine[],
  held: HeldHistory | undefined,
): { closedKids: [number, number, 0 | 1][]; closedBlockers: [number, number][] } {
  const closedKids: [number, number, 0 | 1][] = withParent
    .filter((e) => openIds.has(e.parent!))
    .map((e) => [e.parent!, e.id, e.status === 'deleted' ? 1 : 0] as [number, number, 0 | 1]);
  const closedBlockers: [number, number][] = [];
  for (const e of withBlocks) for (const d of e.blocks!) if (openIds.has(d)) closedBlockers.push([e.id, d]);
  if (held) {
    for (const kid of held.kids) if (openIds.has(kid[0])) closedKids.push(kid);
    for (const edge of held.blockers) if (openIds.has(edge[1])) closedBlockers.push(edge);
  }
  closedKids.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  closedBlockers.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  return { closedKids, closedBlockers };
}

/**
 * The index's bytes. `history` is the history file it goes with and which
 * closed tasks' entries that file holds as they are: those are left out of
 * the rest part, which keeps the other closed tasks (closed since the history
 * was written) and the unsure ids. The closed ranges, counts and closed
 * children cover every closed task either way.
 */
export function encodeIndex(
  fields: IndexFields,
  entries: IndexLine[],
  history: { ref: HistoryRef | null; holds(id: number): boolean },
  held?: HeldHistory,
): Buffer {
  entries.sort((a, b) => a.id - b.id);
  const open: string[] = [];
  const rest: string[] = [];
  const unsure: number[] = [];
  const closed: [number, number][] = [];
  const parents = new Set<number>();
  const closedWithParent: IndexLine[] = [];
  const closedWithBlocks: IndexLine[] = [];
  let completed = 0;
  let deleted = 0;
  for (const entry of entries) {
    if (entry.status === undefined) {
      unsure.push(entry.id);
      rest.push(entry.line);
    } else if (isClosed(entry.status)) {
      const last = closed.at(-1);
      if (last && last[1] === entry.id - 1) last[1] = entry.id;
      else closed.push([entry.id, entry.id]);
      if (entry.status === 'completed') completed++;
      else deleted++;
      if (entry.parent !== undefined) closedWithParent.push(entry);
      if (entry.blocks?.length) closedWithBlocks.push(entry);
      if (!history.holds(entry.id)) rest.push(entry.line);
    } else {
      open.push(entry.line);
      if (entry.parent !== undefined) parents.add(entry.parent);
    }
  }
  const openIds = new Set(entries.filter((e) => e.status !== undefined && !isClosed(e.status)).map((e) => e.id));
  const { closedKids, closedBlockers } = closedAroundOpen(openIds, closedWithParent, closedWithBlocks, held);
  if (held) {
    // Closed tasks the history holds and `entries` does not (an open view's write, open-view.ts).
    closed.splice(0, closed.length, ...mergeRanges(held.closed, closed));
    completed += held.completed;
    deleted += held.deleted;
  }
  const openText = `[${open.join(',\n')}]\n`;
  const restText = `[${rest.join(',\n')}]\n`;
  const content = contentKey(entries, openText, restText, history.ref, fields.bad, held !== undefined);
  // openBytes depends on the header's own length: settleHeader.
  const header: IndexHeader = {
    format: FORMAT,
    version: VERSION,
    keys: KNOWN_KEYS,
    dir: fields.dir,
    hwm: fields.hwm,
    closed,
    unsure,
    bad: fields.bad,
    parents: [...parents].sort((a, b) => a - b),
    history: history.ref,
    completed,
    deleted,
    closedKids,
    closedBlockers,
    content,
    stamp: fields.stamp,
    git: fields.git,
    openBytes: 0,
    open: open.length,
    rest: rest.length,
  };
  const headerText = settleHeader(header, Buffer.byteLength(openText));
  const head = Buffer.from(headerText + openText);
  const sealedHead = Buffer.concat([head, seal(head, head.length)]);
  const all = Buffer.concat([sealedHead, Buffer.from(restText)]);
  return Buffer.concat([all, seal(all, all.length)]);
}
