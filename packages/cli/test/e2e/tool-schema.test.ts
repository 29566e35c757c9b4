import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
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

  it('refuses an unknown format with exit 2', () => {
    const t = tempBoard({ init: false });
    cleanup = t.cleanup;
    expect(tasks(t.root, ['tool-schema', '--format', 'gemini']).code).toBe(2);
  });
});
