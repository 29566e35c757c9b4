/**
 * The one sanitizer of text from the board (subjects, owners, descriptions,
 * notes, metadata, messages that quote them) for anything shown on a
 * terminal: `tasks list`/`show`/…, the terminal board and the Markdown
 * export. A grapheme cluster with nothing visible in it is shown as the
 * escapes of its code points (`\x1b`, `\n`, `\u009b`, `\u202e`, `\u200b`):
 * C0 and C1 controls, DEL, bidi controls (U+202A–202E, U+2066–2069,
 * U+200E/200F, U+061C), zero-width spaces and joiners on their own, line and
 * paragraph separators, a combining mark with no letter to sit on; and tag
 * characters outside a flag. So a task
 * file cannot move the cursor, retitle the window, write the clipboard,
 * reorder a line, hide text or break the one-line-per-task list, and what is
 * shown is one cell wide per character it claims (docs/decisions.md,
 * "Terminal text"). Visible clusters stay as they are: accents, CJK, emoji
 * sequences. `--json` prints the text as it is.
 */
import { graphemes } from './graphemes.js';

// Everything that can make a cluster invisible; text without any of it (nearly every subject) is returned as it is, unsegmented.
const SUSPECT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Mn}\p{Me}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;
// The same for text kept on several lines: a newline or a tab (every multi-line description) is no reason to look closer.
const SUSPECT_IN_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}\p{Mn}\p{Me}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;
// A code point that draws something; a cluster without one is invisible (string-width's rule for a zero-width cluster).
const TAG = /[\u{e0000}-\u{e007f}]/u;
const TAGS = /[\u{e0000}-\u{e007f}]/gu;
const VISIBLE = /[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Mn}\p{Me}\p{Cs}\p{Default_Ignorable_Code_Point}]/u;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeCodePoint(c: string): string {
  const code = c.codePointAt(0)!;
  if (SHORT[c]) return SHORT[c];
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

function sanitize(text: string, keepLines: boolean): string {
  if (!(keepLines ? SUSPECT_IN_LINES : SUSPECT).test(text)) return text;
  let out = '';
  for (const segment of graphemes(text)) {
    // Tag characters are invisible; outside a subdivision flag (🏴 and tags) they can only hide text ("ASCII smuggling").
    if (VISIBLE.test(segment)) out += TAG.test(segment) && !segment.startsWith('\u{1f3f4}') ? segment.replace(TAGS, escapeCodePoint) : segment;
    // for…of walks code points, so a lone surrogate is escaped on its own and a pair never reaches here (it is visible).
    else for (const c of segment) out += keepLines && (c === '\n' || c === '\t') ? c : escapeCodePoint(c);
  }
  return out;
}

/** One line of text for a terminal: controls (newlines too), bidi controls and invisible characters shown as escapes. */
export function printable(text: string): string {
  return sanitize(text, false);
}

/** Text that may run over several lines (a description): newlines and tabs stay, everything else as printable shows it. */
export function printableLines(text: string): string {
  return sanitize(text, true);
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

/** The texts of a task that printableTask makes printable. */
export type PrintableFields = {
  subject: string;
  description?: string;
  owner?: string;
  activeForm?: string | null;
  paths?: string[];
  metadata?: Record<string, unknown>;
  labels?: string[];
  notes?: { at: string; owner: string; text: string }[];
  verify?: string;
  result?: string;
  review?: { since?: string; by?: string; at?: string };
};

/** True when some text of the task might print differently: one regex test per text, no copy. */
function mayNeedEscapes(task: PrintableFields): boolean {
  return (
    SUSPECT.test(task.subject) ||
    (task.owner !== undefined && SUSPECT.test(task.owner)) ||
    (typeof task.activeForm === 'string' && SUSPECT.test(task.activeForm)) ||
    (task.description !== undefined && SUSPECT_IN_LINES.test(task.description)) ||
    (task.paths?.some((p) => SUSPECT.test(p)) ?? false) ||
    (task.labels?.some((l) => SUSPECT.test(l)) ?? false) ||
    (task.notes?.some((n) => SUSPECT.test(n.at) || SUSPECT.test(n.owner) || SUSPECT_IN_LINES.test(n.text)) ?? false) ||
    (task.metadata !== undefined && Object.keys(task.metadata).some((k) => SUSPECT.test(k))) ||
    (task.verify !== undefined && SUSPECT.test(task.verify)) ||
    (task.result !== undefined && SUSPECT_IN_LINES.test(task.result)) ||
    (task.review !== undefined && [task.review.since, task.review.by, task.review.at].some((t) => typeof t === 'string' && SUSPECT.test(t)))
  );
}

/**
 * A task whose texts are printable, for renderers that write for people (the
 * task on disk is untouched): the task itself when nothing in it needs an
 * escape, else a copy.
 */
export function printableTask<T extends PrintableFields>(task: T): T {
  if (!mayNeedEscapes(task)) return task;
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
    ...(task.verify !== undefined ? { verify: printable(task.verify) } : {}),
    // A result may run over several lines, like a description.
    ...(task.result !== undefined ? { result: printableLines(task.result) } : {}),
    ...(task.review !== undefined ? { review: printableValue(task.review) } : {}),
    // Values are shown as JSON, which escapes C0 controls itself; the caller passes the text through printableLines for the rest.
    ...(task.metadata ? { metadata: Object.fromEntries(Object.entries(task.metadata).map(([k, v]) => [printable(k), v])) } : {}),
  };
}
