/**
 * One file of a setup plan against what the file holds now: what is in
 * place, what is missing or differs, the text with everything in place, and
 * the text with everything of ours taken out. Pure: text in, text out.
 */
import type { Node } from 'jsonc-parser';
import type { BlockFilePlan, FilePlan, HookItem, JsonFilePlan, JsonItem } from './clients.js';
import { appendEntry, isEmptyObject, nodeAt, parseJsonText, removeAt, setMember, valueAt, type JsonPath } from './json-text.js';
import { locateBlock, removeBlock, writeBlock, markers } from './marked-text.js';

/** One thing of ours in a file that is not as setup writes it. */
export interface Drift {
  label: string;
  state: 'missing' | 'differs';
}

/** A file that setup cannot edit: it does not parse, or it clashes with what setup writes. */
export class BadFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

const HOOKS: JsonPath = ['hooks'];

/** The same JSON value, whatever the key order (the parser's objects have no prototype, so isDeepStrictEqual does not do). */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  if (a !== null && typeof a === 'object') {
    if (b === null || typeof b !== 'object' || Array.isArray(b)) return false;
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
    );
  }
  return a === b;
}

/** Where our hook is: every [group, hook] index pair under hooks[event] whose command is ours. */
function findHooks(tree: Node, item: HookItem): { group: number; hook: number; value: unknown; alone: boolean }[] {
  const groups = valueAt(tree, [...HOOKS, item.event]);
  if (!Array.isArray(groups)) return [];
  const found: { group: number; hook: number; value: unknown; alone: boolean }[] = [];
  groups.forEach((group: unknown, g) => {
    const hooks = (group as { hooks?: unknown })?.hooks;
    if (!Array.isArray(hooks)) return;
    hooks.forEach((hook: unknown, h) => {
      const command = (hook as { command?: unknown })?.command;
      if (typeof command === 'string' && item.ours.test(command)) found.push({ group: g, hook: h, value: hook, alone: hooks.length === 1 });
    });
  });
  return found;
}

function jsonItemState(tree: Node, item: JsonItem): 'ok' | Drift['state'] {
  switch (item.kind) {
    case 'member': {
      const node = nodeAt(tree, item.path);
      if (!node) return 'missing';
      return sameJson(valueAt(tree, item.path), item.value) ? 'ok' : 'differs';
    }
    case 'entry': {
      const list = valueAt(tree, item.path);
      return Array.isArray(list) && list.includes(item.value) ? 'ok' : 'missing';
    }
    case 'hook': {
      const found = findHooks(tree, item);
      if (found.length === 0) return 'missing';
      return found.some((f) => sameJson(f.value, item.hook)) ? 'ok' : 'differs';
    }
  }
}

function parseOrThrow(path: string, text: string): Node {
  const parsed = parseJsonText(text);
  if ('problem' in parsed) {
    const { line, column, message } = parsed.problem;
    throw new BadFileError(path, `not valid JSON (line ${line}, column ${column}: ${message})`);
  }
  return parsed.tree;
}

/** Refuses, before anything is written, a container of ours that has the wrong type (`"hooks": []`). */
function checkShapes(plan: JsonFilePlan, tree: Node): void {
  const expect = (path: JsonPath, type: 'object' | 'array') => {
    const node = nodeAt(tree, path);
    if (node && node.type !== type) throw new BadFileError(plan.path, `${path.join('.')} is not an ${type}; fix it, then run tasks setup again`);
  };
  for (const item of plan.items) {
    if (item.kind === 'member') for (let i = 1; i < item.path.length; i++) expect(item.path.slice(0, i), 'object');
    if (item.kind === 'entry') {
      for (let i = 1; i < item.path.length; i++) expect(item.path.slice(0, i), 'object');
      expect(item.path, 'array');
    }
    if (item.kind === 'hook') {
      expect(HOOKS, 'object');
      expect([...HOOKS, item.event], 'array');
    }
  }
}

