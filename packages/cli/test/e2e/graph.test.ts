import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TASKS_BIN, cleanEnv, tasks, tempBoard, createTasks } from '../helpers.js';

function run(cwd: string, args: string[]): string {
  const r = tasks(cwd, args);
  if (r.code !== 0) throw new Error(`tasks ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** `run` for outputs over spawnSync's default 1 MiB buffer. */
function runLarge(cwd: string, args: string[]): string {
  const r = spawnSync(process.execPath, [TASKS_BIN, ...args], { cwd, env: cleanEnv(), encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`tasks ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

describe('tasks graph', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  /** The classic plan: parse → transform + emit → test. */
  async function exampleBoard(): Promise<string> {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, [
      'Parse AST',
      { subject: 'Transform AST', blockedBy: [1] },
      { subject: 'Emit output', blockedBy: [1] },
      { subject: 'Run tests', blockedBy: [2, 3] },
    ]);
    return t.root;
  }

  it('draws the example board as text, Mermaid and dot', async () => {
    const root = await exampleBoard();
    expect(run(root, ['graph'])).toMatchInlineSnapshot(`
      "[ ] #1: Parse AST (ready; critical path)
      ├── [ ] #2: Transform AST (critical path)
      │   └── [ ] #4: Run tests (waits for #2, #3; critical path)
      └── [ ] #3: Emit output
          └── #4 (see above)

      critical path: #1 -> #2 -> #4 (3 open tasks in a row)
      ready: #1
      "
    `);
    expect(run(root, ['graph', '--format', 'mermaid'])).toMatchInlineSnapshot(`
      "graph LR
        t1["#1 Parse AST<br/>ready"]:::ready
        t2["#2 Transform AST<br/>blocked"]:::blocked
        t3["#3 Emit output<br/>blocked"]:::blocked
        t4["#4 Run tests<br/>blocked"]:::blocked
        t1 ==> t2
        t1 --> t3
        t2 ==> t4
        t3 --> t4
        classDef ready fill:#e8f0fe,stroke:#1a73e8,stroke-width:2px
        classDef blocked fill:#f1f3f4,stroke:#9aa0a6
        style t1 stroke:#d93025,stroke-width:3px
        style t2 stroke:#d93025,stroke-width:3px
        style t4 stroke:#d93025,stroke-width:3px
        linkStyle 0,2 stroke:#d93025,stroke-width:3px
      "
    `);
    expect(run(root, ['graph', '--format', 'dot'])).toMatchInlineSnapshot(`
      "digraph tasks {
        rankdir=LR;
        node [shape=box, style="rounded,filled", fontname="Helvetica"];
        edge [color="#5f6368"];
        t1 [label="#1 Parse AST\\nready", fillcolor="#e8f0fe", color="#d93025", penwidth=3];
        t2 [label="#2 Transform AST\\nblocked", fillcolor="#f1f3f4", color="#d93025", penwidth=3];
        t3 [label="#3 Emit output\\nblocked", fillcolor="#f1f3f4", color="#9aa0a6"];
        t4 [label="#4 Run tests\\nblocked", fillcolor="#f1f3f4", color="#d93025", penwidth=3];
        t1 -> t2 [color="#d93025", penwidth=3];
        t1 -> t3;
        t2 -> t4 [color="#d93025", penwidth=3];
        t3 -> t4;
      }
      "
    `);
  });

  it('shows progress: done, in progress, ready, and a critical path that moves on', async () => {
    const root = await exampleBoard();
    run(root, ['done', '1']);
    run(root, ['start', '2', '--owner', 'agent-1', '--active-form', 'transforming']);
    expect(run(root, ['graph'])).toMatchInlineSnapshot(`
      "[x] #1: Parse AST
      ├── [>] #2: Transform AST (agent-1: transforming; critical path)
      │   └── [ ] #4: Run tests (waits for #2, #3; critical path)
      └── [ ] #3: Emit output (ready)
          └── #4 (see above)

      critical path: #2 -> #4 (2 open tasks in a row)
      ready: #3
      "
    `);
    expect(run(root, ['graph', '-f', 'mermaid'])).toMatchInlineSnapshot(`
      "graph LR
        t1["#1 Parse AST<br/>done"]:::done
        t2["#2 Transform AST<br/>agent-1: transforming"]:::active
        t3["#3 Emit output<br/>ready"]:::ready
        t4["#4 Run tests<br/>blocked"]:::blocked
        t1 -.-> t2
        t1 -.-> t3
        t2 ==> t4
        t3 --> t4
        classDef done fill:#e6f4ea,stroke:#34a853,color:#5f6368
        classDef active fill:#fef7e0,stroke:#f9ab00,stroke-width:2px
        classDef ready fill:#e8f0fe,stroke:#1a73e8,stroke-width:2px
        classDef blocked fill:#f1f3f4,stroke:#9aa0a6
        style t2 stroke:#d93025,stroke-width:3px
        style t4 stroke:#d93025,stroke-width:3px
        linkStyle 2 stroke:#d93025,stroke-width:3px
      "
    `);
    const json = JSON.parse(run(root, ['graph', '--json'])) as { criticalPath: number[]; ready: number[]; edges: unknown[] };
    expect(json.criticalPath).toEqual([2, 4]);
    expect(json.ready).toEqual([3]);
    expect(json.edges).toEqual([
      { from: 1, to: 2, critical: false },
      { from: 1, to: 3, critical: false },
      { from: 2, to: 4, critical: true },
      { from: 3, to: 4, critical: false },
    ]);
  });

  it('draws a refactor-auth plan, hiding deleted tasks unless --all', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const root = t.root;
    await createTasks(t.board, [
      'Audit current auth flows', // 1
      { subject: 'Design token service', blockedBy: [1] }, // 2
      { subject: 'Extract session store', blockedBy: [1] }, // 3
      { subject: 'Issue JWTs', blockedBy: [2] }, // 4
      { subject: 'Migrate login endpoint', blockedBy: [3, 4] }, // 5
      { subject: 'Migrate API middleware', blockedBy: [4] }, // 6
      { subject: 'Update integration tests', blockedBy: [5, 6] }, // 7
      { subject: 'Remove legacy "remember me" cookies', blockedBy: [7] }, // 8
      { subject: 'Write <migration> guide', blockedBy: [2] }, // 9
      'Evaluate OAuth vendors', // 10
    ]);
    run(root, ['done', '1']);
    run(root, ['start', '3', '--owner', 'agent-2']);
    run(root, ['delete', '10']);
    expect(run(root, ['graph'])).toMatchInlineSnapshot(`
      "[x] #1: Audit current auth flows
      ├── [ ] #2: Design token service (ready; critical path)
      │   ├── [ ] #4: Issue JWTs (critical path)
      │   │   ├── [ ] #5: Migrate login endpoint (waits for #3, #4; critical path)
      │   │   │   └── [ ] #7: Update integration tests (waits for #5, #6; critical path)
      │   │   │       └── [ ] #8: Remove legacy "remember me" cookies (critical path)
      │   │   └── [ ] #6: Migrate API middleware
      │   │       └── #7 (see above)
      │   └── [ ] #9: Write <migration> guide
      └── [>] #3: Extract session store (agent-2)
          └── #5 (see above)

      critical path: #2 -> #4 -> #5 -> #7 -> #8 (5 open tasks in a row)
      ready: #2
      "
    `);
    expect(run(root, ['graph', '-f', 'mermaid'])).toMatchInlineSnapshot(`
      "graph LR
        t1["#1 Audit current auth flows<br/>done"]:::done
        t2["#2 Design token service<br/>ready"]:::ready
        t3["#3 Extract session store<br/>in progress (agent-2)"]:::active
        t4["#4 Issue JWTs<br/>blocked"]:::blocked
        t5["#5 Migrate login endpoint<br/>blocked"]:::blocked
        t6["#6 Migrate API middleware<br/>blocked"]:::blocked
        t7["#7 Update integration tests<br/>blocked"]:::blocked
        t8["#8 Remove legacy #quot;remember me#quot; cookies<br/>blocked"]:::blocked
        t9["#9 Write #lt;migration#gt; guide<br/>blocked"]:::blocked
        t1 -.-> t2
        t1 -.-> t3
        t2 ==> t4
        t2 --> t9
        t3 --> t5
        t4 ==> t5
        t4 --> t6
        t5 ==> t7
        t6 --> t7
        t7 ==> t8
        classDef done fill:#e6f4ea,stroke:#34a853,color:#5f6368
        classDef active fill:#fef7e0,stroke:#f9ab00,stroke-width:2px
        classDef ready fill:#e8f0fe,stroke:#1a73e8,stroke-width:2px
        classDef blocked fill:#f1f3f4,stroke:#9aa0a6
        style t2 stroke:#d93025,stroke-width:3px
        style t4 stroke:#d93025,stroke-width:3px
        style t5 stroke:#d93025,stroke-width:3px
        style t7 stroke:#d93025,stroke-width:3px
        style t8 stroke:#d93025,stroke-width:3px
        linkStyle 2,5,7,9 stroke:#d93025,stroke-width:3px
      "
    `);
    expect(run(root, ['graph', '-f', 'dot', '--all'])).toMatchInlineSnapshot(`
      "digraph tasks {
        rankdir=LR;
        node [shape=box, style="rounded,filled", fontname="Helvetica"];
        edge [color="#5f6368"];
        t1 [label="#1 Audit current auth flows\\ndone", fillcolor="#e6f4ea", color="#34a853", fontcolor="#5f6368"];
        t2 [label="#2 Design token service\\nready", fillcolor="#e8f0fe", color="#d93025", penwidth=3];
        t3 [label="#3 Extract session store\\nin progress (agent-2)", fillcolor="#fef7e0", color="#f9ab00", penwidth=2];
        t4 [label="#4 Issue JWTs\\nblocked", fillcolor="#f1f3f4", color="#d93025", penwidth=3];
        t5 [label="#5 Migrate login endpoint\\nblocked", fillcolor="#f1f3f4", color="#d93025", penwidth=3];
        t6 [label="#6 Migrate API middleware\\nblocked", fillcolor="#f1f3f4", color="#9aa0a6"];
        t7 [label="#7 Update integration tests\\nblocked", fillcolor="#f1f3f4", color="#d93025", penwidth=3];
        t8 [label="#8 Remove legacy \\"remember me\\" cookies\\nblocked", fillcolor="#f1f3f4", color="#d93025", penwidth=3];
        t9 [label="#9 Write <migration> guide\\nblocked", fillcolor="#f1f3f4", color="#9aa0a6"];
        t10 [label="#10 Evaluate OAuth vendors\\ndeleted", fillcolor="#ffffff", color="#dadce0", fontcolor="#9aa0a6", style="rounded,filled,dashed"];
        t1 -> t2 [style=dashed, color="#9aa0a6"];
        t1 -> t3 [style=dashed, color="#9aa0a6"];
        t2 -> t4 [color="#d93025", penwidth=3];
        t2 -> t9;
        t3 -> t5;
        t4 -> t5 [color="#d93025", penwidth=3];
        t4 -> t6;
        t5 -> t7 [color="#d93025", penwidth=3];
        t6 -> t7;
        t7 -> t8 [color="#d93025", penwidth=3];
      }
      "
    `);
  });

  it('names only the open blockers a task still waits for', async () => {
    const root = await exampleBoard();
    run(root, ['done', '1']);
    run(root, ['done', '2']);
    // #2.blocks keeps #4 as history, so #4 still hangs under #2 in the tree; it waits for #3 alone.
    expect(run(root, ['graph'])).toMatchInlineSnapshot(`
      "[x] #1: Parse AST
      ├── [x] #2: Transform AST
      │   └── [ ] #4: Run tests (waits for #3; critical path)
      └── [ ] #3: Emit output (ready; critical path)
          └── #4 (see above)

      critical path: #3 -> #4 (2 open tasks in a row)
      ready: #3
      "
    `);
  });

  it('draws a 10,000-task chain without deep recursion, indentation kept bounded', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const n = 10_000;
    for (let id = 1; id <= n; id++) {
      const task = {
        id,
        subject: `Step ${id}`,
        description: '',
        status: 'pending',
        owner: '',
        blockedBy: id > 1 ? [id - 1] : [],
        blocks: id < n ? [id + 1] : [],
      };
      writeFileSync(join(t.board, `task_${id}.json`), JSON.stringify(task, null, 2) + '\n');
    }
    writeFileSync(join(t.board, '.highwatermark'), `${n}\n`);
    const text = runLarge(t.root, ['graph']);
    const lines = text.split('\n');
    expect(lines[0]).toBe('[ ] #1: Step 1 (ready; critical path)');
    expect(text).toContain(`[ ] #${n}: Step ${n} (critical path)`);
    expect(text).toContain(`(${n} open tasks in a row)`);
    // Every task printed once; a deep subtree goes on as a tree of its own, so no line grows with the chain.
    // Read in one pass (10,000 toContain on the 400 kB text took 3 s of CPU): the ids printed as `#N: Step N `.
    const printed = new Set([...text.matchAll(/#(\d+): Step \1 /g)].map((m) => Number(m[1])));
    expect(Array.from({ length: n }, (_, i) => i + 1).filter((id) => !printed.has(id))).toEqual([]);
    expect(Math.max(...lines.filter((l) => !l.startsWith('critical path:')).map((l) => l.length))).toBeLessThan(200);
    const json = JSON.parse(runLarge(t.root, ['graph', '--json'])) as { criticalPath: number[] };
    expect(json.criticalPath).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(runLarge(t.root, ['graph', '--format', 'mermaid'])).toContain(`t${n - 1} ==> t${n}`);
  });

  it('says so when the board is empty, and refuses an unknown format', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(run(t.root, ['graph'])).toContain('no tasks yet');
    const r = tasks(t.root, ['graph', '--format', 'png']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("tasks: --format of 'tasks graph' takes text, mermaid or dot, got 'png' (tasks graph --help for more)\n");
  });
});
