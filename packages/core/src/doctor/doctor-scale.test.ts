import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serializeTask, type Task } from '../format/format.js';
import { TaskStore } from '../store.js';
import { diagnoseBoard, type DoctorFinding } from './doctor.js';

// Doctor spares most of its work on the files that are well (the field checks
// run only on a file the core validator refuses, the graph only looks for a
// cycle when the board may hold one): one bad file among thousands of good
// ones must still be found, with what it says and where (docs/decisions.md,
// "Doctor at 300,000 tasks").
const N = 3000;

describe('doctor on a big board', () => {
  let dir = '';
  afterEach(() => rmSync(dirname(dir), { recursive: true, force: true }));

  /** A chain as the whole-board bench makes it: each task blocks the next, most wait for the one before, a third completed. */
  function chainTask(id: number): Task {
    return {
      id,
      subject: `Step ${id} of the long chain`,
      description: 'A description of moderate length, as people write them.',
      status: id % 3 === 0 ? 'completed' : 'pending',
      owner: '',
      blockedBy: id > 1 && (id - 1) % 3 !== 0 ? [id - 1] : [],
      blocks: id < N ? [id + 1] : [],
      related: [id - 1, id + 1].filter((r) => r >= 1 && r <= N),
      extra: {},
    };
  }

  function chainBoard(edit: (texts: Map<number, string>) => void = () => {}): TaskStore {
    dir = join(mkdtempSync(join(tmpdir(), 'dotasks-doctor-scale-')), '.tasks');
    const store = TaskStore.init(dir);
    const texts = new Map<number, string>();
    for (let id = 1; id <= N; id++) texts.set(id, serializeTask(chainTask(id)));
    edit(texts);
    for (const [id, text] of texts) writeFileSync(store.taskPath(id), text);
    writeFileSync(join(dir, '.highwatermark'), `${N}\n`);
    return store;
  }

  /** 1-based line and column of the first `needle` in `text`, counted here by hand. */
  function where(text: string, needle: string): { line: number; column: number } {
    const at = text.indexOf(needle);
    expect(at, needle).toBeGreaterThanOrEqual(0);
    const before = text.slice(0, at).split('\n');
    return { line: before.length, column: before[before.length - 1].length + 1 };
  }

  const brief = (f: DoctorFinding) => ({ code: f.code, task: f.task, line: f.line, column: f.column, message: f.message });

  it('finds nothing on the healthy chain', () => {
    const store = chainBoard();
    expect(diagnoseBoard(store, { git: false })).toEqual({ findings: [], files: N });
  });

  it('finds each bad file among thousands, at its line and column, as the field checks word it', () => {
    const texts = new Map<number, string>();
    const store = chainBoard((t) => {
      // A status the field checks name (the validator would say it differently).
      t.set(1501, t.get(1501)!.replace('"status": "pending"', '"status": "done"'));
      // What only the core validator refuses: a label that is not a string.
      t.set(1801, t.get(1801)!.replace('"owner": ""', '"owner": "",\n  "labels": [\n    7\n  ]'));
      // An edge id written as a string.
      t.set(2003, t.get(2003)!.replace('"blockedBy": [\n    2002\n  ]', '"blockedBy": [\n    "2002"\n  ]'));
      // Not in canonical form: the owner key written with a space before its colon.
      t.set(2204, t.get(2204)!.replace('"owner": ""', '"owner" : ""'));
      for (const [id, text] of t) texts.set(id, text);
    });
    const findings = diagnoseBoard(store, { git: false }).findings.map(brief);
    expect(findings).toEqual([
      {
        code: 'invalid_field',
        task: 1501,
        ...where(texts.get(1501)!, '"status"'),
        message: 'unknown status "done"',
      },
      {
        code: 'invalid_field',
        task: 1801,
        ...where(texts.get(1801)!, '"labels"'),
        message: '"labels" must hold non-empty strings, got 7',
      },
      {
        code: 'string_id',
        task: 2003,
        ...where(texts.get(2003)!, '"2002"'),
        message: '"blockedBy" holds the id "2002" as a string',
      },
      {
        code: 'non_canonical',
        task: 2204,
        ...where(texts.get(2204)!, ' : ""'),
        message: 'not in canonical form (key order, 2-space indent, sorted ids, trailing newline)',
      },
    ]);
  });

  it('finds a cycle closed by one edge back through a thousand tasks, a one-sided edge, and a folder under a task name', () => {
    const texts = new Map<number, string>();
    const store = chainBoard((t) => {
      // #2500 blocks #1400 on both sides: with the chain's blocks, 1400 -> 1401 -> ... -> 2500 -> 1400.
      const back = (id: number, field: 'blockedBy' | 'blocks', add: number) => {
        const task = chainTask(id);
        task[field] = [...task[field], add];
        t.set(id, serializeTask(task));
      };
      back(1400, 'blockedBy', 2500);
      back(2500, 'blocks', 1400);
      // #2702 waits for #2701 on its own side only.
      t.set(2701, serializeTask({ ...chainTask(2701), blocks: [] }));
      for (const [id, text] of t) texts.set(id, text);
    });
    // A folder under a task's name, which no task names.
    mkdirSync(store.taskPath(N + 1000));
    const findings = diagnoseBoard(store, { git: false }).findings.map(brief);
    const cycle = Array.from({ length: 2500 - 1400 + 1 }, (_, i) => 1400 + i);
    expect(findings).toEqual([
      {
        code: 'cycle',
        task: 1400,
        ...where(texts.get(1400)!, '"blocks"'),
        message: `cycle #${[...cycle, 1400].join(' -> #')}: none of these tasks can ever become ready`,
      },
      {
        code: 'one_sided_edge',
        task: 2701,
        ...where(texts.get(2701)!, '"blocks"'),
        message: '#2702 is blocked by #2701, but #2701 does not list #2702 in "blocks"',
      },
      {
        code: 'not_a_file',
        task: N + 1000,
        line: undefined,
        column: undefined,
        message: `task_${N + 1000}.json is not a regular file (a folder or a device), so it is not a task and is skipped`,
      },
    ]);
  });
});
