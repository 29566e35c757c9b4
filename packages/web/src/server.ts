import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { constants as zlibConstants, createGzip, gzip } from 'node:zlib';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isErrnoException, TasksError, type TaskStore } from '@dotasks/core/internal';
import { runWrite } from './actions.js';
import { createBoardFeed, type BoardFeed, type BoardFeedOptions } from './board-feed.js';
import { openEventStream, stateFrame, type EventStream } from './event-stream.js';
import { allowedHostName, createHostCheck, isWildcard, type HostCheck } from './host-names.js';
import type { WebError, WebHistoryPage } from './wire.js';

/** Options of startServer. */
export interface WebServerOptions {
  store: TaskStore;
  /** Who writes from the page act as (the CLI's acting owner). */
  actor: string;
  /** Default 127.0.0.1. Anything else is the caller's explicit choice (`--host`). */
  host?: string;
  /** Default 0: a free port the system picks. */
  port?: number;
  /** More names the server answers to in the Host header (`--allow-host`), besides those it serves. */
  allowHosts?: readonly string[];
  /** The built page (default: dist/public beside this module). */
  publicDir?: string;
  /** Told of each read of the board and each poll that found nothing moved (BoardFeedOptions.trace). */
  trace?: BoardFeedOptions['trace'];
}

/** A running server. */
export interface WebServer {
  /** The page's address, with the token: open this. */
  url: string;
  host: string;
  port: number;
  /** The names (without the port) it answers to in the Host header; any other is refused. */
  hosts: string[];
  /** This run's write token (random, new on every start). */
  token: string;
  close(): Promise<void>;
}

