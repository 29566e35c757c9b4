import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { TaskStore, type BatchItem } from '@dotasks/core';
import { tempBoard } from '../../cli/test/helpers.js';
import { readStream, serve, type Served } from './serve-helpers.js';

// Event-stream clients that stop reading, on a big board: what the server
// holds for them stays bounded however often the board changes.
// Measured on the real `tasks serve` process, by its resident size.

const TASKS = 3000;
const STALLED = 40;
const CHANGES = 8;

let board: ReturnType<typeof tempBoard>;
let server: Served;
const stalled: Socket[] = [];

/** The server's resident memory in MB, as the kernel counts it. */
function residentMb(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!line) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(line[1]) / 1024;
}

/** Asks for the event stream and never reads it: the socket's buffers fill and the server's writes back up. */
function stallClient(port: number, token: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', reject);
    // Paused with no reader: once a first chunk is in, Node stops reading the socket (its buffer is full at 16 KB).
    socket.once('readable', () => resolve(socket));
    socket.write(`GET /api/events?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  });
}

beforeAll(async () => {
  board = tempBoard();
  const store = new TaskStore(board.board);
  const items: BatchItem[] = [];
  for (let id = 1; id <= TASKS; id++)
    items.push({ subject: `Task number ${id} of the big board`, description: `details of ${id}: ${'x'.repeat(200)}`, blockedBy: id > 10 ? [id - 10] : [] });
  await store.batchWrite(items, { actor: 'bulk' });
  server = await serve(board.root, ['--owner', 'ann']);
}, 120_000);

afterAll(async () => {
  for (const socket of stalled) socket.destroy();
  await server?.stop();
  board?.cleanup();
});

describe('event-stream clients that stop reading', () => {
  it('cost the server a bounded amount of memory, whatever the number of changes, and get the latest state when they read', async () => {
    const port = Number(new URL(server.origin).port);
    const pid = server.child.pid!;
    for (let i = 0; i < STALLED; i++) stalled.push(await stallClient(port, server.token));
    // A client that reads: each change has reached every client once this one has it.
    const reader = await readStream(server.origin, server.token);
    await expect.poll(() => reader.states.length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(0);
    const size = reader.states[0].length;
    const before = residentMb(pid);

    const store = new TaskStore(board.board);
    for (let change = 1; change <= CHANGES; change++) {
      const subject = `Changed ${change} times`;
      await store.updateTask(TASKS, { subject }, { actor: 'ann' });
      await expect.poll(() => reader.states.at(-1)?.includes(subject), { timeout: 30_000, interval: 20 }).toBe(true);
    }
    const after = residentMb(pid);
    reader.close();

    // Queuing every state for every stalled client would take STALLED × CHANGES × the state's size more.
    const everyState = (STALLED * CHANGES * size) / 2 ** 20;
    const grown = after - before;
    const report = `${STALLED} stalled clients, ${CHANGES} changes of a ${(size / 2 ** 20).toFixed(2)} MB state: ${before.toFixed(0)} -> ${after.toFixed(0)} MB resident (queuing all would add ${everyState.toFixed(0)} MB)`;
    console.log(report);
    expect(grown, report).toBeLessThan(everyState / 4);

    // One of them reads again: it gets the board as it is now, not every state on the way (only those the
    // kernel's socket buffers had taken, about 4 MB, before it stopped).
    let seen = '';
    stalled[0].setEncoding('utf8');
    stalled[0].on('data', (d: string) => (seen += d));
    await expect.poll(() => seen.includes(`Changed ${CHANGES} times`), { timeout: 30_000, interval: 20 }).toBe(true);
    const states = seen.split('event: state\n').length - 1;
    console.log(`the client that read again was sent ${states} of ${CHANGES + 1} states`);
    expect(states, 'states it was sent').toBeLessThan(CHANGES + 1);
  });
});
