import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TasksError } from '../errors.js';
import { importSource, importTasks, planImport, planningFields, readTaskStoreFile } from './board-import.js';
import { TaskStore } from '../store.js';
import { readBacklogTasks } from './backlog-lists.js';
import { readBeadsIssues, readDotasksExport } from './import-tools.js';

const fixtures = fileURLToPath(new URL('../../test/fixtures/imports/', import.meta.url));
const backlogProject = join(fixtures, 'backlog-project');
const beadsProject = join(fixtures, 'beads-project');

describe('imports from other tools (core)', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = '';
  });
  const temp = () => (dir = mkdtempSync(join(tmpdir(), 'dotasks-import-tools-')));

  it('planningFields puts priority and labels on the task itself', () => {
    expect(planningFields(1, ['backend'])).toEqual({ fields: { priority: 1, labels: ['backend'] }, metadata: {} });
    expect(planningFields(undefined, [])).toEqual({ fields: {}, metadata: {} });
  });

  describe('Backlog.md', () => {
    it('reads backlog/tasks/*.md: front matter, the Description first, statuses, assignees, priorities, dependencies', async () => {
      const list = await readBacklogTasks(backlogProject);
      expect(list.source).toBe(join(backlogProject, 'backlog', 'tasks'));
      const plan = planImport(list, 10);
      expect(plan.mapping.map((m) => [m.from, m.to])).toEqual([
        ['task-1', 10],
        ['task-2', 11],
        ['task-3', 12],
        ['task-4', 13],
        ['task-4.01', 14],
      ]);
      const [schema, api, client, e2e, triage] = plan.tasks;
      expect(schema).toMatchObject({
        subject: 'Set up the database schema',
        // The Description section's text first, then the rest of the body; Backlog.md's editor markers dropped.
        description:
          'Tables for users and orders, with migrations.\n\n## Acceptance Criteria\n- [x] #1 users table with a unique email\n- [x] #2 orders reference users',
        status: 'completed',
        owner: 'ann',
        blockedBy: [],
        blocks: [11, 12],
        priority: 1,
        labels: ['backend', 'db'],
        metadata: {
          importedFrom: { tool: 'backlog', id: 'task-1' },
          backlog: { created_date: '2025-06-02 09:15', updated_date: '2025-06-03 17:40' },
        },
      });
      expect(api).toMatchObject({ status: 'in_progress', owner: 'bob', blockedBy: [], blocks: [13], priority: 2 });
      expect(api.description).toBe('CRUD endpoints for orders.\n\n## Implementation Plan\n\n1. Routes\n2. Validation');
      expect(client).toMatchObject({ priority: 2, labels: ['frontend'], metadata: { backlog: { milestone: 'v1' } } });
      // `TASK-3` is task-3 (ids match without case); the archived task-9 is not imported, so that edge goes.
      expect(e2e).toMatchObject({ owner: 'carol', blockedBy: [11, 12], priority: 3, metadata: { backlog: { ordinal: 4000, assignee: ['carol', 'dan'] } } });
      expect(triage).toMatchObject({
        status: 'pending',
        description: 'Note which tests fail without a change, and why.',
        labels: ['ci'],
        // Its parent_task_id is its parent (docs/protocol.md, "Parents"), not a link.
        parent: 13,
      });
      expect(triage.metadata).not.toHaveProperty('links');
      expect(triage).not.toHaveProperty('priority');
      expect(triage.metadata).not.toHaveProperty('labels');
      expect(plan.warnings).toEqual([
        'task-4: 2 assignees; the first, carol, is the owner, all are kept in metadata.backlog.assignee',
        'task-4.01: status "Blocked" is not To Do, In Progress or Done; imported as pending',
        'task-4 (End-to-end tests): dropped the edge to "task-9", which is not in the list',
      ]);
      expect(plan.notes).toEqual([
        `left out 1 task in ${join(backlogProject, 'backlog', 'drafts')} (drafts); only ${list.source} is imported`,
        `left out 1 task in ${join(backlogProject, 'backlog', 'archive', 'tasks')} (archived); only ${list.source} is imported`,
      ]);
    });

    it('takes the project root, backlog/ or backlog/tasks/ alike', async () => {
      const ids = async (path: string) => (await readBacklogTasks(path)).tasks.map((t) => t.sourceId);
      const expected = ['task-1', 'task-2', 'task-3', 'task-4', 'task-4.01'];
      expect(await ids(join(backlogProject, 'backlog'))).toEqual(expected);
      expect(await ids(join(backlogProject, 'backlog', 'tasks'))).toEqual(expected);
    });

    it('refuses YAML it cannot read with the file, line and column, and a cycle spelled out', async () => {
      const tasks = join(temp(), 'backlog', 'tasks');
      mkdirSync(tasks, { recursive: true });
      writeFileSync(join(tasks, 'task-1 - A.md'), '---\nid: task-1\ntitle: A\nstatus: To Do\ndependencies: [task-2\n---\n');
      const error = await readBacklogTasks(dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TasksError);
      expect((error as TasksError).code).toBe('E_INVALID');
      expect((error as TasksError).message).toMatch(
        new RegExp(`^${join(tasks, 'task-1 - A.md').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: invalid YAML front matter`),
      );
      writeFileSync(join(tasks, 'task-1 - A.md'), '---\nid: task-1\ntitle: A\nstatus: To Do\ndependencies: [task-2]\n---\n');
      writeFileSync(join(tasks, 'task-2 - B.md'), '---\nid: task-2\ntitle: B\nstatus: To Do\ndependencies: [task-1]\n---\n');
      const list = await readBacklogTasks(dir);
      expect(() => planImport(list, 1)).toThrow('has a cycle "task-1" -> "task-2" -> "task-1"');
    });

    it('says where nothing could be found', async () => {
      await expect(readBacklogTasks(join(temp(), 'nothing-here'))).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
    });

    it('never looks through a link it finds: a backlog/tasks folder that is a symlink is refused, naming it', async () => {
      const outside = join(temp(), 'outside');
      mkdirSync(outside);
      writeFileSync(join(outside, 'task-1 - A.md'), '---\nid: task-1\ntitle: A\nstatus: To Do\n---\n');
      mkdirSync(join(dir, 'project', 'backlog'), { recursive: true });
      symlinkSync(outside, join(dir, 'project', 'backlog', 'tasks'));
      await expect(readBacklogTasks(join(dir, 'project'))).rejects.toMatchObject({
        code: 'E_INVALID',
        message: `${join(dir, 'project', 'backlog', 'tasks')} is a symbolic link: an import never reads through a link it finds; give the folder it points to instead; nothing was imported`,
      });
      // The folder the import is given is taken as it is.
      expect((await readBacklogTasks(join(dir, 'project', 'backlog', 'tasks'))).tasks).toHaveLength(1);
    });

    it('a YAML alias that has no anchor is one line naming the file', async () => {
      const tasks = join(temp(), 'backlog', 'tasks');
      mkdirSync(tasks, { recursive: true });
      writeFileSync(join(tasks, 'task-1 - A.md'), '---\nid: task-1\ntitle: A\nstatus: To Do\nlabels: [*nothing]\n---\n');
      await expect(readBacklogTasks(dir)).rejects.toMatchObject({
        code: 'E_INVALID',
        message: expect.stringMatching(/^.*task-1 - A\.md: invalid YAML front matter: [^\n]*nothing[^\n]*; nothing was imported$/),
      });
    });
  });

  describe('beads', () => {
    it('reads issues.jsonl: blocks dependencies are edges, parent-child ones parents, related and discovered-from soft links, the other types metadata.links, tombstones left out', () => {
      const list = readBeadsIssues(beadsProject);
      expect(list.source).toBe(join(beadsProject, '.beads', 'issues.jsonl'));
      const plan = planImport(list, 1);
      expect(plan.mapping.map((m) => [m.from, m.to])).toEqual([
        ['bd-7f3a', 1],
        ['bd-7f3a.1', 2],
        ['bd-7f3a.2', 3],
        ['bd-9d02', 4],
        ['bd-c41e', 5],
      ]);
      const [epic, client, webhook, docs, refund] = plan.tasks;
      expect(epic).toMatchObject({
        subject: 'Payments',
        status: 'pending',
        blocks: [],
        priority: 1,
        labels: ['payments'],
        metadata: { beads: { issue_type: 'epic' } },
      });
      expect(client).toMatchObject({
        status: 'completed',
        owner: 'ann',
        blocks: [3],
        metadata: {
          importedFrom: { tool: 'beads', id: 'bd-7f3a.1' },
          beads: { close_reason: 'Done', closed_at: '2025-11-03T16:00:00.000000-08:00' },
        },
        // Its parent-child dependency on the epic is its parent, not a link.
        parent: 1,
      });
      expect(client.metadata).not.toHaveProperty('links');
      expect(webhook.parent).toBe(1);
      // A closed blocker keeps the edge on its side only (docs/protocol.md, "Edges").
      expect(webhook).toMatchObject({ status: 'in_progress', owner: 'bob', blockedBy: [], blocks: [5], discovered: [5] });
      expect(webhook.description).toBe('Handle payment_intent events.\n\n## Design\n\nVerify the signature first; store the raw event.');
      expect(docs).toMatchObject({ description: '## Notes\n\nKeys live in the vault.', priority: 3, labels: ['docs'], related: [5] });
      // beads' related and discovered-from are the soft links, on both sides (docs/protocol.md, "Links"); nothing is left in metadata.links.
      expect(refund).toMatchObject({ status: 'pending', blockedBy: [3], priority: 0, related: [4], discoveredFrom: [3] });
      expect(refund.metadata).not.toHaveProperty('links');
      expect(refund.description).toBe('Full and partial refunds.\n\n## Acceptance Criteria\n\n- partial refund keeps the order open');
      expect(plan.warnings).toEqual([]);
      expect(plan.notes).toEqual(['left out 1 tombstone (deleted issues)']);
    });

    it('keeps a related or discovered-from link to an issue not in the list in metadata.links; a parent-child one is the parent', () => {
      const file = join(temp(), 'issues.jsonl');
      const dep = (from: string, on: string, type: string) => ({ issue_id: from, depends_on_id: on, type });
      writeFileSync(
        file,
        [
          { id: 'bd-1', title: 'A', status: 'open', priority: 2, dependencies: [dep('bd-1', 'bd-gone', 'related'), dep('bd-1', 'bd-2', 'parent-child')] },
          { id: 'bd-2', title: 'B', status: 'open', priority: 2, dependencies: [dep('bd-2', 'bd-1', 'discovered-from'), dep('bd-2', 'bd-1', 'related')] },
        ]
          .map((i) => JSON.stringify(i))
          .join('\n'),
      );
      const [a, b] = planImport(readBeadsIssues(file), 1).tasks;
      expect(a).toMatchObject({ related: [2], discovered: [2], parent: 2 });
      expect(a.metadata?.links).toEqual([{ type: 'related', id: 'bd-gone' }]);
      expect(b).toMatchObject({ related: [1], discoveredFrom: [1] });
      expect(b.metadata).not.toHaveProperty('links');
      expect(a.blockedBy).toEqual([]);
      expect(b.blockedBy).toEqual([]);
    });

    it('refuses a line that is not JSON with its line, and a cycle of blocks with the beads ids', () => {
      const file = join(temp(), 'issues.jsonl');
      writeFileSync(file, '{"id":"bd-1","title":"A","status":"open"}\n{"id":"bd-2",\n');
      expect(() => readBeadsIssues(file)).toThrow(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:\\d+: invalid JSON`));
      const dep = (from: string, on: string) => ({ issue_id: from, depends_on_id: on, type: 'blocks' });
      writeFileSync(
        file,
        [
          { id: 'bd-1', title: 'A', status: 'open', priority: 2, dependencies: [dep('bd-1', 'bd-2')] },
          { id: 'bd-2', title: 'B', status: 'open', priority: 2, dependencies: [dep('bd-2', 'bd-1')] },
        ]
          .map((i) => JSON.stringify(i))
          .join('\n'),
      );
      expect(() => planImport(readBeadsIssues(file), 1)).toThrow('has a cycle "bd-1" -> "bd-2" -> "bd-1"');
    });

    it('a parent not in the list stays a link, with a warning; a cycle of parents is refused with the beads ids', () => {
      const file = join(temp(), 'issues.jsonl');
      const child = (from: string, on: string) => ({ issue_id: from, depends_on_id: on, type: 'parent-child' });
      const write = (issues: Record<string, unknown>[]) => writeFileSync(file, issues.map((i) => JSON.stringify(i)).join('\n'));
      write([
        { id: 'bd-1', title: 'A', status: 'open', priority: 2, dependencies: [child('bd-1', 'bd-9')] },
        { id: 'bd-2', title: 'B', status: 'open', priority: 2, dependencies: [child('bd-2', 'bd-1'), child('bd-2', 'bd-3')] },
        { id: 'bd-3', title: 'C', status: 'open', priority: 2 },
      ]);
      const plan = planImport(readBeadsIssues(file), 1);
      expect(plan.tasks.map((t) => t.parent)).toEqual([undefined, 1, undefined]);
      expect(plan.tasks[0].metadata?.links).toEqual([{ type: 'parent', id: 'bd-9' }]);
      // A second parent (beads allows it) stays a link.
      expect(plan.tasks[1].metadata?.links).toEqual([{ type: 'parent-child', id: 'bd-3', task: 3 }]);
      expect(plan.warnings).toEqual(['bd-1 (A): its parent "bd-9" is not in the list; kept in metadata.links']);
      write([
        { id: 'bd-1', title: 'A', status: 'open', priority: 2, dependencies: [child('bd-1', 'bd-2')] },
        { id: 'bd-2', title: 'B', status: 'open', priority: 2, dependencies: [child('bd-2', 'bd-1')] },
      ]);
      expect(() => planImport(readBeadsIssues(file), 1)).toThrow('has a cycle of parents "bd-1" -> "bd-2" -> "bd-1"');
    });

    it('an issue nested 20,000 deep is refused with its line; a link where issues.jsonl belongs is not read', () => {
      const project = temp();
      mkdirSync(join(project, '.beads'));
      const file = join(project, '.beads', 'issues.jsonl');
      writeFileSync(file, `{"id":"bd-1","title":"A","status":"open"}\n{"id":"bd-2","title":"B","design_doc":${'['.repeat(20_000)}${']'.repeat(20_000)}}\n`);
      expect(() => readBeadsIssues(project)).toThrow(`${file}:2: "design_doc" nests deeper than 100 levels (at design_doc[0][0][0]…); nothing was imported`);
      const elsewhere = join(project, 'elsewhere.jsonl');
      writeFileSync(elsewhere, '{"id":"bd-1","title":"From elsewhere","status":"open"}\n');
      rmSync(file);
      symlinkSync(elsewhere, file);
      expect(() => readBeadsIssues(project)).toThrow(`${file} is a symbolic link: an import never reads through a link in the folder`);
      // Named on the command line, a link is the user's own choice.
      expect(readBeadsIssues(file).tasks.map((t) => t.subject)).toEqual(['From elsewhere']);
    });
  });

  describe('the limits of create, and work in progress', () => {
    const store = (tasks: Record<string, unknown>[]) => {
      const file = join(temp(), 'tasks.json');
      writeFileSync(file, JSON.stringify({ next_id: tasks.length + 1, tasks }));
      return readTaskStoreFile(file);
    };

    it('labels and paths are written as create writes them: trimmed, sorted or in order, each once', () => {
      const file = join(temp(), 'board.json');
      writeFileSync(
        file,
        JSON.stringify({ tasks: [{ id: 1, subject: 'S', status: 'pending', labels: [' b', 'a', 'b'], paths: [' src/** ', 'src/**', 'docs/x.md'] }] }),
      );
      expect(planImport(readDotasksExport(file), 1).tasks[0]).toMatchObject({ labels: ['a', 'b'], paths: ['src/**', 'docs/x.md'] });
      writeFileSync(file, JSON.stringify({ tasks: [{ id: 1, subject: 'S', status: 'pending', priority: 1.5 }] }));
      expect(() => planImport(readDotasksExport(file), 1)).toThrow(
        `${file}: 1 (S): a priority is an integer from 0 (highest) to 4 (default 2), got 1.5; nothing was imported`,
      );
    });

    it('two in progress for one owner are a warning only under singleInProgress', () => {
      const list = store([
        { id: 'task_1', subject: 'A', status: 'in_progress', owner: 'ann' },
        { id: 'task_2', subject: 'B', status: 'in_progress', owner: 'ann' },
      ]);
      expect(planImport(list, { firstId: 1, board: [], singleInProgress: false }).warnings).toEqual([]);
      expect(planImport(list, { firstId: 1, board: [], singleInProgress: true }).warnings).toEqual([
        "ann has 2 tasks in progress (#1, #2) and the board allows one per owner (singleInProgress); release all but one ('tasks release ID --owner ann')",
      ]);
    });
  });

  describe('imported again (idempotent)', () => {
    const beads = (issues: Record<string, unknown>[]) => {
      const file = join(dir, 'issues.jsonl');
      writeFileSync(file, issues.map((i) => JSON.stringify(i)).join('\n') + '\n');
      return file;
    };

    it('refreshes what a task says and keeps where it stands, board notes and metadata included', async () => {
      const store = TaskStore.init(join(temp(), '.tasks'));
      const file = beads([
        { id: 'bd-1', title: 'One', status: 'open', priority: 1 },
        { id: 'bd-2', title: 'Two', status: 'open' },
      ]);
      await importTasks(store, readBeadsIssues(file));
      await store.claimTask(1, { owner: 'ann' });
      await store.addNote(1, 'on it', { actor: 'ann' });
      await store.updateTask(2, { metadata: { area: 'web' } });
      beads([
        { id: 'bd-1', title: 'One, renamed', status: 'closed', priority: 0, labels: ['x'] },
        { id: 'bd-2', title: 'Two', status: 'open' },
      ]);
      const result = await importTasks(store, readBeadsIssues(file));
      expect(result.summary).toEqual({ created: 0, updated: 1, unchanged: 1 });
      expect(store.getTask(1)).toMatchObject({
        subject: 'One, renamed',
        status: 'in_progress',
        owner: 'ann',
        priority: 0,
        labels: ['x'],
        notes: [{ text: 'on it' }],
      });
      expect(store.getTask(2).metadata).toMatchObject({ area: 'web', importedFrom: { tool: 'beads', id: 'bd-2', source: 'issues.jsonl' } });
      expect(result.warnings).toEqual([
        "bd-1 -> #1: the source has it completed, the board in_progress; the source's owner is nobody, the board's ann; a re-import leaves status, owner and edges as the board has them ('tasks done 1 --owner ann' to follow the source)",
      ]);
      const updated = store.readEvents().filter((e) => e.type === 'updated' && e.importedFrom);
      expect(updated).toMatchObject([{ task: 1, importedFrom: 'bd-1', fields: ['subject', 'priority', 'labels'] }]);
    });

    it('a source is its real path, relative to the folder holding the board when inside it', () => {
      const root = temp();
      mkdirSync(join(root, 'project', 'list'), { recursive: true });
      mkdirSync(join(root, 'elsewhere'));
      const board = join(root, 'project', '.tasks');
      expect(importSource(join(root, 'project', 'list') + '/', board)).toBe('list');
      expect(importSource(join(root, 'project', 'list', '..', 'list'), board)).toBe('list');
      symlinkSync(join(root, 'project', 'list'), join(root, 'link'));
      expect(importSource(join(root, 'link'), board)).toBe('list');
      expect(importSource(join(root, 'elsewhere'), board)).toBe(realpathSync(join(root, 'elsewhere')));
    });

    it('a task imported before sources were recorded counts; of several, the lowest id, with a warning', async () => {
      const store = TaskStore.init(join(temp(), '.tasks'));
      const file = beads([{ id: 'bd-1', title: 'One', status: 'open' }]);
      // As the imports before this change wrote it, twice (the doubled board).
      for (let i = 0; i < 2; i++) await store.createTask({ subject: 'One', metadata: { importedFrom: { tool: 'beads', id: 'bd-1' } } });
      const result = await importTasks(store, readBeadsIssues(file));
      expect(result.summary).toEqual({ created: 0, updated: 1, unchanged: 0 });
      expect(result.warnings).toEqual(["bd-1: imported more than once before (#1, #2); this import updates #1 ('tasks delete' the others)"]);
      expect(store.getTask(1).metadata).toEqual({ importedFrom: { tool: 'beads', id: 'bd-1', source: 'issues.jsonl' } });
      expect(store.listIds()).toEqual([1, 2]);
      // Without a source recorded, the subject must be the source's too: another project's task-1 is left alone.
      await store.createTask({ subject: 'Something else', metadata: { importedFrom: { tool: 'backlog', id: 'task-1' } } });
      const tasks = join(dir, 'backlog', 'tasks');
      mkdirSync(tasks, { recursive: true });
      writeFileSync(join(tasks, 'task-1 - A.md'), '---\nid: task-1\ntitle: A\nstatus: To Do\n---\n');
      expect((await importTasks(store, await readBacklogTasks(dir))).summary).toEqual({ created: 1, updated: 0, unchanged: 0 });
      expect(store.getTask(3).subject).toBe('Something else');
    });

    it('a new task that would close a cycle through tasks imported before is refused, naming them', async () => {
      const store = TaskStore.init(join(temp(), '.tasks'));
      const dep = (on: string) => ({ depends_on_id: on, type: 'blocks' });
      const file = beads([
        { id: 'bd-1', title: 'One', status: 'open' },
        { id: 'bd-2', title: 'Two', status: 'open', dependencies: [dep('bd-1')] },
      ]);
      await importTasks(store, readBeadsIssues(file));
      await store.createTask({ subject: 'By hand', blockedBy: [2] });
      // bd-3 waits for bd-2 and blocks bd-1: a cycle with the board's edge #1 -> #2.
      beads([
        { id: 'bd-1', title: 'One', status: 'open', dependencies: [dep('bd-3')] },
        { id: 'bd-2', title: 'Two', status: 'open', dependencies: [dep('bd-1')] },
        { id: 'bd-3', title: 'Three', status: 'open', dependencies: [dep('bd-2')] },
      ]);
      await expect(importTasks(store, readBeadsIssues(file))).rejects.toMatchObject({ code: 'E_CYCLE', message: expect.stringContaining('has a cycle "bd-') });
      expect(store.listIds()).toEqual([1, 2, 3]);
    });
  });

  describe('dotasks', () => {
    it('reads json and jsonl exports; a task imported before keeps that origin', () => {
      const view = (id: number, fields: Record<string, unknown>) => ({
        id,
        subject: `T${id}`,
        description: '',
        status: 'pending',
        owner: '',
        activeForm: null,
        blockedBy: [],
        blocks: [],
        metadata: {},
        ready: true,
        openBlockers: [],
        ...fields,
      });
      const views = [
        view(4, { blocks: [7], metadata: { importedFrom: { tool: 'beads', id: 'bd-1' }, area: 'web' } }),
        view(7, { blockedBy: [4], activeForm: 'x', status: 'in_progress', owner: 'ann' }),
      ];
      const file = join(temp(), 'board.json');
      writeFileSync(file, JSON.stringify({ tasks: views }, null, 2));
      const plan = planImport(readDotasksExport(file), 1);
      expect(plan.tasks).toEqual([
        {
          id: 1,
          subject: 'T4',
          description: '',
          status: 'pending',
          owner: '',
          blockedBy: [],
          blocks: [2],
          extra: {},
          metadata: { importedFrom: { tool: 'dotasks', id: '4', previous: { tool: 'beads', id: 'bd-1' } }, area: 'web' },
        },
        {
          id: 2,
          subject: 'T7',
          description: '',
          status: 'in_progress',
          owner: 'ann',
          activeForm: 'x',
          blockedBy: [1],
          blocks: [],
          extra: {},
          metadata: { importedFrom: { tool: 'dotasks', id: '7' } },
        },
      ]);
      writeFileSync(file, views.map((v) => JSON.stringify(v)).join('\n'));
      expect(planImport(readDotasksExport(file), 1).tasks).toEqual(plan.tasks);
    });

    it("carries an export's soft links to the new ids, on both sides", () => {
      const view = (id: number, fields: Record<string, unknown>) => ({ id, subject: `T${id}`, status: 'pending', blockedBy: [], blocks: [], ...fields });
      const file = join(temp(), 'board.json');
      // #9 states only its side of the link to #3; #5 names #40, which the export does not have.
      const views = [view(3, { related: [5], discovered: [5] }), view(5, { related: [3, 40], discoveredFrom: [3] }), view(9, { related: [3] })];
      writeFileSync(file, JSON.stringify({ tasks: views }));
      const [t3, t5, t9] = planImport(readDotasksExport(file), 1).tasks;
      expect(t3).toMatchObject({ id: 1, related: [2, 3], discovered: [2] });
      expect(t5).toMatchObject({ id: 2, related: [1], discoveredFrom: [1], metadata: { links: [{ type: 'related', id: '40' }] } });
      expect(t9).toMatchObject({ id: 3, related: [1] });
    });
  });
});
