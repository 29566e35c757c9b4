/**
 * OpenAI's documented rules for a strict-mode schema (Structured Outputs,
 * "Supported schemas"), written down as a checker so a test can hold our
 * emitted schemas to them without calling the API. Deliberately the
 * conservative reading: the type-specific constraints (minLength, pattern,
 * format, minimum, minItems …) count as unsupported, the limits are the
 * original ones (5 levels of nesting, 100 properties, 500 enum values,
 * 15,000 characters of names and enum values).
 */

type Schema = Record<string, unknown>;

/** Keywords a strict schema may use; anything else is refused. */
const ALLOWED = new Set(['type', 'description', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'anyOf', 'const', '$defs', '$ref']);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
export const STRICT_LIMITS = { depth: 5, properties: 100, enumValues: 500, textLength: 15_000 };

const typesOf = (s: Schema): string[] => (Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : []);

/** Every way `root` breaks the rules, as `path: problem` lines; empty when it keeps them all. */
export function strictViolations(root: Schema): string[] {
  const problems: string[] = [];
  let properties = 0;
  let enumValues = 0;
  let textLength = 0;
  if (!typesOf(root).includes('object') || typesOf(root).length !== 1) problems.push('$: the root must be an object');
  if ('anyOf' in root) problems.push('$: the root must not be an anyOf');

  const visit = (s: unknown, path: string, depth: number) => {
    if (s === null || typeof s !== 'object' || Array.isArray(s)) return void problems.push(`${path}: not a schema`);
    const schema = s as Schema;
    for (const key of Object.keys(schema)) if (!ALLOWED.has(key)) problems.push(`${path}: keyword "${key}" is not supported`);
    const types = typesOf(schema);
    for (const t of types) if (!TYPES.has(t)) problems.push(`${path}: type "${t}" is not supported`);
    if (!('type' in schema) && !('anyOf' in schema) && !('enum' in schema) && !('const' in schema) && !('$ref' in schema)) problems.push(`${path}: no type`);
    const nests = types.includes('object') || types.includes('array');
    const level = nests ? depth + 1 : depth;
    if (level > STRICT_LIMITS.depth) problems.push(`${path}: ${level} levels of nesting exceed ${STRICT_LIMITS.depth}`);
    if (types.includes('object')) {
      if (schema.additionalProperties !== false) problems.push(`${path}: additionalProperties must be false`);
      const props = (schema.properties ?? {}) as Record<string, unknown>;
      const names = Object.keys(props);
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      const missing = names.filter((n) => !required.includes(n));
      if (missing.length) problems.push(`${path}: required lacks ${missing.join(', ')}`);
      if (required.some((n) => !names.includes(n))) problems.push(`${path}: required names a property that does not exist`);
      properties += names.length;
      for (const name of names) {
        textLength += name.length;
        visit(props[name], `${path}.${name}`, level);
      }
    }
    if (Array.isArray(schema.enum)) {
      enumValues += schema.enum.length;
      for (const v of schema.enum) {
        if (typeof v === 'string') textLength += v.length;
        const t = v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v;
        if (types.length && !types.includes(t) && !(t === 'integer' && types.includes('number')))
          problems.push(`${path}: enum value ${JSON.stringify(v)} is not of its type`);
      }
      if (types.includes('null') && !schema.enum.includes(null)) problems.push(`${path}: a nullable enum must list null`);
    }
    if (types.includes('array')) {
      if (!('items' in schema)) problems.push(`${path}: an array needs items`);
      else visit(schema.items, `${path}[]`, level);
    }
    if (Array.isArray(schema.anyOf)) (schema.anyOf as unknown[]).forEach((branch, i) => visit(branch, `${path}.anyOf[${i}]`, depth));
    if (schema.$defs && typeof schema.$defs === 'object')
      for (const [name, def] of Object.entries(schema.$defs as Record<string, unknown>)) {
        textLength += name.length;
        visit(def, `${path}.$defs.${name}`, depth);
      }
  };
  visit(root, '$', 0);
  if (properties > STRICT_LIMITS.properties) problems.push(`$: ${properties} properties exceed ${STRICT_LIMITS.properties}`);
  if (enumValues > STRICT_LIMITS.enumValues) problems.push(`$: ${enumValues} enum values exceed ${STRICT_LIMITS.enumValues}`);
  if (textLength > STRICT_LIMITS.textLength) problems.push(`$: ${textLength} characters of names and enum values exceed ${STRICT_LIMITS.textLength}`);
  return problems;
}
