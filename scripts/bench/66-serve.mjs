// `tasks serve` on a board's history: boards of 1,000 and 100,000 tasks, 90%
// completed (the rest pending, chains and epics among them), side by side
// in one run. For each: the time from spawning `tasks serve` to its URL
// (listening), to the first /api/state answered, and to the first board
// drawn in Chromium (a card of the Ready lane on the page); the first
// state's bytes (as sent, and decoded); the server's CPU (user and system,
// /proc/PID/stat) until that board, which a busy machine moves less than
// the times, and while nothing changes over a few seconds; and, beside them,
// the core's exact snapshot of each board, once in a fresh process, which
// every read of the server starts from. Every board has its
// board index written by a first, untimed `tasks list`, as a board in use
// has. Targets: the first board within 2 s at 100k, the first state at most
// 500 KB as sent.
//
// BENCH_SERVE=N sets the large board's size (default 100,000); BENCH_RUNS
// (default 3) the starts per board, interleaved; BENCH_IDLE_MS (default
// 4000) the idle window. Chromium: /usr/bin/chromium (skipped, and said, if
// missing).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { TASKS_BIN, makeHistoryBoard, median, verdict } from '../lib/bench-util.mjs';

const LARGE = Number(process.env.BENCH_SERVE ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 4000);
const CHROMIUM = '/usr/bin/chromium';
const env = { ...process.env, NO_COLOR: '1', TASKS_OWNER: 'bench' };
delete env.NODE_EXTRA_CA_CERTS; // read at every Node start, by nothing of ours (docs/decisions.md, "The suite's time")
const TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

const loadAtStart = loadavg()[0];
const started = performance.now();
const boards = [1000, LARGE].map((n) => ({ n, ...makeHistoryBoard(n, Math.round(n / 10), { parents: true }) }));
for (const b of boards) spawnSync(process.execPath, [TASKS_BIN, 'list', '--dir', b.dir], { env, stdio: 'ignore' });
const built = performance.now() - started;

/** Spawns `tasks serve` and resolves when it printed its URL, with the ms that took. */
function startServe(dir) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [TASKS_BIN, 'serve', '--dir', dir, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`tasks serve exited ${code}: ${err}`)));
    child.stdout.on('data', (d) => {
      out += d;
      if (!out.includes('\n')) return;
      const { url } = JSON.parse(out.split('\n')[0]);
      resolve({ t0, child, url: new URL(url), listening: performance.now() - t0 });
    });
  });
}

async function stopServe(s) {
  s.child.removeAllListeners('exit');
  const exited = new Promise((resolve) => s.child.on('exit', resolve));
  s.child.kill('SIGTERM');
  await exited;
}

/** GET /api/state as a browser asks for it (gzip accepted): its bytes as sent and decoded. */
function getState(url) {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/api/state',
        headers: { 'x-tasks-token': url.searchParams.get('token'), 'accept-encoding': 'gzip' },
      },
      (res) => {
        const chunks = [];
        res.on('data', (d) => chunks.push(d));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`/api/state answered ${res.statusCode}`));
          const sent = Buffer.concat(chunks);
          const body = res.headers['content-encoding'] === 'gzip' ? gunzipSync(sent) : sent;
          JSON.parse(body.toString('utf8'));
          resolve({ sent: sent.length, decoded: body.length });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** User and system CPU of a process so far, ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime (fields 14 and 15 of the line)
}

let browser;
if (existsSync(CHROMIUM)) {
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM });
}

