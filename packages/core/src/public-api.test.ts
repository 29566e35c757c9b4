import { describe, expect, it } from 'vitest';

// The names @dotasks/core promises (docs/library.md). This list changes only
// on purpose: a name added here is a promise kept from then on, a name
// removed is a breaking change. Everything else the siblings use is in
// @dotasks/core/internal.
const PUBLIC = [
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

describe('the public API of @dotasks/core', () => {
  it('exports exactly the names it promises', async () => {
    const api = await import('./index.js');
    expect(Object.keys(api).sort()).toEqual(PUBLIC);
  });

  it('the internal entry holds the public names too, as the same objects', async () => {
    const api: Record<string, unknown> = await import('./index.js');
    const internal: Record<string, unknown> = await import('./internal.js');
    for (const name of PUBLIC) expect(internal[name], name).toBe(api[name]);
  });

  it('the read and store entries stay subsets of the internal one', async () => {
    const internal: Record<string, unknown> = await import('./internal.js');
    for (const entry of [await import('./read.js'), await import('./store.js')])
      for (const [name, value] of Object.entries(entry)) expect(internal[name], name).toBe(value);
  });
});
