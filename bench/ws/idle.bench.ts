/**
 * Idle WebSocket connections (issue 7 target: 10,000 idle subscribed connections in under 1 GiB
 * RSS). A server child (bench/ws/server.ts) runs (a) the real WsHub over 10,000 markets at a low
 * tick rate, or (b) bare uWebSockets.js with the same topics (the baseline); this process opens
 * CLIENTS connections (ws, no compression), each subscribing to SUBS markets, then reads the
 * server's VmRSS from /proc before and after.
 *
 * File descriptors: each process needs one per connection. The server is started through
 * `sh -c 'ulimit -n <hard limit>; exec node …'`; this process must itself run with a soft limit
 * above CLIENTS, e.g. `sh -c 'ulimit -n $(ulimit -Hn); exec node --expose-gc dist/bench/ws/idle.bench.js'`
 * (it checks and stops short, reporting how many it reached, when a connection fails).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { begin, mib, record, type Row } from '../lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const CLIENTS = Number(process.env['CLIENTS'] ?? 10_000);
const SUBS = Number(process.env['SUBS'] ?? 10);
const MARKETS = Number(process.env['MARKETS'] ?? 10_000);
const RATE = Number(process.env['RATE'] ?? 10);
const SETTLE_MS = Number(process.env['SETTLE_MS'] ?? 3000);
const BATCH = 250;
const id = (i: number): string => `KXBENCH-26NOV22-M${String(i).padStart(6, '0')}`;

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const fdLimit = (): number => Number(/Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? 0);

interface Result {
  opened: number;
  subscribed: number;
  rssBefore: number;
  rssAfter: number;
  failure?: string | undefined;
  connectSec: number;
}

async function run(mode: 'hub' | 'bare'): Promise<Result> {
  const cmd = `ulimit -n $(ulimit -Hn); exec "${process.execPath}" "${join(here, 'server.js')}" ${mode} ${MARKETS} ${RATE}`;
  const child = spawn('sh', ['-c', cmd], { stdio: ['ignore', 'pipe', 'inherit'] });
  const kill = (): void => void child.kill('SIGKILL');
  process.once('exit', kill);
  const socks: WebSocket[] = [];
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (c) => reject(new Error(`server exited ${c}`)));
    });
    const { port, key } = JSON.parse(line) as { port: number; key: string };
    const pid = child.pid!; // sh exec'd node: same pid
    await new Promise((r) => setTimeout(r, 1000));
    const rssBefore = rssOf(pid);
    let subscribed = 0;
    let failure: string | undefined;
    const t0 = performance.now();
    // Opens connections in batches: each must open and have its subscription acknowledged.
    const one = (c: number): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v2/ws`, { headers: { 'x-api-key': key }, perMessageDeflate: false });
        socks.push(ws);
        let acked = false;
        ws.on('message', (d: Buffer) => {
          if (!acked && d.toString('latin1').includes('"subscribed"')) {
            acked = true;
            subscribed++;
            resolve();
          }
        });
        ws.once('open', () => {
          const ids = Array.from({ length: SUBS }, (_, k) => id((c * SUBS + k) % MARKETS));
          ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: ids }));
        });
        ws.once('error', (e) => reject(e));
        ws.once('close', (code) => {
          if (!acked) reject(new Error(`closed ${code} before subscribed`));
        });
      });
    for (let c = 0; c < CLIENTS && !failure; c += BATCH) {
      const rs = await Promise.allSettled(Array.from({ length: Math.min(BATCH, CLIENTS - c) }, (_, k) => one(c + k)));
      const bad = rs.find((r) => r.status === 'rejected');
      if (bad) failure = String((bad as PromiseRejectedResult).reason);
    }
    const connectSec = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const rssAfter = rssOf(pid);
    const opened = socks.filter((s) => s.readyState === WebSocket.OPEN).length;
    return { opened, subscribed, rssBefore, rssAfter, failure, connectSec };
  } finally {
    for (const s of socks) s.terminate();
    kill();
    await new Promise((r) => setTimeout(r, 500));
  }
}

begin(
  'Idle WebSocket connections',
  `Server RSS with ${CLIENTS.toLocaleString('en-US')} idle connections each subscribed to ${SUBS} markets (of ${MARKETS.toLocaleString('en-US')}, engine at ${RATE} ticks/s), real WsHub against bare uWebSockets.js. Server in a child process; clients (ws, no compression) in this one.`,
);
const limit = fdLimit();
if (limit < CLIENTS + 100) console.error(`warning: open-file limit ${limit} < ${CLIENTS + 100}: run through sh -c 'ulimit -n $(ulimit -Hn); exec node …'`);
const bare = await run('bare');
const hub = await run('hub');
const perConn = (r: Result): number => (r.rssAfter - r.rssBefore) / Math.max(1, r.subscribed);
const rows: Row[] = [bare, hub].map((r, i) => ({
  label: i === 0 ? 'bare uWebSockets.js' : 'WsHub',
  baseline: i === 0,
  conns: r.subscribed,
  before: mib(r.rssBefore),
  after: mib(r.rssAfter),
  perConn: Math.round(perConn(r)),
  connectSec: r.connectSec,
}));
const full = hub.subscribed >= CLIENTS;
const met = full && hub.rssAfter < 1024 ** 3;
const failures = [bare, hub].flatMap((r, i) => (r.failure ? [`${i === 0 ? 'bare' : 'hub'}: stopped at ${r.subscribed} connections: ${r.failure}`] : []));
const ulimitOut = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
record(
  {
    title: `${CLIENTS.toLocaleString('en-US')} idle connections × ${SUBS} subscriptions`,
    columns: [
      { key: 'conns', title: 'subscribed connections' },
      { key: 'before', title: 'RSS before MiB', digits: 1 },
      { key: 'after', title: 'RSS after MiB', digits: 1 },
      { key: 'perConn', title: 'bytes / connection' },
      { key: 'connectSec', title: 'connect s', digits: 1 },
    ],
    ratio: { metric: 'perConn', title: 'vs bare (bytes/conn)' },
    target: { text: `${CLIENTS.toLocaleString('en-US')} idle subscribed connections in under 1 GiB server RSS`, met },
    interpretation: full
      ? `The WsHub holds ${hub.subscribed.toLocaleString('en-US')} subscribed connections in ${mib(hub.rssAfter)} MiB RSS (${Math.round(perConn(hub)).toLocaleString('en-US')} bytes per connection over its idle state, against ${Math.round(perConn(bare)).toLocaleString('en-US')} for bare uWebSockets.js).`
      : `Only ${hub.subscribed.toLocaleString('en-US')} of ${CLIENTS.toLocaleString('en-US')} connections could be subscribed on this machine; see notes.`,
    notes: [
      `Open-file limits: this process ${limit}, hard ${ulimitOut}; ${BATCH} connections opened at a time; RSS read ${SETTLE_MS / 1000} s after the last subscription.`,
      'RSS before is the idle server with its markets loaded; the per-connection figure is (after − before) / connections, so it includes the subscriptions and per-socket buffers.',
      ...failures,
    ],
  },
  rows,
);
