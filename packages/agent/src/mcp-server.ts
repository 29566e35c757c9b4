/**
 * The todo tool as an MCP server over stdio (what `tasks mcp` runs): the
 * tool, and the board as two resources a client may subscribe to. It sits
 * beside the tool it serves; the CLI's command only maps its options here.
 * The SDK is imported when the server starts, never by this module's
 * importers, so no other command loads it.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { TaskStore, renderBoard, filterTasks, countTasks, toTaskView, type BoardSnapshot } from '@dotasks/core';
import { EVENTS_FILE, boardLookup, watchFolder, type Follower } from '@dotasks/core/internal';
import { portableSchema } from './strict-schema.js';
import { createTodoTool, renderToolResult, type TodoTool } from './todo-tool.js';

/** Options of {@link runMcpServer}. */
export interface McpServerOptions {
  /** The board, found like the CLI finds it (docs/protocol.md, "Where the board is"). */
  dir?: string;
  cwd?: string;
  /** Who the tool acts as. */
  owner: string;
  /** The version the server reports to its client. */
  version: string;
  /** Whether the tool's `clear` (which removes every task) may run (`tasks mcp --no-clear`: no); default yes. */
  allowClear?: boolean;
  /** Where the server's own errors go (a broken message, a failed write); default: ignored. */
  onError?: (error: Error) => void;
}

type McpTypes = typeof import('@modelcontextprotocol/sdk/types.js');

const BOARD_URI = 'tasks://board';
const BOARD_JSON_URI = 'tasks://board.json';
const BOARD_URIS = [BOARD_URI, BOARD_JSON_URI];
/** A burst of file events (one command writes several files) makes one notification. */
const CHANGE_DEBOUNCE_MS = 50;
/** fs.watch misses events on some file systems, and a re-created board needs a new watch: look this often anyway. */
const CHANGE_POLL_MS = 2_000;

/** The board as tasks://board.json serves it. */
function boardJson(snapshot: BoardSnapshot): string {
  const lookup = boardLookup(snapshot);
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
 * The tool's calls: one at a time, in the order they came (a client may send
 * `update 1` right after `create` without waiting for its answer, and means
 * it to apply to the task created), and those still running are known, so
 * they are answered before the server closes.
 */
function createCallQueue() {
  const inflight = new Set<Promise<unknown>>();
  let queue: Promise<unknown> = Promise.resolve();
  return {
    run<T>(work: () => Promise<T>): Promise<T> {
      const next = queue.then(work, work);
      queue = next.catch(() => undefined);
      inflight.add(next);
      next.then(
        () => inflight.delete(next),
        () => inflight.delete(next),
      );
      return next;
    },
    /** Resolves once no call is running, also those that started meanwhile. */
    async settle(): Promise<void> {
      while (inflight.size) await Promise.allSettled([...inflight]);
    },
  };
}

/** The server itself, with what it tells a client about the board and who it acts as. */
function createServer(ServerClass: typeof Server, options: McpServerOptions): Server {
  // The low-level Server serves the tool's own JSON Schema as is (McpServer wants zod shapes).
  return new ServerClass(
    { name: 'dotasks', version: options.version },
    {
      capabilities: { tools: {}, resources: { subscribe: true } },
      instructions:
        `A task board shared through .tasks/ files. Use the "todo" tool to plan (create, link with add_blocked_by), ` +
        `work one task at a time (update status in_progress, then completed) and read the board in every result. You act as "${options.owner}".`,
    },
  );
}

/** tools/list and tools/call: the todo tool, its calls in order. */
function serveTool(server: Server, types: McpTypes, tool: TodoTool, calls: ReturnType<typeof createCallQueue>): void {
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({
    tools: [
      {
        name: tool.name,
        title: 'Task board',
        description: tool.description,
        // Without the constraints strict mode refuses (the tool checks them): clients convert this schema themselves.
        inputSchema: portableSchema(tool.inputSchema),
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

  server.setRequestHandler(types.CallToolRequestSchema, async (request) => {
    if (request.params.name !== tool.name) {
      return { content: [{ type: 'text' as const, text: `unknown tool "${request.params.name}"; this server has "${tool.name}"` }], isError: true };
    }
    const args = request.params.arguments ?? {};
    const result = await calls.run(() => tool.execute(args));
    return {
      content: [{ type: 'text' as const, text: renderToolResult(result) }],
      structuredContent: result as unknown as Record<string, unknown>,
      isError: !result.ok,
    };
  });
}

/** Refuses a uri that names neither of the board's two resources. */
function checkResource(types: McpTypes, uri: string): void {
  if (!BOARD_URIS.includes(uri))
    throw new types.McpError(types.ErrorCode.InvalidParams, `unknown resource ${uri}; this server has ${BOARD_URIS.join(' and ')}`);
}

/** resources/list and resources/read: the board as `tasks list` prints it, and as JSON. */
function serveResources(server: Server, types: McpTypes, openStore: () => TaskStore): void {
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
}

/**
 * resources/subscribe and unsubscribe: one watch of the board while anything
 * is subscribed, and an update of every subscribed resource whenever the
 * board reads differently. Returns what stops the watch when the server closes.
 */
function serveSubscriptions(server: Server, types: McpTypes, openStore: () => TaskStore): Follower {
  const subscribed = new Set<string>();
  let boardWatch: Follower | undefined;
  server.setRequestHandler(types.SubscribeRequestSchema, async (request) => {
    const uri = request.params.uri;
    checkResource(types, uri);
    boardWatch ??= watchBoardChanges(openStore(), () => {
      for (const subscribedUri of subscribed) void server.sendResourceUpdated({ uri: subscribedUri }).catch(() => undefined);
    });
    subscribed.add(uri);
    return {};
  });
  server.setRequestHandler(types.UnsubscribeRequestSchema, async (request) => {
    checkResource(types, request.params.uri);
    subscribed.delete(request.params.uri);
    if (subscribed.size === 0) {
      boardWatch?.close();
      boardWatch = undefined;
    }
    return {};
  });
  return { close: () => boardWatch?.close() };
}

/**
 * The stdio transport does not watch for the end of stdin: a client that
 * closes it is done, once the calls it sent are answered.
 */
function closeWhenStdinEnds(server: Server, calls: ReturnType<typeof createCallQueue>): void {
  process.stdin.once('end', () => {
    void (async () => {
      await calls.settle();
      await new Promise((resolve) => setImmediate(resolve)); // let the last reply be written
      await server.close();
    })();
  });
}

/**
 * Serves the `todo` tool and the board over stdio until the client closes
 * stdin (`tasks mcp`); resolves then.
 */
export async function runMcpServer(options: McpServerOptions): Promise<void> {
  const [{ Server }, { StdioServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const tool = createTodoTool({ dir: options.dir, cwd: options.cwd, owner: options.owner, allowClear: options.allowClear !== false });
  let store: TaskStore | undefined;
  const openStore = () => (store ??= TaskStore.open({ dir: options.dir, cwd: options.cwd }));
  const calls = createCallQueue();

  const server = createServer(Server, options);
  serveTool(server, types, tool, calls);
  serveResources(server, types, openStore);
  const subscriptions = serveSubscriptions(server, types, openStore);
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => {
      subscriptions.close();
      resolve();
    };
  });
  server.onerror = (error) => options.onError?.(error);
  closeWhenStdinEnds(server, calls);
  await server.connect(new StdioServerTransport());
  await closed;
}
