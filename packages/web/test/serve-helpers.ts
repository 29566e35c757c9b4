import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { TaskStore } from '@dotasks/core';
import { chromium, type Browser } from 'playwright-core';
import { TASKS_BIN, cleanEnv } from '../../cli/test/helpers.js';

/** Debian's Chromium (.ci/run installs it); playwright-core drives it, no browser download. */
export const CHROMIUM = '/usr/bin/chromium';

/** Starts Chromium headless, or fails saying how to get it. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (as .ci/run does)`);
  return chromium.launch({ executablePath: CHROMIUM });
}

/**
 * The example board of `npm run demo` (scripts/demo.mjs), made through the
 * core: a compiler pipeline #1–#4 and an auth plan #5–#9, #5 done by alice,
 * #6 in progress by alice.
 */
export async function buildExampleBoard(board: string): Promise<void> {
  const store = new TaskStore(board);
  const add = (subject: string, blockedBy: number[] = [], metadata?: Record<string, unknown>) =>
    store.createTask({ subject, blockedBy, metadata }, { actor: 'demo' });
  const plan = { plan: 'refactor-auth' };
  await add('Parse AST');
  await add('Transform AST', [1]);
  await add('Emit output', [1]);
  await add('Run tests', [2, 3]);
  await add('Design the token schema', [], plan);
  await add('Refactor auth middleware', [5], plan);
  await add('Add the OAuth endpoint', [6], plan);
  await add('Write auth unit tests', [6, 7], plan);
  await add('Update the API docs', [7], plan);
  await store.completeTask(5, { actor: 'alice' });
  await store.startTask(6, { owner: 'alice', actor: 'alice', activeForm: 'moving the session check' });
}

/** A running `tasks serve` (the built bin, as a user starts it). */
export interface Served {
  url: string;
  origin: string;
  token: string;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

/** Spawns `tasks serve ...args` in `cwd` and waits for the URL it prints. */
export function serve(cwd: string, args: string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [TASKS_BIN, 'serve', ...args], { cwd, env: cleanEnv(env) });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tasks serve printed no URL in 20 s: ${err}`)), 20_000);
    child.on('exit', (code) => reject(new Error(`tasks serve exited with ${code}: ${err}`)));
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      // `--json` prints {url, host, port}; otherwise the line is the URL.
      const url = new URL(line.startsWith('{') ? (JSON.parse(line) as { url: string }).url : line.trim());
      resolve({
        url: url.href,
        origin: url.origin,
        token: url.searchParams.get('token') ?? '',
        child,
        stderr: () => err,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

/** One plain HTTP request with exactly these headers (fetch would not let a test set Host). */
export function httpRequest(
  origin: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: unknown },
): Promise<{ status: number; body: { error?: { code: string; message: string } } & Record<string, unknown> }> {
  const url = new URL(options.path, origin);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method,
        path: url.pathname + url.search,
        headers: { 'content-type': 'application/json', ...options.headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Sends `text` as it is over a plain socket to 127.0.0.1:`port` (two Host
 * headers, a Host no client library would send) and resolves with the
 * status and body the server answered before it closed the connection.
 */
export function rawRequest(port: number, text: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (answer += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1] ?? 0);
      resolve({ status, body: answer.slice(answer.indexOf('\r\n\r\n') + 4) });
    });
    socket.end(text);
  });
}

/** A reader of the board's event stream that keeps every state it is sent (as JSON text). */
export interface StreamReader {
  states: string[];
  close(): void;
}

/** Opens `/api/events` with the token and reads it as the page does, each `state` event kept whole. */
export function readStream(origin: string, token: string): Promise<StreamReader> {
  const url = new URL(`/api/events?token=${encodeURIComponent(token)}`, origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`the event stream answered ${res.statusCode}`));
      const states: string[] = [];
      let buffered = '';
      res.setEncoding('utf8');
      res.on('error', () => undefined); // close() ends the stream this way
      res.on('data', (d: string) => {
        buffered += d;
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (frame.startsWith('event: state\ndata: ')) states.push(frame.slice('event: state\ndata: '.length));
        }
      });
      resolve({ states, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}
