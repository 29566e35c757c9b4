import { createRequire } from 'node:module';
import { TaskStore, renderBoard, filterTasks, countTasks, toTaskView, type BoardSnapshot } from '@dotasks/core';
import { EVENTS_FILE, watchFolder, type Follower } from '@dotasks/core/internal';
import { actingOwner, type CommandOutput, type GlobalOptions } from '../context.js';

const BOARD_URI = 'tasks://board';
const BOARD_JSON_URI = 'tasks://board.json';
const BOARD_URIS = [BOARD_URI, BOARD_JSON_URI];
/** A burst of file events (one command writes several files) makes one notification. */
const CHANGE_DEBOUNCE_MS = 50;
/** fs.watch misses events on some file systems, and a re-created board needs a new watch: look this often anyway. */
const CHANGE_POLL_MS = 2_000;

/** The board as tasks://board.json serves it. */
function boardJson(snapshot: BoardSnapshot): string {
  const lookup = (id: number) => snapshot.byId.get(id);
  const view = { tasks: filterTasks(snapshot).map((t) => toTaskView(t, lookup)), problems: snapshot.problems, counts: countTasks(snapshot) };
  return JSON.stringify(view, null, 2);
}

/**
 * Calls `onChange` when the board changes, whoever changed it: task files
 * and .highwatermark in the board folder, the event log in .runtime/ (every
 * change made through the core appends to it). Compares what the board
 * reads as, so lock folders, leases renewed and the poll notify nothing.
 */
function watchBoardChanges(store: TaskStore, onChange: () => void): Follower {
  let last = boardJson(store.loadBoard());
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    timer = undefined;
    let now: string;
    try {
      now = boardJson(store.loadBoard());
    } catch {
      now = ''; // the board is gone for now: that is a change too, once
    }
    if (now === last) return;
    last = now;
    onChange();
  };
  const soon = () => {
    if (!timer) timer = setTimeout(look, CHANGE_DEBOUNCE_MS);
  };
  const board = watchFolder(store.dir, CHANGE_POLL_MS, (name) => {
    if (name === null || /^task_[1-9][0-9]*\.json$/.test(name) || name === '.highwatermark') soon();
  });
  const log = watchFolder(store.runtimeDir, CHANGE_POLL_MS, (name) => {
    if (name === EVENTS_FILE) soon();
  });
  return {
    close() {
      board.close();
      log.close();
      if (timer) clearTimeout(timer);
    },
  };
}

/**
 * `tasks mcp`: a stdio MCP server exposing the `todo` tool and the board as
 * resources. The SDK is imported here, lazily, so no other command loads it.
 * Resolves (exit 0) when the client closes stdin.
 */
export async function mcp(options: GlobalOptions & { clear?: boolean }): Promise<CommandOutput> {
  // The low-level Server serves the tool's own JSON Schema as is (McpServer wants zod shapes).
  const [{ Server }, { StdioServerTransport }, types, agent] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@dotasks/agent'),
  ]);
  const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  const owner = actingOwner(options);
  const tool = agent.createTodoTool({ dir: options.dir, cwd: options.cwd, owner, allowClear: options.clear !== false });
  let store: TaskStore | undefined;
  const openStore = () => (store ??= TaskStore.open({ dir: options.dir, cwd: options.cwd }));

  const server = new Server(
    { name: 'dotasks', version },
    {
      capabilities: { tools: {}, resources: { subscribe: true } },
      instructions:
        `A task board shared through .tasks/ files. Use the "todo" tool to plan (create, link with add_blocked_by), ` +
        `work one task at a time (update status in_progress, then completed) and read the board in every result. You act as "${owner}".`,
    },
  );

  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: tool.name,
        title: 'Task board',
        description: tool.description,
        // Without the constraints strict mode refuses (the tool checks them): clients convert this schema themselves.
        inputSchema: agent.portableSchema(tool.inputSchema),
        annotations: {
          title: 'Task board',
          // One tool with many actions: it writes, and "clear"/"deleted" remove work.
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
    ],
  }));

  // Calls still running when stdin ends are answered before the server closes.
  const inflight = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    inflight.add(work);
    work.then(
      () => inflight.delete(work),
      () => inflight.delete(work),
    );
    return work;
  };

  // One call at a time, in the order they came: a client may send `update 1`
  // right after `create` without waiting for its answer, and means it to
  // apply to the task created.
  let queue: Promise<unknown> = Promise.resolve();
  const inOrder = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };

  server.setRequestHandler(types.CallToolRequestSchema, async (request) => {
    if (request.params.name !== tool.name) {
      return { content: [{ type: 'text' as const, text: `unknown tool "${request.params.name}"; this server has "${tool.name}"` }], isError: true };
    }
    const args = request.params.arguments ?? {};
    const result = await track(inOrder(() => tool.execute(args)));
    return {
      content: [{ type: 'text' as const, text: agent.renderToolResult(result) }],
      structuredContent: result as unknown as Record<string, unknown>,
      isError: !result.ok,
    };
  });

  server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({
    resources: [
      { uri: BOARD_URI, name: 'board', title: 'Task board', description: 'The board, one task a line (as tasks list prints it)', mimeType: 'text/plain' },
      {
        uri: BOARD_JSON_URI,
        name: 'board.json',
        title: 'Task board (JSON)',
        description: 'Every task in the documented JSON shape',
        mimeType: 'application/json',
      },
    ],
  }));

  server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const snapshot = openStore().loadBoard();
    if (uri === BOARD_URI) return { contents: [{ uri, mimeType: 'text/plain', text: renderBoard(snapshot) }] };
    if (uri === BOARD_JSON_URI) return { contents: [{ uri, mimeType: 'application/json', text: boardJson(snapshot) }] };
    throw new types.McpError(types.ErrorCode.InvalidParams, `unknown resource ${uri}; this server has ${BOARD_URI} and ${BOARD_JSON_URI}`);
  });

  // Subscriptions: one watch of the board while anything is subscribed; an
  // update of both resources whenever the board reads differently.
  const subscribed = new Set<string>();
  let boardWatch: Follower | undefined;
  const knownResource = (uri: string) => {
    if (!BOARD_URIS.includes(uri))
      throw new types.McpError(types.ErrorCode.InvalidParams, `unknown resource ${uri}; this server has ${BOARD_URIS.join(' and ')}`);
  };
  server.setRequestHandler(types.SubscribeRequestSchema, async (request) => {
    const uri = request.params.uri;
    knownResource(uri);
    boardWatch ??= watchBoardChanges(openStore(), () => {
      for (const subscribedUri of subscribed) void server.sendResourceUpdated({ uri: subscribedUri }).catch(() => undefined);
    });
    subscribed.add(uri);
    return {};
  });
  server.setRequestHandler(types.UnsubscribeRequestSchema, async (request) => {
    knownResource(request.params.uri);
    subscribed.delete(request.params.uri);
    if (subscribed.size === 0) {
      boardWatch?.close();
      boardWatch = undefined;
    }
    return {};
  });

  const closed = new Promise<void>((resolve) => {
    server.onclose = () => {
      boardWatch?.close();
      resolve();
    };
  });
  server.onerror = (error) => process.stderr.write(`tasks mcp: ${error.message}\n`);
  const transport = new StdioServerTransport();
  // The stdio transport does not watch for the end of stdin: a client that closes it is done.
  process.stdin.once('end', () => {
    void (async () => {
      while (inflight.size) await Promise.allSettled([...inflight]);
      await new Promise((resolve) => setImmediate(resolve)); // let the last reply be written
      await server.close();
    })();
  });
  await server.connect(transport);
  await closed;
  return {};
}
