import { describe, expect, it } from 'vitest';

// What each package promises its users, by name (docs/library.md). These lists
// change only on purpose: a name added is a promise kept from then on, a name
// removed is a breaking change. The packages are imported as a user would, by
// name (their built entries). @dotasks/core has its own list beside its index.
const CORE = [
  'ClaimError',
  'CorruptTaskError',
  'CycleError',
  'EVENTS_FILE',
  'EXPORT_FORMATS',
  'GRAPH_FORMATS',
  'PLAIN_STYLE',
  'TASK_STATUSES',
  'TaskStore',
  'TasksError',
  'claimWithSync',
  'claimWithWorktree',
  'countTasks',
  'diagnoseBoard',
  'explainRank',
  'exportBoard',
  'filterTasks',
  'findBoard',
  'findCycle',
  'followEvents',
  'isClosed',
  'isReady',
  'listTaskWorktrees',
  'openBlockers',
  'parseEvents',
  'parseTaskId',
  'readConfig',
  'readyOrder',
  'removeTaskWorktree',
  'renderBoard',
  'renderGraph',
  'renderProblem',
  'renderSummary',
  'renderTaskDetail',
  'renderTaskLine',
  'repairBoard',
  'resolveBoardDir',
  'resolveOwner',
  'searchTasks',
  'syncBoard',
  'toTaskView',
  'waitForTask',
  'watchClaim',
];

const TODO_TOOL = ['TODO_ACTIONS', 'TODO_TOOL_NAME', 'TOOL_SCHEMA_FORMATS', 'createTodoTool', 'renderToolResult', 'todoInputSchema', 'toolDefinition'];

const PUBLIC: Record<string, string[]> = {
  dotasks: [...CORE, ...TODO_TOOL, 'runWorker', 'watchBoard'],
  '@dotasks/agent': [
    ...TODO_TOOL,
    'TODO_DESCRIPTION',
    'TODO_STATUSES',
    // Jobs and the stop hook, which `tasks start`, `tasks jobs` and `tasks guard` are made of.
    'decideStopHook',
    'isFinished',
    'killJob',
    'listJobViews',
    'nudgeFor',
    'startJob',
    'tasksInProgress',
    'viewJob',
    // Process groups, kept here for the agent API (they live in the core).
    'groupMembers',
    'isRunning',
    'killGroup',
  ],
  '@dotasks/watch': ['watchBoard'],
  '@dotasks/worker': ['runWorker', 'waitingOn'],
};

describe('the public API of each package', () => {
  for (const [name, names] of Object.entries(PUBLIC))
    it(`${name} exports exactly the names it promises`, async () => {
      const api = (await import(name)) as Record<string, unknown>;
      expect(Object.keys(api).sort()).toEqual([...names].sort());
    });

  it('dotasks re-exports the very objects of the packages it is made of', async () => {
    const dotasks = (await import('dotasks')) as Record<string, unknown>;
    const parts = await Promise.all(['@dotasks/core', '@dotasks/agent', '@dotasks/watch', '@dotasks/worker'].map((p) => import(p)));
    for (const name of Object.keys(dotasks)) expect(parts.some((p: Record<string, unknown>) => p[name] === dotasks[name]), name).toBe(true);
  });
});
