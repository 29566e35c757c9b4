/** The JSON Schema types the tool's schemas are written in, apart from the schemas, so strict-schema.ts and schema.ts need not import each other. */

/** A JSON Schema object (loosely typed: it is data handed to model providers). */
export type JsonSchema = Record<string, unknown>;

/**
 * The schema of a tool's input: an object schema with its properties, as
 * every provider's SDK types it (`type: "object"` is what the Anthropic
 * SDK's `input_schema`, OpenAI's `parameters` and the OpenAI Agents SDK's
 * JSON parameters check for).
 */
export type ObjectSchema = {
  type: 'object';
  description?: string;
  properties: Record<string, JsonSchema>;
  required: string[];
  additionalProperties: false;
  [keyword: string]: unknown;
};
