import type { JsonSchema, ObjectSchema } from './schema-types.js';

/**
 * OpenAI's strict mode (Structured Outputs, `strict: true`) accepts a subset
 * of JSON Schema: every object lists all its properties in `required` and
 * sets `additionalProperties: false`, an optional field is a required one
 * that may be null, and the type-specific constraints (minLength, maxLength,
 * pattern, format, minimum, maximum, minItems …) are not accepted. The
 * strict schema is derived from the tool's own schema, so a field added
 * there gets its strict form here without a second declaration.
 */

/** The keywords a strict schema keeps; everything else is dropped. */
export const STRICT_SCHEMA_KEYWORDS: readonly string[] = [
  'type',
  'description',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'anyOf',
  'const',
  '$defs',
  '$ref',
];

const isSchema = (value: unknown): value is JsonSchema => value !== null && typeof value === 'object' && !Array.isArray(value);

/** `schema`, also accepting null: a nullable type, null added to an enum, or a null branch of an anyOf. */
function nullable(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (Array.isArray(out.anyOf)) {
    if (!(out.anyOf as JsonSchema[]).some((s) => s.type === 'null')) out.anyOf = [...(out.anyOf as JsonSchema[]), { type: 'null' }];
    return out;
  }
  if (typeof out.type === 'string') out.type = out.type === 'null' ? 'null' : [out.type, 'null'];
  else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...(out.type as string[]), 'null'];
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
  return out;
}

/**
 * `schema` with only the keywords strict mode keeps, and otherwise as it is
 * (optional fields stay optional): the form served over MCP. Clients convert
 * an MCP tool's schema for their model themselves, some to OpenAI's strict
 * mode, passing constraints through as they are, which strict mode refuses;
 * the tool checks every constraint itself, so the schema need not carry them.
 */
export function portableSchema(schema: ObjectSchema): ObjectSchema;
export function portableSchema(schema: JsonSchema): JsonSchema;
export function portableSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const key of STRICT_SCHEMA_KEYWORDS) if (key in schema) out[key] = schema[key];
  if (isSchema(out.properties))
    out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, JsonSchema>).map(([name, p]) => [name, portableSchema(p)]));
  if (isSchema(out.items)) out.items = portableSchema(out.items);
  if (Array.isArray(out.anyOf)) out.anyOf = (out.anyOf as JsonSchema[]).map(portableSchema);
  if (isSchema(out.$defs)) out.$defs = Object.fromEntries(Object.entries(out.$defs as Record<string, JsonSchema>).map(([k, v]) => [k, portableSchema(v)]));
  return out;
}

/** The strict-mode form of `schema` (see the module comment); the input is not changed. */
export function strictSchema(schema: ObjectSchema): ObjectSchema;
export function strictSchema(schema: JsonSchema): JsonSchema;
export function strictSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const key of STRICT_SCHEMA_KEYWORDS) if (key in schema) out[key] = schema[key];
  if (isSchema(out.properties)) {
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const properties: Record<string, JsonSchema> = {};
    for (const [name, property] of Object.entries(out.properties as Record<string, JsonSchema>)) {
      const strict = strictSchema(property);
      properties[name] = required.has(name) ? strict : nullable(strict);
    }
    out.properties = properties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  } else if (out.type === 'object') {
    out.properties = {};
    out.required = [];
    out.additionalProperties = false;
  }
  if (isSchema(out.items)) out.items = strictSchema(out.items);
  if (Array.isArray(out.anyOf)) out.anyOf = (out.anyOf as JsonSchema[]).map(strictSchema);
  if (isSchema(out.$defs)) out.$defs = Object.fromEntries(Object.entries(out.$defs as Record<string, JsonSchema>).map(([k, v]) => [k, strictSchema(v)]));
  return out;
}
