/**
 * Text from the board (subjects, owners, descriptions, metadata, messages
 * that quote them) made safe to print on a terminal: every C0 control, DEL
 * and C1 control becomes a visible escape (`\x1b`, `\n`, `\u009b`), so a
 * task file cannot move the cursor, retitle the window, clear the screen or
 * break the one-line-per-task list. `--json` prints the text as it is.
 */

// C0 controls, DEL and C1 controls. An escape sequence loses its ESC (or CSI), which is all it takes to make it inert.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROL_BUT_NEWLINE_AND_TAB = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escape(c: string): string {
  const code = c.charCodeAt(0);
  return SHORT[c] ?? (code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/** One line of text for a terminal: controls (newlines too) shown as escapes. */
export function printable(text: string): string {
  return text.replace(CONTROL, escape);
}

/** Text that may run over several lines (a description): newlines and tabs stay, every other control is shown as an escape. */
export function printableLines(text: string): string {
  return text.replace(CONTROL_BUT_NEWLINE_AND_TAB, escape);
}

/** Every string in a JSON-like value made printable (metadata shown to people). */
export function printableValue<T>(value: T): T {
  if (typeof value === 'string') return printable(value) as T;
  if (Array.isArray(value)) return value.map(printableValue) as T;
  if (value && typeof value === 'object') {
    const out = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(value))
      Object.defineProperty(out, printable(k), { value: printableValue(v), enumerable: true, writable: true, configurable: true });
    return out as T;
  }
  return value;
}

type PrintableFields = {
  subject: string;
  description?: string;
  owner?: string;
  activeForm?: string | null;
  paths?: string[];
  metadata?: Record<string, unknown>;
  labels?: string[];
  notes?: { at: string; owner: string; text: string }[];
};

const HAS_CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const HAS_CONTROL_BUT_NEWLINE_AND_TAB = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** True when some text of the task would print differently (almost never: a listing of 10,000 tasks then copies none). */
function needsEscapes(task: PrintableFields): boolean {
  return (
    HAS_CONTROL.test(task.subject) ||
    (task.owner !== undefined && HAS_CONTROL.test(task.owner)) ||
    (typeof task.activeForm === 'string' && HAS_CONTROL.test(task.activeForm)) ||
    (task.description !== undefined && HAS_CONTROL_BUT_NEWLINE_AND_TAB.test(task.description)) ||
    (task.paths?.some((p) => HAS_CONTROL.test(p)) ?? false) ||
    (task.labels?.some((l) => HAS_CONTROL.test(l)) ?? false) ||
    (task.notes?.some((n) => HAS_CONTROL.test(n.at) || HAS_CONTROL.test(n.owner) || HAS_CONTROL_BUT_NEWLINE_AND_TAB.test(n.text)) ?? false) ||
    (task.metadata !== undefined && Object.keys(task.metadata).some((k) => HAS_CONTROL.test(k)))
  );
}

/**
 * A task whose texts are printable, for renderers that write for people (the
 * task on disk is untouched): the task itself when nothing in it needs an
 * escape, else a copy.
 */
export function printableTask<T extends PrintableFields>(task: T): T {
  if (!needsEscapes(task)) return task;
  return {
    ...task,
    ...(task.labels ? { labels: task.labels.map(printable) } : {}),
    // A note may run over several lines (a worker's output tail): shown like a description.
    ...(task.notes ? { notes: task.notes.map((n) => ({ ...n, at: printable(n.at), owner: printable(n.owner), text: printableLines(n.text) })) } : {}),
    subject: printable(task.subject),
    ...(task.description !== undefined ? { description: printableLines(task.description) } : {}),
    ...(task.owner !== undefined ? { owner: printable(task.owner) } : {}),
    ...(typeof task.activeForm === 'string' ? { activeForm: printable(task.activeForm) } : {}),
    ...(task.paths ? { paths: task.paths.map((p) => printable(p)) } : {}),
    // Values are shown as JSON, which escapes C0 controls itself; the caller passes the text through printableLines for the rest.
    ...(task.metadata ? { metadata: Object.fromEntries(Object.entries(task.metadata).map(([k, v]) => [printable(k), v])) } : {}),
  };
}
