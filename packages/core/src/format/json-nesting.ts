/**
 * How deep a JSON value nests arrays and objects, found without recursion:
 * a task file, an import or a hook payload can nest 20,000 levels, which
 * overflow the stack of the recursive code (cloneJson, JSON.stringify) that
 * reads and writes them, so readers check the depth first (format.ts,
 * foreign-fields.ts).
 */

/** How deep the value of one task field (metadata, an unknown key, a note) may nest arrays and objects. */
export const MAX_NESTING_DEPTH = 100;

/** Whether an array or object has an array or object among its own values. */
function holdsObject(value: object): boolean {
  if (Array.isArray(value)) {
    for (const child of value as unknown[]) if (child !== null && typeof child === 'object') return true;
    return false;
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const child = (value as Record<string, unknown>)[key];
    if (child !== null && typeof child === 'object') return true;
  }
  return false;
}

/**
 * The path to the first place where `value` nests arrays and objects more
 * than `max` deep, or undefined. Iterative, so any depth is safe to check:
 * readers and writers call it before recursive code (cloneJson,
 * JSON.stringify) meets the data.
 */
export function findDeepNesting(value: unknown, max = MAX_NESTING_DEPTH): (string | number)[] | undefined {
  interface Frame {
    value: object;
    depth: number;
    key: string | number;
    parent: Frame | undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  // Most values (a task's id lists) hold nothing nested: no walk for them.
  if (max >= 1 && !holdsObject(value)) return undefined;
  const stack: Frame[] = [{ value, depth: 1, key: '', parent: undefined }];
  while (stack.length) {
    const frame = stack.pop()!;
    if (frame.depth > max) {
      const path: (string | number)[] = [];
      for (let f: Frame | undefined = frame; f?.parent; f = f.parent) path.push(f.key);
      return path.reverse();
    }
    const push = (key: string | number, child: unknown) => {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: frame.depth + 1, key, parent: frame });
    };
    if (Array.isArray(frame.value)) frame.value.forEach((child: unknown, i) => push(i, child));
    else for (const key of Object.keys(frame.value)) push(key, (frame.value as Record<string, unknown>)[key]);
  }
  return undefined;
}

/** A path from findDeepNesting for a message: `metadata.a.a.a…` (the first steps only). */
export function describeNesting(root: string, path: readonly (string | number)[]): string {
  const steps = path.slice(0, 3).map((k) => (typeof k === 'number' ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`));
  return `${root}${steps.join('')}${path.length > 3 ? '…' : ''}`;
}
