// The real agent CLIs, pinned, for the tests that run them end to end
// against a model API faked on 127.0.0.1: installed once per machine into
// node_modules/.cache (the first run downloads them; later runs reuse them).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The versions the tests drive; bump them on purpose. */
export const AGENT_CLIS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
} as const;

const CACHE = fileURLToPath(new URL('../../../node_modules/.cache/dotasks-agent-clis/', import.meta.url));

/** The bin of a pinned CLI, installed into the cache first if needed (npm, from the registry or its cache). */
export function installAgentCli(name: keyof typeof AGENT_CLIS): string {
  const { pkg, version, bin } = AGENT_CLIS[name];
  const dir = join(CACHE, `${name}-${version}`);
  const path = join(dir, 'node_modules', '.bin', bin);
  if (existsSync(path)) return path;
  const staging = `${dir}.tmp-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(staging, 'package.json'), '{"private": true}\n');
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `${pkg}@${version}`], { cwd: staging, stdio: 'pipe' });
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return path;
}

/** One request the fake model API answered. */
export interface ModelRequest {
  path: string;
  body: Record<string, unknown>;
  /** The whole body as text, to look for what reached the model. */
  text: string;
}

/** What the scripted model says next: text, or a call of a tool (in a namespace, for the Responses API). */
export type ModelTurn = { text: string } | { tool: string; namespace?: string; input: Record<string, unknown> };

export interface FakeModel {
  url: string;
  requests: ModelRequest[];
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (data += chunk));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });

/**
 * An Anthropic Messages API on 127.0.0.1: `script` chooses each answer from
 * the request (the conversation so far), streamed as server-sent events when
 * the client asks for a stream.
 */
export async function startFakeAnthropic(script: (request: ModelRequest) => ModelTurn): Promise<FakeModel> {
  const requests: ModelRequest[] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method !== 'POST' || !path.endsWith('/v1/messages')) {
        res.writeHead(path.endsWith('/count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
        res.end(path.endsWith('/count_tokens') ? '{"input_tokens": 100}' : '{}');
        return;
      }
      const body = JSON.parse(text) as Record<string, unknown>;
      const request = { path, body, text };
      requests.push(request);
      const turn = script(request);
      const id = `msg_${++calls}`;
      const block = 'text' in turn ? { type: 'text', text: turn.text } : { type: 'tool_use', id: `toolu_${calls}`, name: turn.tool, input: turn.input };
      const stopReason = 'text' in turn ? 'end_turn' : 'tool_use';
      const usage = { input_tokens: 100, output_tokens: 10 };
      const message = { id, type: 'message', role: 'assistant', model: body.model, content: [block], stop_reason: stopReason, stop_sequence: null, usage };
      if (body.stream !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(message));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null } });
      if (block.type === 'text') {
        send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
        send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } });
      } else {
        send('content_block_start', { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } });
        send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
      }
      send('content_block_stop', { type: 'content_block_stop', index: 0 });
      send('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } });
      send('message_stop', { type: 'message_stop' });
      res.end();
    })().catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * An OpenAI Responses API on 127.0.0.1 (what Codex speaks): `script`
 * chooses each answer, streamed as the events Codex reads.
 */
export async function startFakeResponses(script: (request: ModelRequest) => ModelTurn): Promise<FakeModel> {
  const requests: ModelRequest[] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method !== 'POST' || !path.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{}');
        return;
      }
      const body = JSON.parse(text) as Record<string, unknown>;
      const request = { path, body, text };
      requests.push(request);
      const turn = script(request);
      const n = ++calls;
      const item =
        'text' in turn
          ? { type: 'message', id: `msg_${n}`, role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [] }] }
          : {
              type: 'function_call',
              id: `fc_${n}`,
              call_id: `call_${n}`,
              name: turn.tool,
              ...(turn.namespace ? { namespace: turn.namespace } : {}),
              arguments: JSON.stringify(turn.input),
            };
      const usage = {
        input_tokens: 100,
        output_tokens: 10,
        total_tokens: 110,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      };
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      send('response.created', { response: { id: `resp_${n}` } });
      send('response.output_item.added', { output_index: 0, item });
      send('response.output_item.done', { output_index: 0, item });
      send('response.completed', { response: { id: `resp_${n}`, output: [item], usage } });
      res.end();
    })().catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The Gemini API on 127.0.0.1 (what Gemini CLI speaks with GOOGLE_GEMINI_BASE_URL):
 * `script` answers the requests that carry tools; the others (the model
 * router's classifier) get a simple routing answer.
 */
export async function startFakeGemini(script: (request: ModelRequest) => ModelTurn): Promise<FakeModel> {
  const requests: ModelRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const text = await readBody(req);
      const path = (req.url ?? '').split('?')[0]!;
      res.setHeader('content-type', 'application/json');
      if (path.endsWith(':countTokens')) {
        res.end('{"totalTokens": 100}');
        return;
      }
      if (!/:(stream)?[gG]enerateContent$/.test(path)) {
        res.writeHead(404);
        res.end('{}');
        return;
      }
      const body = JSON.parse(text) as Record<string, unknown>;
      const request = { path, body, text };
      requests.push(request);
      const turn: ModelTurn = Array.isArray(body.tools) ? script(request) : { text: '{"complexity_reasoning": "a small task", "complexity_score": 1}' };
      const part = 'text' in turn ? { text: turn.text } : { functionCall: { name: turn.tool, args: turn.input } };
      const chunk = {
        candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
      };
      if (path.endsWith(':streamGenerateContent')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
      } else res.end(JSON.stringify(chunk));
    })().catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
