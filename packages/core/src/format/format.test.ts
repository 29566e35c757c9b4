import { describe, expect, it } from 'vitest';
import { CorruptTaskError, TasksError } from '../errors.js';
import { DEFAULT_PRIORITY, copyTask, parseTask, parseTaskId, priorityOf, serializeTask, validateTask, MAX_TASK_FILE_BYTES } from './format.js';

const file = '/b/.tasks/task_3.json';

function corrupt(text: string, name = file): CorruptTaskError {
  try {
    parseTask(text, name);
  } catch (error) {
    if (error instanceof CorruptTaskError) return error;
    throw error;
  }
  throw new Error('expected the file to be refused');
}

describe('serializeTask', () => {
  it('writes known keys in order, unknown keys after them in their order, sorted unique ids and a newline', () => {
    const text = '{"zeta":1,"blocks":[5,2,5],"status":"pending","id":3,"owner":"","alpha":{"b":1,"a":2},"subject":"S","blockedBy":[9,1],"description":"d"}';
    expect(serializeTask(parseTask(text, file))).toMatchInlineSnapshot(`
      "{
        "id": 3,
        "subject": "S",
        "description": "d",
        "status": "pending",
        "owner": "",
        "blockedBy": [
          1,
          9
        ],
        "blocks": [
          2,
          5
        ],
        "zeta": 1,
        "alpha": {
          "b": 1,
          "a": 2
        }
      }
      "
    `);
  });

  it('is a fixed point: the same task always gives the same bytes', () => {
    const once = serializeTask(
      parseTask('{"id":3,"subject":"S","status":"completed","owner":"a","activeForm":"x","blockedBy":[],"blocks":[4],"metadata":{"k":[1,{"z":null}]}}', file),
    );
    expect(serializeTask(parseTask(once, file))).toBe(once);
  });

  it("reads a Python TaskManager's output (json.dumps indent=2, no trailing newline)", () => {
    const python =
      '{\n  "id": 3,\n  "subject": "Emit output",\n  "description": "",\n  "status": "pending",\n  "blockedBy": [\n    1\n  ],\n  "blocks": [],\n  "owner": ""\n}';
    const task = parseTask(python, file);
    expect(task).toMatchObject({ id: 3, subject: 'Emit output', status: 'pending', blockedBy: [1], blocks: [], owner: '' });
    expect(serializeTask(task)).toBe(
      '{\n  "id": 3,\n  "subject": "Emit output",\n  "description": "",\n  "status": "pending",\n  "owner": "",\n  "blockedBy": [\n    1\n  ],\n  "blocks": []\n}\n',
    );
  });

  it('keeps __proto__ keys as plain data without polluting prototypes', () => {
    const text =
      '{"id":3,"subject":"S","status":"pending","metadata":{"__proto__":{"polluted":true},"constructor":{"prototype":{"bad":1}}},"__proto__":{"x":1}}';
    const task = parseTask(text, file);
    const out = serializeTask(task);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(JSON.parse(out).metadata).toHaveProperty('__proto__');
    expect(out).toContain('"__proto__": {\n      "polluted": true');
    expect(out).toContain('"__proto__": {\n    "x": 1');
  });
});

describe('serializeTask beside JSON.stringify', () => {
  // Every kind of value a task holds: strings to escape, lists to sort, nested data, unknown keys named like
  // array indexes (written first, as JSON.stringify orders them) and __proto__, a value JSON leaves out.
  const text =
    '{"id":4,"subject":"Line \\"one\\"\\n\\u2028two","description":"","status":"in_progress","owner":"ann","activeForm":"Doing","parent":2,' +
    '"blockedBy":[3,1,3],"blocks":[],"priority":1,"labels":["b","a"],"paths":["src/**"],"related":[9,5],"discoveredFrom":[1],' +
    '"notes":[{"at":"2024-02","owner":"x","text":"n"},{"at":"2024-01","owner":"y","text":"m","k":[1,{"z":null}]}],' +
    '"verify":"npm test","result":"","review":{"required":true,"x":1},"metadata":{"a":{"b":[1,{"c":[]}]},"e":{}},' +
    '"zeta":1.5e300,"10":"ten","__proto__":{"q":[true,false]},"empty":[]}';
  const task = parseTask(text, 'task_4.json');

  it('writes what JSON.stringify writes of the keys in canonical order, with a 2-space indent', () => {
    const written = serializeTask(task);
    const keys = JSON.parse(written) as Record<string, unknown>;
    expect(written).toBe(JSON.stringify(keys, null, 2) + '\n');
    expect(Object.keys(keys).slice(0, 3)).toEqual(['10', 'id', 'subject']);
    expect(keys.blockedBy).toEqual([1, 3]);
    expect(Object.prototype.hasOwnProperty.call(keys, '__proto__')).toBe(true);
  });
});

