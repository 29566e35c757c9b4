import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { hostname, networkInterfaces } from 'node:os';
import { tasks, tempBoard } from '../../cli/test/helpers.js';
import { rawRequest, serve, type Served } from './serve-helpers.js';

// Which Host headers `tasks serve` answers to: the
// names it serves, on its port, and nothing else, so a site whose DNS name is
// rebound to one of this machine's addresses gets neither the page nor the board.

let board: ReturnType<typeof tempBoard>;

beforeAll(() => {
  board = tempBoard();
  expect(tasks(board.root, ['create', 'Parse AST']).code).toBe(0);
});

afterAll(() => board?.cleanup());

/** The status and body of one GET to 127.0.0.1 with this Host header (the body of a stream that opens is not read). */
function get(server: Served, host: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(path.replace('TOKEN', server.token), server.origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: url.port, path: url.pathname + url.search, headers: { host } }, (res) => {
      if (res.headers['content-type']?.startsWith('text/event-stream')) {
        req.destroy(); // it has answered; the stream would go on
        return resolve({ status: res.statusCode ?? 0, body: '' });
      }
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (error) => (req.destroyed ? undefined : reject(error)));
    req.end();
  });
}

const PATHS = ['/', '/api/state?token=TOKEN', '/api/events?token=TOKEN'];

/** The status each of the page, the API and the event stream answers with this Host. */
async function statuses(server: Served, host: string): Promise<number[]> {
  const answers = await Promise.all(PATHS.map((path) => get(server, host, path)));
  return answers.map((a) => a.status);
}

/** The machine's own addresses, as a Host header spells them (what `--host 0.0.0.0` listens on besides loopback). */
function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => !a.internal && !a.address.startsWith('fe80:'))
    .map((a) => (a.family === 'IPv6' ? `[${a.address}]` : a.address));
}

describe('tasks serve --host 0.0.0.0', () => {
  let server: Served;
  let port: number;
  beforeAll(async () => {
    server = await serve(board.root, ['--host', '0.0.0.0', '--allow-host', 'Board.Example.Lan']);
    port = Number(new URL(server.origin).port);
  });
  afterAll(() => server?.stop());

  it('refuses a rebound name on its port, for the page, the API and the event stream, with one line', async () => {
    expect(await statuses(server, `evil.example:${port}`)).toEqual([403, 403, 403]);
    const answer = await get(server, `evil.example:${port}`, '/api/state?token=TOKEN');
    const message = (JSON.parse(answer.body) as { error: { message: string } }).error.message;
    expect(message).toBe(
      `refused: this server answers only to the names it serves, not to Host 'evil.example:${port}' (tasks serve prints them; --allow-host NAME adds one)`,
    );
    // Nor the machine's name under another one, another port, or no port.
    for (const host of [
      `${hostname()}.evil.example:${port}`,
      `board.example.lan.evil.example:${port}`,
      `127.0.0.1:${port + 1}`,
      '127.0.0.1',
      `127.0.0.1:${port}@evil.example`,
    ])
      expect(await statuses(server, host), host).toEqual([403, 403, 403]);
  });

  it("answers to the machine's names and addresses, loopback's, and what --allow-host adds, on its port", async () => {
    const own = [hostname(), ...ownAddresses()];
    expect(own.length, 'this machine has a name').toBeGreaterThan(0);
    for (const name of ['127.0.0.1', 'localhost', '[::1]', ...own, 'board.example.lan', 'BOARD.example.lan'])
      expect(await statuses(server, `${name}:${port}`), name).toEqual([200, 200, 200]);
  });

  it('says on stderr which names it answers to', async () => {
    await expect.poll(() => server.stderr()).toContain('It answers to Host ');
    const warning =
      server
        .stderr()
        .split('\n')
        .find((line) => line.includes('warning:')) ?? '';
    expect(warning).toContain('warning: listening on 0.0.0.0, not only on this machine');
    for (const name of ['localhost', '127.0.0.1', '[::1]', hostname().toLowerCase(), 'board.example.lan', ...ownAddresses()]) expect(warning).toContain(name);
    expect(warning).toContain(`on port ${port} (--allow-host NAME adds a name); any other Host is refused`);
  });

  it('answers a request with two Host headers 400, whichever comes first', async () => {
    const twice = (first: string, second: string) =>
      rawRequest(port, `GET /api/state?token=${server.token} HTTP/1.1\r\nHost: ${first}\r\nHost: ${second}\r\nConnection: close\r\n\r\n`);
    for (const [first, second] of [
      [`127.0.0.1:${port}`, `evil.example:${port}`],
      [`evil.example:${port}`, `127.0.0.1:${port}`],
      [`127.0.0.1:${port}`, `127.0.0.1:${port}`],
    ]) {
      const answer = await twice(first, second);
      expect(answer.status, `${first}, then ${second}`).toBe(400);
      expect(answer.body).toContain('exactly one Host header (this one had 2)');
    }
    const once = await rawRequest(port, `GET /api/state?token=${server.token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    expect(once.status).toBe(200);
  });
});

describe('tasks serve on loopback', () => {
  it("answers to loopback's names only", async () => {
    const server = await serve(board.root, ['--allow-host', 'tasks.localhost']);
    try {
      const port = Number(new URL(server.origin).port);
      for (const name of ['127.0.0.1', 'localhost', '[::1]', 'tasks.localhost'])
        expect(await statuses(server, `${name}:${port}`), name).toEqual([200, 200, 200]);
      for (const name of ['evil.example', ...ownAddresses()]) expect(await statuses(server, `${name}:${port}`), name).toEqual([403, 403, 403]);
      expect(server.stderr()).not.toContain('warning');
    } finally {
      await server.stop();
    }
  });

  it('--allow-host takes a name, without a port or a pattern', () => {
    for (const [value, reason] of [
      ['board.lan:8080', "--allow-host takes a name without a port (the server's own port is implied), got 'board.lan:8080'"],
      ['*.lan', "--allow-host takes one host name or address (like board.example.lan), got '*.lan'"],
      ['http://board.lan/', "--allow-host takes one host name or address (like board.example.lan), got 'http://board.lan/'"],
    ]) {
      const r = tasks(board.root, ['serve', '--allow-host', value]);
      expect(r.stderr).toBe(`tasks: ${reason}\n`);
      expect(r.code).toBe(2);
    }
  });
});
