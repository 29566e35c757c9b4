/**
 * Edits a JSON (or JSONC) file as text, so that what a person wrote keeps
 * its bytes: a member or an array entry is added after the last one, in the
 * indentation of its neighbours, and removing it takes out exactly what was
 * added (docs/decisions.md, "Setup edits text, not values"). jsonc-parser
 * finds the offsets; its own `modify` reformats the neighbours of an insert,
 * so the text is written here.
 */
import { parseTree, findNodeAtLocation, getNodeValue, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

export type JsonPath = readonly (string | number)[];

/** Where a file does not parse: 1-based line and column, and what is wrong. */
export interface JsonProblem {
  line: number;
  column: number;
  message: string;
}

/** The tree of `text`, or the first syntax error; a top level that is not an object is an error too. */
export function parseJsonText(text: string): { tree: Node } | { problem: JsonProblem } {
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: false, disallowComments: false });
  const at = (offset: number, message: string): { problem: JsonProblem } => {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    return { problem: { line, column: offset - before.lastIndexOf('\n'), message } };
  };
  if (errors.length > 0) return at(errors[0]!.offset, printParseErrorCode(errors[0]!.error));
  if (!tree || tree.type !== 'object') return at(tree?.offset ?? 0, 'the top level is not an object');
  return { tree };
}

/** The value at `path`, or undefined. */
export function valueAt(tree: Node, path: JsonPath): unknown {
  const node = findNodeAtLocation(tree, [...path]);
  return node ? getNodeValue(node) : undefined;
}

/** The node at `path`, if any. */
export function nodeAt(tree: Node, path: JsonPath): Node | undefined {
  return findNodeAtLocation(tree, [...path]);
}

/** The whitespace that starts the line `offset` is on. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** The file's indentation unit: the first indented line's, else two spaces. */
export function indentUnit(text: string): string {
  const match = /\n([ \t]+)\S/.exec(text);
  return match ? match[1]! : '  ';
}

/** `value` on one line, with a space after each `:` and `,` as people write it. */
function inlineJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(inlineJson).join(', ')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}: ${inlineJson(item)}`)
      .join(', ')}}`;
  return JSON.stringify(value);
}

/** `value` as JSON whose lines after the first start with `indent`; compact when `inline`. */
function stringify(value: unknown, unit: string, indent: string, inline: boolean): string {
  if (inline) return inlineJson(value);
  return JSON.stringify(value, null, unit).replace(/\n/g, `\n${indent}`);
}

/** True when the container's text spans one line: new entries then go on that line too. */
const onOneLine = (text: string, node: Node): boolean => !text.slice(node.offset, node.offset + node.length).includes('\n');

/**
 * Adds a child to the object or array `container`: `key` for an object. It
 * goes after the last child, on its own line in the children's indentation
 * (or inline, for a container written on one line).
 */
function insertChild(text: string, container: Node, key: string | undefined, value: unknown): string {
  const unit = indentUnit(text);
  const inline = onOneLine(text, container);
  const children = container.children ?? [];
  const closeOffset = container.offset + container.length - 1;
  const closeIndent = lineIndent(text, closeOffset);
  const childIndent = children.length > 0 ? lineIndent(text, children[0]!.offset) : closeIndent + unit;
  const member = `${key === undefined ? '' : `${JSON.stringify(key)}: `}${stringify(value, unit, childIndent, inline)}`;
  if (children.length === 0) {
    const inside = inline ? member : `\n${childIndent}${member}\n${closeIndent}`;
    return text.slice(0, container.offset + 1) + inside + text.slice(closeOffset);
  }
  const last = children[children.length - 1]!;
  const end = last.offset + last.length;
  return text.slice(0, end) + (inline ? `, ${member}` : `,\n${childIndent}${member}`) + text.slice(end);
}

/**
 * Removes the child `node` (a property node of an object, or an element of
 * an array) with the separator that goes with it, so that removing what
 * `insertChild` added gives back the bytes from before.
 */
function removeChild(text: string, node: Node): string {
  const container = node.parent!;
  const children = container.children ?? [];
  const index = children.indexOf(node);
  if (children.length === 1) {
    // The only child: the container goes back to its empty form.
    return text.slice(0, container.offset + 1) + text.slice(container.offset + container.length - 1);
  }
  if (index > 0) {
    const previous = children[index - 1]!;
    return text.slice(0, previous.offset + previous.length) + text.slice(node.offset + node.length);
  }
  return text.slice(0, node.offset) + text.slice(children[1]!.offset);
}

/** The property node (key and value) of the member at `path`. */
function memberNode(tree: Node, path: JsonPath): Node | undefined {
  const value = nodeAt(tree, path);
  return value?.parent?.type === 'property' ? value.parent : value;
}

/** Parses `text`, which the edits here always leave valid. */
function reparse(text: string): Node {
  const parsed = parseJsonText(text);
  if ('problem' in parsed) throw new Error(`internal: an edit left invalid JSON (${parsed.problem.message})`);
  return parsed.tree;
}

/**
 * Sets the member at `path` to `value`: replaces its value when it exists,
 * else adds it to the deepest object on the path that exists, with the
 * missing objects around it.
 */
export function setMember(text: string, path: JsonPath, value: unknown): string {
  const tree = reparse(text);
  const existing = nodeAt(tree, path);
  if (existing) {
    const unit = indentUnit(text);
    const indent = lineIndent(text, existing.parent?.type === 'property' ? existing.parent.offset : existing.offset);
    const inline = onOneLine(text, existing.parent?.parent ?? tree);
    return text.slice(0, existing.offset) + stringify(value, unit, indent, inline) + text.slice(existing.offset + existing.length);
  }
  let depth = path.length - 1;
  while (depth > 0 && nodeAt(tree, path.slice(0, depth))?.type !== 'object') depth--;
  const parent = depth === 0 ? tree : nodeAt(tree, path.slice(0, depth))!;
  let wrapped: unknown = value;
  for (let i = path.length - 1; i > depth; i--) wrapped = { [path[i] as string]: wrapped };
  return insertChild(text, parent, String(path[depth]), wrapped);
}

/** Appends `value` to the array at `path` (made when missing). */
export function appendEntry(text: string, path: JsonPath, value: unknown): string {
  const array = nodeAt(reparse(text), path);
  if (!array || array.type !== 'array') return setMember(text, path, [value]);
  return insertChild(text, array, undefined, value);
}

/**
 * Removes the member or array element at `path`, then every container on
 * the path above it that this left empty, up to (not including) the top.
 */
export function removeAt(text: string, path: JsonPath): string {
  let out = text;
  let at = [...path];
  while (at.length > 0) {
    const tree = reparse(out);
    const node = memberNode(tree, at);
    if (!node) break;
    out = removeChild(out, node);
    at = at.slice(0, -1);
    if (at.length === 0) break;
    const container = nodeAt(reparse(out), at);
    if (!container || (container.children?.length ?? 0) > 0) break;
  }
  return out;
}

/** True when the text holds an object with no members (what removing everything leaves). */
export function isEmptyObject(text: string): boolean {
  const parsed = parseJsonText(text);
  return 'tree' in parsed && (parsed.tree.children?.length ?? 0) === 0;
}
