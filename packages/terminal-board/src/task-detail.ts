/**
 * The detail view of the terminal board (Enter on a card): the task whole,
 * its status and holder, lease, worktree and branch, its edges with their
 * subjects, links, family, metadata, description and notes, scrolled by
 * line. board-view.ts draws the columns around it.
 */
import { createElement as h, type ReactNode } from 'react';
import { Box, Text } from 'ink';
import { inReview, openBlockers, type Task } from '@dotasks/core';
import { describeBranchStatus } from '@dotasks/core/internal';
import { printable } from '@dotasks/core/terminal';
import { cardTitle, familyLines, leaseLeft, notesOf, worktreeOf, type Card } from './board-model.js';
import type { BoardState } from './board-source.js';

/** Where and how the detail is drawn: its size, the clock for the lease, colours, and the first line shown. */
export interface DetailOptions {
  width: number;
  height: number;
  now: number;
  color: boolean;
  scroll: number;
}

/** A line of the detail view, which wraps instead of cutting: tabs become spaces (a terminal would jump to its own tab stops). */
function detailLine(text: string): string {
  return printable(text.replace(/\t/g, '    '));
}

/** The review of a task in its detail: where it stands (and who reviews it now); '' for a task without one. */
function reviewLine(task: Task, lease: Card['lease']): string {
  const r = task.review;
  if (!r) return '';
  if (inReview(task)) return `review: waits since ${r.since ?? '?'}${lease?.review ? ` · reviewing: ${lease.owner}` : ''} · a approves, x sends it back`;
  if (r.state === 'approved' || r.state === 'rejected') return `review: ${r.state} by ${r.by || '(nobody)'} at ${r.at ?? '?'}`;
  return r.required === true ? 'review: required' : r.required === false ? 'review: not required' : '';
}

/** `#3 Parser (in progress)`, or `#3 (missing)`. */
function describeTaskRef(id: number, lookup: (id: number) => Task | undefined): string {
  const task = lookup(id);
  return task ? `#${id} ${task.subject} (${task.status.replace('_', ' ')})` : `#${id} (missing)`;
}

/** A task's soft links (docs/protocol.md, "Links"), one line each kind it has: `related: #4 #9`, `found while on #3`, `found here: #7`. */
function linkLines(task: Task): string[] {
  const ids = (list: number[] | undefined) => (list ?? []).map((id) => `#${id}`).join(' ');
  const lines: string[] = [];
  if (task.related?.length) lines.push(`related: ${ids(task.related)}`);
  if (task.discoveredFrom?.length) lines.push(`found while on ${ids(task.discoveredFrom)}`);
  if (task.discovered?.length) lines.push(`found here: ${ids(task.discovered)}`);
  return lines;
}

/** The detail of the card's task, from the line `options.scroll` on. */
export function renderDetail(card: Card, state: BoardState, options: DetailOptions): ReactNode {
  const { task } = card;
  const lookup = (id: number) => state.snapshot.byId.get(id);
  const lines: string[] = [cardTitle(task), `status: ${task.status.replace('_', ' ')}${task.owner ? ` · owner: ${task.owner}` : ''}`];
  if (task.activeForm) lines.push(`now: ${task.activeForm}`);
  const review = reviewLine(task, card.lease);
  if (review) lines.push(review);
  const left = leaseLeft(card.lease, options.now);
  if (left) lines.push(`lease: ${left}${card.lease?.pid ? ` · pid ${card.lease.pid}` : ''}${card.lease ? ` · host ${card.lease.host}` : ''}`);
  const worktree = worktreeOf(card);
  if (worktree) lines.push(`worktree: ${worktree}`);
  const branch = state.branches?.get(task.id);
  if (branch) lines.push(`branch: ${branch.branch} → ${branch.target}: ${describeBranchStatus(branch)}`);
  const open = task.status === 'pending' ? openBlockers(task, lookup) : [];
  lines.push(
    `blocked by: ${task.blockedBy.length ? task.blockedBy.map((id) => describeTaskRef(id, lookup)).join(', ') : '(none)'}${open.length ? ` · waiting for ${open.map((id) => `#${id}`).join(', ')}` : ''}`,
  );
  lines.push(`blocks: ${task.blocks.length ? task.blocks.map((id) => describeTaskRef(id, lookup)).join(', ') : '(none)'}`);
  lines.push(...linkLines(task));
  lines.push(...familyLines(task, state.snapshot));
  for (const [key, value] of Object.entries(task.metadata ?? {})) lines.push(`meta.${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  lines.push('', ...(task.description ? task.description.split('\n') : ['(no description)']));
  const notes = notesOf(task);
  if (notes) lines.push('', `notes (${notes.length}):`, ...notes.map((note) => `- ${note}`));
  const room = Math.max(1, options.height - 2);
  const start = Math.min(options.scroll, Math.max(0, lines.length - 1));
  return h(
    Box,
    { flexDirection: 'column', height: options.height, width: options.width, borderStyle: 'single', overflow: 'hidden' },
    ...lines.slice(start, start + room).map((line, n) => h(Text, { key: n, wrap: 'wrap', bold: options.color && n + start === 0 }, detailLine(line) || ' ')),
  );
}