const rows = boards.map(() => ({ listening: [], state: [], board: [], cpu: [], sent: 0, decoded: 0, idle: [] }));
for (let run = 0; run < RUNS; run++) {
  for (const [i, b] of boards.entries()) {
    const row = rows[i];
    // The state over plain HTTP, as the first thing asked of a fresh server.
    let s = await startServe(b.dir);
    row.listening.push(s.listening);
    const got = await getState(s.url);
    row.state.push(performance.now() - s.t0);
    row.sent = got.sent;
    row.decoded = got.decoded;
    await stopServe(s);
    if (!browser) continue;
    // The page, opened as soon as the URL is printed; then the server left idle with the page following it.
    s = await startServe(b.dir);
    const page = await browser.newPage({ viewport: { width: 1440, height: 860 } });
    await page.goto(s.url.href);
    await page.waitForSelector('[data-column="ready"] [data-task-id]', { timeout: 60_000 });
    row.board.push(performance.now() - s.t0);
    const before = cpuMs(s.child.pid);
    row.cpu.push(before);
    const from = performance.now();
    await new Promise((done) => setTimeout(done, IDLE_MS)); // the window measured, not a wait for anything
    row.idle.push((cpuMs(s.child.pid) - before) / ((performance.now() - from) / 1000));
    await page.close();
    await stopServe(s);
  }
}
await browser?.close();
// Beside it, what the server's read starts from: the core's exact pass over the board, once, in a fresh process as the server makes it.
const SNAPSHOT = `import(${JSON.stringify(new URL('../../packages/core/dist/internal.js', import.meta.url).href)}).then(({ loadBoardSnapshot }) => { const t0 = performance.now(); loadBoardSnapshot(process.argv[1]); console.log(performance.now() - t0); })`;
for (const [i, b] of boards.entries()) {
  rows[i].snapshot = [];
  for (let run = 0; run < RUNS; run++) rows[i].snapshot.push(Number(spawnSync(process.execPath, ['-e', SNAPSHOT, b.dir], { env, encoding: 'utf8' }).stdout));
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const ms = (v) => (v.length ? `${median(v).toFixed(0)} ms` : 'n/a');
console.log(
  `boards of 1,000 and ${LARGE.toLocaleString('en')} tasks, 90% completed (built in ${(built / 1000).toFixed(1)} s); medians of ${RUNS} starts; load average ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end`,
);
const [small, large] = rows;
const line = (name, a, b, ratio) => console.log(`${name.padEnd(26)} 1k ${a.padStart(10)}   ${LARGE / 1000}k ${b.padStart(10)}   = ${ratio.toFixed(2)}x`);
line('listening', ms(small.listening), ms(large.listening), median(large.listening) / median(small.listening));
line('first /api/state answered', ms(small.state), ms(large.state), median(large.state) / median(small.state));
if (browser) line('first board drawn', ms(small.board), ms(large.board), median(large.board) / median(small.board));
else console.log(`first board drawn: skipped (${CHROMIUM} is missing)`);
if (browser) line("server's CPU to that board", ms(small.cpu), ms(large.cpu), median(large.cpu) / median(small.cpu));
line('core snapshot, one process', ms(small.snapshot), ms(large.snapshot), median(large.snapshot) / median(small.snapshot));
line('first state, as sent', kb(small.sent), kb(large.sent), large.sent / small.sent);
line('first state, decoded', kb(small.decoded), kb(large.decoded), large.decoded / small.decoded);
if (browser)
  console.log(
    `idle CPU with a page open, over ${IDLE_MS} ms: 1k ${median(small.idle).toFixed(1)} ms/s, ${LARGE / 1000}k ${median(large.idle).toFixed(1)} ms/s`,
  );

const firstBoard = browser ? median(large.board) : median(large.state);
const checks = [
  [`first board at ${LARGE / 1000}k ${firstBoard.toFixed(0)} ms (target <= 2000 ms)`, firstBoard <= 2000],
  [`first state at ${LARGE / 1000}k ${kb(large.sent)} as sent (target <= 500 KB)`, large.sent <= 500 * 1024],
];
if (browser) checks.push([`idle CPU at ${LARGE / 1000}k ${median(large.idle).toFixed(1)} ms/s (target <= 20 ms/s)`, median(large.idle) <= 20]);
for (const [what, ok] of checks) console.log(`${what}: ${verdict(ok)}`);
for (const b of boards) rmSync(b.root, { recursive: true, force: true });
process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
