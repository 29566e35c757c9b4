import { describe, expect, it } from 'vitest';
import { CORE_PUBLIC_NAMES } from '../../core/test/public-names.js';

// What each package promises its users, by name (docs/library.md). These lists
// change only on purpose: a name added is a promise kept from then on, a name
// removed is a breaking change. The packages are imported as a user would, by
// name (their built entries). @dotasks/core has its own list beside its index.
// The core's own list, pinned beside its index.
const CORE = CORE_PUBLIC_NAMES;

const TODO_TOOL = ['TODO_ACTIONS', 'TODO_TOOL_NAME', 'TOOL_SCHEMA_FORMATS', 'createTodoTool', 'renderToolResult', 'todoInputSchema', 'toolDefinition'];

const PUBLIC: Record<string, string[]> = {
  dotasks: [...CORE, ...TODO_TOOL, 'runWorker', 'watchBoard'],
  '@dotasks/agent': [
    ...TODO_TOOL,
    'TODO_DESCRIPTION',
    'TODO_STATUSES',
    // The strict-mode (OpenAI Structured Outputs) form of a tool schema, and the form served over MCP.
    'strictSchema',
    'portableSchema',
    'STRICT_SCHEMA_KEYWORDS',
    // The protocol's steps (shared by the description and the primer) and `tasks prime`.
    'PROTOCOL_STEPS',
    'SHARED_BOARD_RULES',
    'renderPrime',
    // Jobs and the stop hook, which `tasks start`, `tasks jobs` and `tasks guard` are made of.
    'decideStopHook',
    // The edit hook: a Claude Code PreToolUse hook that keeps edits in the claimed task's file scope.
    'decideEditHook',
    'EDIT_TOOL_FILE_FIELDS',
    'isFinished',
    'killJob',
    'listJobViews',
    'nudgeFor',
    'startJob',
    'tasksInProgress',
    'viewJob',
    // The todo tool's MCP server, which `tasks mcp` runs.
    'runMcpServer',
    // Process groups, kept here for the agent API (they live in the core).
    'groupMembers',
    'isRunning',
    'killGroup',
  ],
  '@dotasks/watch': ['watchBoard'],
  '@dotasks/worker': ['runReviewWorker', 'runWorker', 'waitingOn'],
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
    for (const name of Object.keys(dotasks))
      expect(
        parts.some((p: Record<string, unknown>) => p[name] === dotasks[name]),
        name,
      ).toBe(true);
  });
});