describe('paths (the file scope)', () => {
  it('is written after blocks and before metadata, globs in the order given', () => {
    const text = '{"metadata":{"a":1},"paths":["src/b/**","docs/x.md"],"id":3,"subject":"S","status":"pending","owner":"","blockedBy":[],"blocks":[]}';
    const out = serializeTask(parseTask(text, file));
    expect(Object.keys(JSON.parse(out))).toEqual(['id', 'subject', 'description', 'status', 'owner', 'blockedBy', 'blocks', 'paths', 'metadata']);
    expect(JSON.parse(out).paths).toEqual(['src/b/**', 'docs/x.md']);
  });

  it('a file without it comes back byte for byte', () => {
    const text = serializeTask(parseTask('{"id":3,"subject":"S","status":"pending","owner":"","blockedBy":[],"blocks":[],"metadata":{"k":true},"zz":1}', file));
    expect(serializeTask(parseTask(text, file))).toBe(text);
    expect(text).not.toContain('paths');
  });

  it('must be a list of non-empty strings', () => {
    expect(corrupt('{"id":3,"subject":"S","status":"pending","paths":"src/**"}').message).toMatch(/"paths" must be an array of globs/);
    expect(corrupt('{"id":3,"subject":"S","status":"pending","paths":["src/**",""]}').message).toMatch(/non-empty glob strings/);
  });
});

describe('validation errors name file, line and column', () => {
  it('malformed JSON points at the spot', () => {
    const e = corrupt('{\n  "id": 3,\n  "subject": "S",\n  "status": "pending",\n}\n');
    expect(e.code).toBe('E_CORRUPT');
    expect([e.line, e.column]).toEqual([5, 1]);
    expect(e.message).toMatch(/^\/b\/\.tasks\/task_3\.json:5:1: invalid JSON: trailing comma/);
  });

  it('an unterminated file', () => {
    const e = corrupt('{\n  "id": 3,\n  "subject": "S');
    expect(e.line).toBe(3);
    expect(e.message).toContain('unterminated string');
  });

  it('wrong types point at the key', () => {
    const e = corrupt('{\n  "id": 3,\n  "subject": "S",\n  "status": "pending",\n  "blockedBy": "1"\n}');
    expect([e.line, e.column]).toEqual([5, 3]);
    expect(e.message).toContain('"blockedBy" must be an array');
    expect(corrupt('{"id":3,"subject":42,"status":"pending"}').message).toContain('"subject" must be a string, got 42');
    expect(corrupt('{"id":3,"subject":"S","status":"pending","blocks":["2"]}').message).toContain('positive integer ids, got "2"');
    expect(corrupt('{"id":3,"subject":"S","status":"pending","metadata":[1]}').message).toContain('"metadata" must be an object');
    expect(corrupt('{"id":3,"subject":"  ","status":"pending"}').message).toContain('"subject" must not be empty');
    expect(corrupt('[1,2]').message).toContain('must hold a JSON object');
  });

  it('an unknown status', () => {
    const e = corrupt('{\n  "id": 3,\n  "subject": "S",\n  "status": "done"\n}');
    expect(e.line).toBe(4);
    expect(e.message).toContain('"status" must be one of pending, in_progress, completed, deleted, got "done"');
  });

  it('an id that differs from the file name', () => {
    const e = corrupt('{"id": 4, "subject": "S", "status": "pending"}');
    expect(e.message).toContain('"id" is 4 but the file name says 3');
  });

  it('accepts a missing description, owner null (as Python task stores write it) and absent edges', () => {
    expect(validateTask({ id: 3, subject: 'S', status: 'pending', owner: null }, file)).toMatchObject({
      description: '',
      owner: '',
      blockedBy: [],
      blocks: [],
    });
  });

  it('a value nested deeper than 100 levels is refused at its key, not with a stack overflow', () => {
    const text = `{"id":3,"subject":"S","status":"pending","owner":"","metadata":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}`;
    expect(corrupt(text).message).toBe(
      `${file}:1:53: "metadata" nests deeper than 100 levels (at metadata.a.a.a…) (fix the file by hand or run 'tasks doctor'; it was left as it is)`,
    );
    expect(corrupt(`{"id":3,"subject":"S","status":"pending","x":${'['.repeat(101)}${']'.repeat(101)}}`).message).toMatch(
      /"x" nests deeper than 100 levels \(at x\[0\]\[0\]\[0\]…\)/,
    );
    const hundred = `{"id":3,"subject":"S","status":"pending","x":${'['.repeat(100)}${']'.repeat(100)}}`;
    expect(parseTask(hundred, file).extra.x).toBeInstanceOf(Array);
  });

  it('the limit for a task file is 1 MiB', () => {
    expect(MAX_TASK_FILE_BYTES).toBe(1024 * 1024);
  });
});