/** The drift of a JSON file (undefined text: the file does not exist). */
function jsonDrift(plan: JsonFilePlan, text: string | undefined): Drift[] {
  if (text === undefined) return plan.items.map((item) => ({ label: item.label, state: 'missing' }));
  const tree = parseOrThrow(plan.path, text);
  checkShapes(plan, tree);
  return plan.items.flatMap((item) => {
    const state = jsonItemState(tree, item);
    return state === 'ok' ? [] : [{ label: item.label, state }];
  });
}

function applyJsonItem(text: string, item: JsonItem): string {
  const tree = parseOrThrow('', text);
  if (jsonItemState(tree, item) === 'ok') return text;
  switch (item.kind) {
    case 'member':
      return setMember(text, item.path, item.value);
    case 'entry':
      return appendEntry(text, item.path, item.value);
    case 'hook': {
      const found = findHooks(tree, item);
      if (found.length > 0) return setMember(text, [...HOOKS, item.event, found[0]!.group, 'hooks', found[0]!.hook], item.hook);
      return appendEntry(text, [...HOOKS, item.event], { ...(item.matcher ? { matcher: item.matcher } : {}), hooks: [item.hook] });
    }
  }
}

function removeJsonItem(text: string, item: JsonItem): string {
  let out = text;
  switch (item.kind) {
    case 'member':
      return nodeAt(parseOrThrow('', out), item.path) ? removeAt(out, item.path) : out;
    case 'entry': {
      const list = valueAt(parseOrThrow('', out), item.path);
      const index = Array.isArray(list) ? list.indexOf(item.value) : -1;
      return index >= 0 ? removeAt(out, [...item.path, index]) : out;
    }
    case 'hook': {
      // From the last, so the indices found stay right.
      for (const f of findHooks(parseOrThrow('', out), item).reverse()) {
        out = removeAt(out, f.alone ? [...HOOKS, item.event, f.group] : [...HOOKS, item.event, f.group, 'hooks', f.hook]);
      }
      return out;
    }
  }
}

function blockDrift(plan: BlockFilePlan, text: string | undefined): Drift[] {
  if (text === undefined) return [{ label: plan.label, state: 'missing' }];
  const located = locateBlock(text, plan.syntax);
  if (located.found === 'broken') throw new BadFileError(plan.path, `${located.message}; fix the markers, then run tasks setup again`);
  if (plan.clash) {
    const outside = located.found === true ? text.slice(0, located.start) + text.slice(located.end) : text;
    const line = outside.split('\n').find((l) => plan.clash!.test(l));
    if (line !== undefined)
      throw new BadFileError(
        plan.path,
        `'${line.trim()}' is already there, outside the ${markers(plan.syntax).begin} block; remove it, then run tasks setup again`,
      );
  }
  if (located.found === false) return [{ label: plan.label, state: 'missing' }];
  return located.body === plan.body ? [] : [{ label: plan.label, state: 'differs' }];
}

/** What is missing or differs in a file; throws BadFileError for a file setup cannot edit. */
export function driftOf(plan: FilePlan, text: string | undefined): Drift[] {
  return plan.kind === 'json' ? jsonDrift(plan, text) : blockDrift(plan, text);
}

/** The file's text with everything of the plan in place (`driftOf` first: it refuses bad files). */
export function applyPlan(plan: FilePlan, text: string | undefined): string {
  if (plan.kind === 'block') return writeBlock(text ?? '', plan.syntax, plan.body);
  // A new file is written the way people write JSON: two spaces, a member per line.
  let out = text ?? '{\n}\n';
  for (const item of plan.items) out = applyJsonItem(out, item);
  return out;
}

/** The file's text without anything of the plan; undefined when nothing else is left (the file goes). */
export function removePlan(plan: FilePlan, text: string): string | undefined {
  if (plan.kind === 'block') {
    const out = removeBlock(text, plan.syntax);
    return out === '' && text !== '' ? undefined : out;
  }
  let out = text;
  for (const item of plan.items) out = removeJsonItem(out, item);
  if (out === text) return text; // nothing of ours: the file stays, even an empty one
  return isEmptyObject(out) ? undefined : out;
}
