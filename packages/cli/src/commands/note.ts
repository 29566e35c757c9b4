import { readFileSync } from 'node:fs';
import { TasksError, parseTaskId } from '@dotasks/core';
import { actingOwner, label, openStore, viewTask, type CommandOutput, type GlobalOptions } from '../context.js';
import type { CommandArgs } from '../command-table.js';

/** What `tasks note` takes, as declared in the command table. */
export interface NoteOptions extends CommandArgs<'note'>, GlobalOptions {}

/** Appends `{at, owner, text}` to a task's notes (in its file, so the note travels through git). */
export async function note(options: NoteOptions): Promise<CommandOutput> {
  const id = parseTaskId(options.id);
  const words = options.text ?? [];
  if (options.stdin && words.length) throw new TasksError('E_USAGE', 'give the note as words or with --stdin, not both');
  const text = options.stdin ? readStdin() : words.join(' ');
  if (!text?.trim()) throw new TasksError('E_USAGE', `note needs some text: tasks note ${id} "what you found"`);
  const store = openStore(options);
  const result = await store.addNote(id, text, { actor: actingOwner(options) });
  const added = result.task.notes?.at(-1);
  return { text: `noted on ${label(result.task)}`, json: { task: viewTask(store, result.task), note: added } };
}

function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch (error) {
    throw new TasksError('E_IO', `--stdin reads the note from stdin, which could not be read (${(error as Error).message})`);
  }
}
