/**
 * `tasks prime`: what an agent needs to work the board, sized for a system
 * prompt or a session-start hook. An agent whose context was compacted
 * forgets the board unless it is told again; the primer is that telling: the
 * protocol in a few lines (the tool description's own steps), the rules of a
 * shared board, who the agent is and what it holds, and the open board as
 * the tool's results show it (within the board's echoBudget).
 */
import { inReview, renderAgentBoard, type TaskStore } from '@dotasks/core/internal';
import { TODO_TOOL_NAME } from './schema.js';
import { PROTOCOL_STEPS } from './todo-tool.js';

/** The rules of a board shared with other agents and people, past the four steps. */
export const SHARED_BOARD_RULES: readonly string[] = [
  'Work only on a task you hold: claim it first; never start, complete or edit a task another owner holds.',
  'Cannot finish it? "release" gives it back for someone else; leave a "note" saying what you found.',
  'Found more work while on a task? "create" it (with add_blocked_by where it must wait) instead of doing it unrecorded.',
  'Never edit the files in .tasks/ by hand: every change goes through the tool (or the tasks CLI), which keeps both sides of each edge and the locks.',
];

/** What `renderPrime` returns, and `tasks prime --json` prints. */
export interface Primer {
  owner: string;
  /** The whole primer, as `tasks prime` prints it. */
  text: string;
  /** The board part alone, `<TASK_BOARD>…</TASK_BOARD>`. */
  board: string;
  /** Ids in progress for `owner`. */
  holding: number[];
}

/** The primer for `owner` on the board of `store`. */
export function renderPrime(store: TaskStore, owner: string): Primer {
  const snapshot = store.loadOpenWork();
  const board = renderAgentBoard(snapshot, { budget: store.config.echoBudget });
  const holding = snapshot.tasks.filter((t) => t.status === 'in_progress' && t.owner === owner && !inReview(t)).map((t) => t.id);
  const lines = [
    `This repository plans its work on a shared task board (dotasks, in .tasks/); other agents and people work it too.`,
    `Use the "${TODO_TOOL_NAME}" tool for every step of the plan (or the tasks CLI: tasks claim --next, tasks done ID, tasks release ID, tasks note ID TEXT). Protocol:`,
    ...PROTOCOL_STEPS,
    ...SHARED_BOARD_RULES.map((rule) => `- ${rule}`),
    `You act as "${owner}". ${holding.length ? `In progress for you: ${holding.map((id) => `#${id}`).join(', ')}; finish or release ${holding.length === 1 ? 'it' : 'them'} first.` : 'You hold no task now.'}`,
    board,
  ];
  return { owner, text: lines.join('\n'), board, holding };
}
