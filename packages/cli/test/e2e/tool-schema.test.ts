import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { strictViolations } from '../../../agent/test/openai-strict-rules.js';
import { tasks, tempBoard } from '../helpers.js';

describe('tasks tool-schema', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('prints the todo tool for OpenAI, Anthropic and as JSON Schema, each valid', () => {
    const t = tempBoard({ init: false });
    cleanup = t.cleanup;
    const openai = JSON.parse(tasks(t.root, ['tool-schema', '--format', 'openai']).stdout);
    expect(openai).toMatchObject({ type: 'function', function: { name: 'todo', parameters: { type: 'object', required: ['action'] } } });
    const anthropic = JSON.parse(tasks(t.root, ['tool-schema', '--format', 'anthropic']).stdout);
    expect(Object.keys(anthropic)).toEqual(['name', 'description', 'input_schema']);
    expect(anthropic.input_schema).toEqual(openai.function.parameters);
    const doc = JSON.parse(tasks(t.root, ['tool-schema']).stdout);
    expect(doc.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const validate = new Ajv2020({ strict: true }).compile(doc);
    expect(validate({ action: 'update', task_id: '#2', status: 'completed' })).toBe(true);
    expect(validate({ action: 'update', task_id: 2, status: 'finished' })).toBe(false);
    const draft7 = new Ajv({ strict: true }).compile(anthropic.input_schema);
    expect(draft7({ action: 'create', subject: 'x', add_blocked_by: [1, 'task_2'] })).toBe(true);
    expect(draft7({ action: 'create', subject: 'x', extra: 1 })).toBe(false);
  });

  it("prints strict-mode definitions that keep OpenAI's documented rules, for Chat Completions and the Responses API", () => {
    const t = tempBoard({ init: false });
    cleanup = t.cleanup;
    const plain = JSON.parse(tasks(t.root, ['tool-schema', '--format', 'openai']).stdout);
    // The plain schema breaks them (optional fields, minLength): the check can fail.
    expect(strictViolations(plain.function.parameters).length).toBeGreaterThan(0);
    const chat = JSON.parse(tasks(t.root, ['tool-schema', '--format', 'openai-strict']).stdout);
    expect(Object.keys(chat)).toEqual(['type', 'function']);
    expect(Object.keys(chat.function)).toEqual(['name', 'description', 'parameters', 'strict']);
    expect(chat.function).toMatchObject({ name: 'todo', strict: true });
    expect(strictViolations(chat.function.parameters)).toEqual([]);
    const responses = JSON.parse(tasks(t.root, ['tool-schema', '--format', 'openai-responses']).stdout);
    expect(Object.keys(responses)).toEqual(['type', 'name', 'description', 'parameters', 'strict']);
    expect(responses).toMatchObject({ type: 'function', name: 'todo', strict: true });
    expect(responses.parameters).toEqual(chat.function.parameters);
    const validate = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(responses.parameters);
    const nulls = Object.fromEntries(Object.keys(responses.parameters.properties).map((k) => [k, null]));
    expect(validate({ ...nulls, action: 'list' })).toBe(true);
    expect(validate({ action: 'list' })).toBe(false); // strict: every field is sent
  });

  it('refuses an unknown format with exit 2', () => {
    const t = tempBoard({ init: false });
    cleanup = t.cleanup;
    expect(tasks(t.root, ['tool-schema', '--format', 'gemini']).code).toBe(2);
  });
});