export const DEFAULT_HOST = '127.0.0.1';
const TOKEN_HEADER = 'x-tasks-token';
/** How many events a page gets when it connects, and the most a slow page's stream gathers while it is behind. */
const KEEP_EVENTS = 300;
/** A page of the history: as many as asked (`limit`), at most this many. */
const HISTORY_PAGE = 50;
const MAX_HISTORY_PAGE = 500;
/** A task file is at most 1 MiB (docs/protocol.md, "One task, one file"); a request needs no more. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/** `host:port` as it appears in a Host header and a URL (IPv6 in brackets). */
function authority(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/** The Host headers of a request as sent (req.headers keeps the first of several). */
function hostHeaders(req: IncomingMessage): string[] {
  const values: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') values.push(req.rawHeaders[i + 1]);
  return values;
}

/** A header's value as a refusal quotes it: short, on one line. */
function quoted(value: string): string {
  return `'${value.length > 100 ? `${value.slice(0, 100)}…` : value}'`;
}

/** HTTP status of a refusal, by the core's stable code. */
function statusFor(code: string): number {
  switch (code) {
    case 'E_USAGE':
    case 'E_INVALID':
      return 400;
    case 'E_FORBIDDEN':
      return 403;
    case 'E_NOT_FOUND':
      return 404;
    case 'E_LOCKED':
      return 503;
    case 'E_IO':
    case 'E_INTERNAL':
      return 500;
    default:
      return 409; // the board refused: cycle, blocked, transition, claimed, not the owner …
  }
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendError(res: ServerResponse, code: string, message: string): void {
  const body: WebError = { error: { code, message } };
  sendJson(res, statusFor(code), body);
}

function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new TasksError('E_USAGE', `the request is larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new TasksError('E_USAGE', 'the request body is not JSON'));
      }
    });
  });
}

/** What a running server keeps, passed to each step of a request. */
interface ServerState {
  readonly options: WebServerOptions;
  readonly publicDir: string;
  readonly token: string;
  readonly feed: BoardFeed;
  /** The pages following the board, by their response. */
  readonly streams: Map<ServerResponse, EventStream>;
  /** Made once the port is known, before any request can come. */
  hostCheck: HostCheck | undefined;
  /** The address requests' paths are read against. */
  base: string;
}

/**
 * Starts the page's server (plain node:http): the built page, the board as
 * JSON, its changes as server-sent events, and writes through the store.
 * Every request must name this server in exactly one Host header, by a name
 * it serves (a page of another site that rebinds its name to one of this
 * machine's addresses gets neither the page nor the board); every API
 * call needs the run's token, and a write also an Origin, when one is sent,
 * of this server (docs/decisions.md, "tasks serve").
 */
export async function startServer(options: WebServerOptions): Promise<WebServer> {
  const host = options.host ?? DEFAULT_HOST;
  const allowHosts = (options.allowHosts ?? []).map(allowedHostName); // a usage error before anything starts
  const state: ServerState = {
    options,
    publicDir: options.publicDir ?? fileURLToPath(new URL('./public/', import.meta.url)),
    token: randomBytes(24).toString('base64url'),
    feed: createBoardFeed(options.store, { actor: options.actor, keepEvents: KEEP_EVENTS, trace: options.trace }),
    streams: new Map(),
    hostCheck: undefined,
    base: '',
  };
  broadcastFeed(state);
  const server = createServer((req, res) => {
    handleRequest(state, req, res).catch((error: unknown) => answerFailure(res, error));
  });
  try {
    await listen(server, host, options.port ?? 0);
  } catch (error) {
    state.feed.close();
    throw listenError(error, host, options.port);
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const wildcard = isWildcard(host);
  const shown = wildcard ? authority(host.includes(':') ? '::1' : '127.0.0.1', port) : authority(host, port);
  state.hostCheck = createHostCheck(host, port, allowHosts);
  state.base = `http://${shown}`;
  return {
    url: `http://${shown}/?token=${state.token}`,
    host,
    port,
    hosts: state.hostCheck.names(),
    token: state.token,
    close: () => closeServer(state, server),
  };
}

/** One frame per state for every page: the pages that are behind hold the same bytes, not a copy each. */
function broadcastFeed({ feed, streams }: ServerState): void {
  feed.subscribe((message) => {
    if (message.kind === 'state') {
      const frame = stateFrame(message.json);
      for (const stream of streams.values()) stream.sendState(frame);
    } else for (const stream of streams.values()) stream.sendEvents(message.events);
  });
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Why the server cannot listen, said with the flag that fixes it. */
function listenError(error: unknown, host: string, port: number | undefined): unknown {
  if (isErrnoException(error, 'EADDRINUSE'))
    return new TasksError('E_IO', `port ${port} on ${host} is in use; pick another with --port, or 0 for any free one`, {}, { cause: error });
  if (isErrnoException(error, 'EADDRNOTAVAIL') || isErrnoException(error, 'ENOTFOUND'))
    return new TasksError('E_IO', `cannot listen on ${host}: no such address on this machine`, {}, { cause: error });
  return error;
}

async function closeServer({ feed, streams }: ServerState, server: Server): Promise<void> {
  feed.close();
  for (const stream of streams.values()) stream.end();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections(); // keep-alive connections of the page would hold close() for seconds
  await closed;
}

/** A request that failed: the board's refusal by its code, anything else as E_INTERNAL. */
function answerFailure(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const err = error as { code?: unknown; message?: string; name?: string };
  const known = error instanceof TasksError || (typeof err?.code === 'string' && err.code.startsWith('E_') && err.name !== undefined);
  if (known) sendError(res, String(err.code), String(err.message));
  else sendError(res, 'E_INTERNAL', `unexpected error: ${err?.message ?? String(error)}`);
}

/** Every request: the Host it names first, then the page's files or the API. */
async function handleRequest(state: ServerState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const named = hostHeaders(req);
  // RFC 9112, 3.2: exactly one Host, or 400 (a proxy and this server could each read another one).
  if (named.length !== 1) return sendError(res, 'E_USAGE', `refused: a request names its server in exactly one Host header (this one had ${named.length})`);
  const hostHeader = named[0].toLowerCase();
  if (!state.hostCheck?.accepts(hostHeader))
    return sendError(
      res,
      'E_FORBIDDEN',
      `refused: this server answers only to the names it serves, not to Host ${quoted(named[0])} (tasks serve prints them; --allow-host NAME adds one)`,
    );
  const url = new URL(req.url ?? '/', state.base);
  const method = req.method ?? 'GET';
  if (!url.pathname.startsWith('/api/')) {
    if (method !== 'GET' && method !== 'HEAD') return sendError(res, 'E_NOT_FOUND', `no such page: ${method} ${url.pathname}`);
    return serveFile(state, res, url.pathname);
  }
  const refusal = refuseCaller(state, req, url, hostHeader);
  if (refusal) return sendError(res, 'E_FORBIDDEN', refusal);
  return handleApi(state, req, res, url);
}

/**
 * Why an API call is refused, if it is: every call needs this run's token,
 * and a write must not come from another site.
 */
function refuseCaller(state: ServerState, req: IncomingMessage, url: URL, hostHeader: string): string | undefined {
  const reading = req.method === undefined || req.method === 'GET';
  // Reads take the token from the query too (EventSource cannot send headers); writes only from the header.
  const given = (req.headers[TOKEN_HEADER] as string | undefined) ?? (reading ? (url.searchParams.get('token') ?? undefined) : undefined);
  if (!sameToken(given, state.token)) return `refused: a request needs this run's token (the ${TOKEN_HEADER} header); open the URL 'tasks serve' printed`;
  if (reading) return undefined;
  const origin = req.headers.origin;
  if (origin !== undefined && origin.toLowerCase() !== `http://${hostHeader}`) return `refused: a write from another site (Origin ${origin})`;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return `refused: a write from another site (Sec-Fetch-Site ${String(site)})`;
  return undefined;
}

/** The API, once the caller is let in: the state, its stream of changes, and writes. */
async function handleApi(state: ServerState, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const { options, feed } = state;
  const method = req.method ?? 'GET';
  const reading = method === 'GET';
  const path = url.pathname.slice('/api'.length);
  if (reading && path === '/state') return sendState(req, res, feed.stateJson());
  if (reading && path === '/events') return openStream(state, req, res);
  if (reading && path === '/history') return sendJson(res, 200, historyPage(feed, url.searchParams));
  const task = reading ? /^\/task\/([^/]+)$/.exec(path) : null;
  if (task) {
    const id = positiveId(task[1], 'a task id');
    const answer = feed.history().task(id, feed.historyBranches);
    if (!answer) return sendError(res, 'E_NOT_FOUND', `task #${id} is not on the board (deleted, or its file is not a valid task)`);
    return sendJson(res, 200, answer);
  }
  if (reading) return sendError(res, 'E_NOT_FOUND', `no such call: GET ${url.pathname}`);
  const body = await readBody(req);
  const result = await runWrite(options.store, options.actor, { method, path, body });
  if (result === undefined) return sendError(res, 'E_NOT_FOUND', `no such call: ${method} ${url.pathname}`);
  feed.refresh(); // every page sees the write before its author gets the answer
  sendJson(res, 200, result);
}

/** Whether the caller takes gzip (every browser does); a client that does not gets the bytes as they are. */
function takesGzip(req: IncomingMessage): boolean {
  return /\bgzip\b/i.test(String(req.headers['accept-encoding'] ?? ''));
}

/** The state, compressed for a caller that takes it (off the event loop: the open work of a large board is megabytes of JSON). */
function sendState(req: IncomingMessage, res: ServerResponse, json: string): Promise<void> | void {
  const headers = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', vary: 'accept-encoding' };
  if (!takesGzip(req)) {
    res.writeHead(200, headers);
    res.end(json);
    return;
  }
  return new Promise((resolve, reject) => {
    gzip(json, (error, body) => {
      if (error) return reject(error);
      res.writeHead(200, { ...headers, 'content-encoding': 'gzip', 'content-length': body.length });
      res.end(body);
      resolve();
    });
  });
}

/** An id in a path or a query: a positive integer, or a usage error that says which. */
function positiveId(text: string, what: string): number {
  const id = /^[1-9][0-9]*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id)) throw new TasksError('E_USAGE', `${what} is a positive integer, not ${quoted(text)}`);
  return id;
}

/** `GET /api/history?before=ID&limit=N&q=WORDS`: a page of the completed tasks, latest first (wire.ts, WebHistoryPage). */
function historyPage(feed: BoardFeed, query: URLSearchParams): WebHistoryPage {
  const before = query.get('before');
  const limitText = query.get('limit');
  const limit = limitText === null ? HISTORY_PAGE : positiveId(limitText, 'limit');
  const q = query.get('q') ?? '';
  return feed.history().page({
    before: before === null || before === '' ? undefined : positiveId(before, 'before'),
    limit: Math.min(limit, MAX_HISTORY_PAGE),
    query: q.trim() === '' ? undefined : q,
    branches: feed.historyBranches,
  });
}

/** A page following the board: the state and recent events now, then every change, with a ping to keep it open. */
function openStream({ feed, streams }: ServerState, req: IncomingMessage, res: ServerResponse): void {
  const headers = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', vary: 'accept-encoding' };
  let events: EventStream;
  if (takesGzip(req)) {
    // One gzip stream for the connection; each write is flushed (Z_SYNC_FLUSH), so the page gets a frame at once.
    res.writeHead(200, { ...headers, 'content-encoding': 'gzip' });
    const zipped = createGzip({ flush: zlibConstants.Z_SYNC_FLUSH });
    zipped.pipe(res);
    res.on('close', () => zipped.destroy());
    events = openEventStream(zipped, KEEP_EVENTS);
  } else {
    res.writeHead(200, headers);
    events = openEventStream(res, KEEP_EVENTS);
  }
  events.sendState(stateFrame(feed.stateJson()));
  events.sendEvents(feed.recentEvents());
  const ping = setInterval(() => events.ping(), 15_000);
  streams.set(res, events);
  req.on('close', () => {
    clearInterval(ping);
    streams.delete(res);
  });
}

/** A file of the built page, kept inside its folder. */
async function serveFile({ publicDir }: ServerState, res: ServerResponse, path: string): Promise<void> {
  const file = normalize(join(publicDir, path === '/' ? 'index.html' : path));
  if (!file.startsWith(publicDir.endsWith(sep) ? publicDir : publicDir + sep)) return sendError(res, 'E_NOT_FOUND', `no such page: ${path}`);
  let body: Buffer;
  try {
    body = await readFile(file);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT') || isErrnoException(error, 'EISDIR')) {
      if (path === '/') return sendError(res, 'E_INTERNAL', `the page was not built (${file} is missing); run 'npm run build'`);
      return sendError(res, 'E_NOT_FOUND', `no such page: ${path}`);
    }
    throw error;
  }
  res.writeHead(200, {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    // Assets carry a content hash in their name; the page itself is read again each time.
    'cache-control': path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
  });
  res.end(body);
}
