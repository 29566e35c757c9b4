import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core/internal';
import { createTodoTool, strictSchema, todoInputSchema, toolDefinition, type TodoResult, type TodoTool } from '../src/index.js';
import { strictViolations } from './openai-strict-rules.js';

const strict = strictSchema(todoInputSchema);
const rootFields = Object.keys(strict.properties as object);
const itemFields = Object.keys((strict.properties as Record<string, { items: { properties: object } }>).todos.items.properties);

/** A call as a strict-mode model sends it: every field present, the unused ones null. */
const full = (fields: Record<string, unknown>): Record<string, unknown> => ({ ...Object.fromEntries(rootFields.map((f) => [f, null])), ...fields });
const entry = (fields: Record<string, unknown>): Record<string, unknown> => ({ ...Object.fromEntries(itemFields.map((f) => [f, null])), ...fields });

describe('the strict-mode schema (OpenAI Structured Outputs)', () => {
  it('the rule checker refuses the plain schema, and passes the strict one', () => {
    const plain = strictViolations(todoInputSchema);
    expect(plain.some((p) => /^\$: required lacks subject, task_id, .*include_deleted/.test(p))).toBe(true);
    expect(plain).toContain('$.subject: keyword "minLength" is not supported');
    expect(plain.some((p) => p.includes('"minimum"'))).toBe(true);
    expect(strictViolations(strict)).toEqual([]);
    // The plain schema is left as it was.
    expect(todoInputSchema.required).toEqual(['action']);
  });

  it('optional fields become nullable: a type with null, null in an enum, a null branch', () => {
    const props = strict.properties as Record<string, Record<string, unknown>>;
    expect(props.action).toMatchObject({ type: 'string' });
    expect(props.subject).toMatchObject({ type: ['string', 'null'] });
    expect(props.status).toMatchObject({ type: ['string', 'null'], enum: ['pending', 'in_progress', 'completed', 'deleted', null] });
    expect(props.task_id.anyOf).toEqual([{ type: 'integer' }, { type: 'string' }, { type: 'null' }]);
    expect(props.include_deleted).toMatchObject({ type: ['boolean', 'null'] });
  });

  it('renders for Chat Completions (openai-strict) and the Responses API (openai-responses)', () => {
    const parts = { name: 'todo', description: 'd', inputSchema: todoInputSchema };
    expect(toolDefinition(parts, 'openai-strict')).toEqual({
      type: 'function',
      function: { name: 'todo', description: 'd', parameters: strict, strict: true },
    });
    const responses = toolDefinition(parts, 'openai-responses');
    expect(responses).toEqual({ type: 'function', name: 'todo', description: 'd', parameters: strict, strict: true });
    expect(responses).not.toHaveProperty('function');
  });

  describe('every action runs with strict-shaped input', () => {
    let root: string;
    let tool: TodoTool;
    const validate = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(strict);
    beforeEach(() => {
      root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-strict-')));
      tool = createTodoTool({ store: TaskStore.init(join(root, '.tasks')), owner: 'agent-1' });
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    async function call(fields: Record<string, unknown>, todos?: Record<string, unknown>[]): Promise<TodoResult> {
      const input = full({ ...fields, ...(todos ? { todos: todos.map(entry) } : {}) });
      expect(validate(input), JSON.stringify(validate.errors)).toBe(true);
      return tool.execute(input);
    }
    const ok = async (fields: Record<string, unknown>, todos?: Record<string, unknown>[]) => {
      const result = await call(fields, todos);
      if (!result.ok) throw new Error(`${JSON.stringify(fields)} refused: ${result.error.message}`);
      return result;
    };

    it('create, update, list, get, write, claim, release, clear', async () => {
      expect(await ok({ action: 'create', subject: 'Parse AST' })).toMatchObject({ task: { id: 1 } });
      expect(await ok({ action: 'create', subject: 'Transform AST', add_blocked_by: [1] })).toMatchObject({ task: { id: 2, blockedBy: [1] } });
      expect(await ok({ action: 'update', task_id: 1, status: 'in_progress' })).toMatchObject({ task: { status: 'in_progress', owner: 'agent-1' } });
      expect(await ok({ action: 'update', task_id: '#1', status: 'completed' })).toMatchObject({ unblocked: [2] });
      expect(await ok({ action: 'list' })).toMatchObject({ message: '2 tasks; 0 in progress; ready: #2' });
      expect(await ok({ action: 'get', task_id: 2 })).toMatchObject({ task: { id: 2, subject: 'Transform AST' } });
      const wrote = await ok({ action: 'write' }, [{ subject: 'Emit code' }, { task_id: 2, description: 'with types' }]);
      expect(wrote).toMatchObject({ tasks: [{ id: 3 }, { id: 2 }] });
      expect(await ok({ action: 'claim' })).toMatchObject({ task: { id: 2, status: 'in_progress' } });
      expect(await ok({ action: 'release', task_id: 2 })).toMatchObject({ task: { id: 2, status: 'pending', owner: '' } });
      expect(await ok({ action: 'clear' })).toMatchObject({ removed: [1, 2, 3] });
    });

    it('"" for a field the action does not read counts as not given; a missing required one is still refused', async () => {
      expect((await tool.execute({ action: 'list', subject: '' })).ok).toBe(true);
      expect((await tool.execute(full({ action: 'list', subject: '', task_id: '', owner: '', include_deleted: false }))).ok).toBe(true);
      const refused = await call({ action: 'update', task_id: null, status: 'completed' });
      expect(refused).toMatchObject({ ok: false, error: { code: 'E_INVALID', message: 'update needs task_id' } });
      // A value that does apply is still read, and checked.
      const wrong = await tool.execute({ action: 'list', subject: 'Parse AST' });
      expect(wrong).toMatchObject({ ok: false, error: { code: 'E_INVALID' } });
    });
  });
});