describe('parseTaskId', () => {
  it.each([
    ['3', 3],
    ['#3', 3],
    ['task_3', 3],
    ['task_3.json', 3],
    [' 12 ', 12],
    [7, 7],
  ])('reads %j as %d', (input, id) => {
    expect(parseTaskId(input)).toBe(id);
  });

  it.each(['../x', 'task_../../etc/passwd', '0', '-1', '3.json', '#task_3', '03', '1e3', '', 'abc', 'task_3.json.bak', '99999999999999999999'])(
    'refuses %j',
    (input) => {
      expect(() => parseTaskId(input)).toThrow(TasksError);
    },
  );

  it('says when a subject was given where an id belongs', () => {
    expect(() => parseTaskId('Parse the AST')).toThrow(/looks like a subject/);
  });
});

describe('planning fields: priority, labels, notes (docs/protocol.md, "One task, one file")', () => {
  const base = { id: 3, subject: 'S', description: '', status: 'pending', owner: '', blockedBy: [], blocks: [] };

  it('a file without them is rewritten byte for byte, and they stay absent', () => {
    const text = serializeTask(parseTask(JSON.stringify({ ...base, metadata: { k: 1 }, zeta: true }), file));
    const again = serializeTask(parseTask(text, file));
    expect(again).toBe(text);
    expect(again).not.toMatch(/priority|labels|notes/);
  });

  it('are written after blocks and before metadata, labels sorted and unique, notes by time', () => {
    const raw = {
      metadata: { m: 1 },
      notes: [
        { text: 'second', owner: 'b', at: '2024-05-02T00:00:00.000Z' },
        { at: '2024-05-01T00:00:00.000Z', owner: 'a', text: 'first', extra: 1 },
        { at: '2024-05-02T00:00:00.000Z', owner: 'b', text: 'second' },
      ],
      labels: ['ui', 'api', 'ui'],
      priority: 0,
      ...base,
    };
    const task = parseTask(JSON.stringify(raw), file);
    expect(priorityOf(task)).toBe(0);
    const text = serializeTask(task);
    expect(Object.keys(JSON.parse(text))).toEqual([
      'id',
      'subject',
      'description',
      'status',
      'owner',
      'blockedBy',
      'blocks',
      'priority',
      'labels',
      'notes',
      'metadata',
    ]);
    expect(JSON.parse(text).labels).toEqual(['api', 'ui']);
    expect(JSON.parse(text).notes).toEqual([
      { at: '2024-05-01T00:00:00.000Z', owner: 'a', text: 'first', extra: 1 },
      { at: '2024-05-02T00:00:00.000Z', owner: 'b', text: 'second' },
    ]);
    expect(serializeTask(parseTask(text, file))).toBe(text);
  });

  it('the default priority and empty lists are written as nothing', () => {
    const task = parseTask(JSON.stringify({ ...base, priority: 2, labels: [], notes: [] }), file);
    expect(priorityOf(task)).toBe(2);
    expect(serializeTask(task)).toBe(serializeTask(parseTask(JSON.stringify(base), file)));
    expect(priorityOf(parseTask(JSON.stringify(base), file))).toBe(DEFAULT_PRIORITY);
  });

  it.each([
    [{ priority: 5 }, 'priority', /integer from 0 \(highest\) to 4, got 5/],
    [{ priority: 1.5 }, 'priority', /got 1.5/],
    [{ priority: '1' }, 'priority', /got "1"/],
    [{ labels: 'ui' }, 'labels', /array of strings/],
    [{ labels: ['ui', ' '] }, 'labels', /non-empty strings, got " "/],
    [{ notes: [{ at: 1, owner: 'a', text: 't' }] }, 'notes', /objects \{at, owner, text\}/],
    [{ notes: {} }, 'notes', /must be an array/],
  ])('refuses %j, pointing at the key', (fields, key, message) => {
    const text = JSON.stringify({ ...base, ...fields }, null, 2);
    const error = corrupt(text);
    expect(error.message).toMatch(message);
    expect(error.line).toBe(text.split('\n').findIndex((l) => l.includes(`"${key}"`)) + 1);
  });

  it('copyTask does not share labels or notes with the original', () => {
    const task = parseTask(JSON.stringify({ ...base, labels: ['a'], notes: [{ at: 'x', owner: 'o', text: 't' }] }), file);
    const copy = copyTask(task);
    copy.labels!.push('b');
    copy.notes![0].text = 'changed';
    expect(task.labels).toEqual(['a']);
    expect(task.notes![0].text).toBe('t');
  });
});
