import { TaskStore, findBoard, isClosed } from '@dotasks/core';

/** Commands whose first positional is a task id. */
export const ID_COMMANDS = new Set(['show', 'start', 'done', 'claim', 'update', 'release', 'delete', 'heartbeat', 'dep', 'run', 'wait']);

/**
 * Task ids to offer while completing `tasks <command> <TAB>`: open tasks
 * first (the likely targets), each with its subject for zsh's descriptions.
 */
export function completeTaskIds(command: string, options: { dir?: string; zsh: boolean }): string[] {
  let store: TaskStore;
  try {
    store = new TaskStore(findBoard({ dir: options.dir }));
  } catch {
    return [];
  }
  const snapshot = store.loadBoard();
  const wanted = snapshot.tasks.filter((t) => t.status !== 'deleted' && (command === 'show' || !isClosed(t.status)));
  return wanted.map((t) => (options.zsh ? `${t.id}:${t.subject.replace(/:/g, '\\:')}` : String(t.id)));
}
