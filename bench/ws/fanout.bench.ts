/**
 * WebSocket fan-out (issue 7 target): C clients × S subscriptions each, the engine at R ticks/s,
 * against (a) the real WsHub and (b) a bare uWebSockets.js publish loop at the same rate and
 * topics (the baseline), each server in its own process, this process the load generator. Reports
 * delivered messages/s, missed updates (per-topic seq gaps), and latency from the server applying
 * the book change (the message's `ts`) to the client receiving it.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { quantile, WsLoad } from '../../src/capacity/ws-load.js';
import { begin, record, type Row } from '../lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const CLIENTS = Number(process.env['CLIENTS'] ?? 1000);
const SUBS = Number(process.env['SUBS'] ?? 100);
const MARKETS = Number(process.env['MARKETS'] ?? 10_000);
const RATE = Number(process.env['RATE'] ?? 10_000);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);
const id = (i: number): string => `KXBENCH-26NOV22-M${String(i).padStart(6, '0')}`;

interface Result {
  delivered: number;
  perSec: number;
  p50: number;
  p99: number;
  max: number;
  gaps: number;
  serverRssMiB: number;
}

async function run(mode: 'hub' | 'bare'): Promise<Result> {
  const child = spawn(process.execPath, [join(here, 'server.js'), mode, String(MARKETS), String(RATE)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
  const { port, key } = JSON.parse(line) as { port: number; key: string };
  const load = new WsLoad(`ws://127.0.0.1:${port}/api/v2/ws`, key);
  await load.grow(CLIENTS, (c) => Array.from({ length: SUBS }, (_, k) => id((c * 10 + k) % MARKETS)));
  if (load.failed > 0) throw new Error(`${load.failed} clients failed to subscribe: ${load.lastFailure}`);
  await new Promise((r) => setTimeout(r, 2000));
  load.reset();
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const secs = (Date.now() - t0) / 1000;
  const { delivered, lost, latencies } = load;
  const rss = Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
  load.close();
  child.kill('SIGKILL');
  const p99 = quantile(latencies, 0.99); // sorts
  return {
    delivered,
    perSec: delivered / secs,
    p50: quantile(latencies, 0.5),
    p99,
    max: latencies[latencies.length - 1] ?? NaN,
    gaps: lost,
    serverRssMiB: Math.round(rss),
  };
}

begin(
  'WebSocket fan-out',
  `${CLIENTS} clients × ${SUBS} subscriptions over ${MARKETS} markets, ${RATE} ticks/s, ${SECONDS} s measured; load generator (crossbook's raw-socket WsLoad, src/capacity/ws-load.ts) in this process, server in a child process.`,
);
const bare = await run('bare');
const hub = await run('hub');
const expected = (RATE * CLIENTS * SUBS) / MARKETS;
const rows: Row[] = [
  { label: 'bare uWS publish loop', baseline: true, perSec: bare.perSec, p50: bare.p50, p99: bare.p99, max: bare.max, gaps: bare.gaps, rss: bare.serverRssMiB },
  { label: 'crossbook WsHub (state → price_update)', perSec: hub.perSec, p50: hub.p50, p99: hub.p99, max: hub.max, gaps: hub.gaps, rss: hub.serverRssMiB },
];
record(
  {
    title: `Fan-out at ${RATE} ticks/s to ${CLIENTS} clients`,
    columns: [
      { key: 'perSec', title: 'delivered msgs/s', digits: 0 },
      { key: 'p50', title: 'p50 ms', digits: 0 },
      { key: 'p99', title: 'p99 ms', digits: 0 },
      { key: 'max', title: 'max ms', digits: 0 },
      { key: 'gaps', title: 'missed (seq gaps)', digits: 0 },
      { key: 'rss', title: 'server RSS MiB', digits: 0 },
    ],
    ratio: { metric: 'perSec', title: 'msgs/s vs bare' },
    target: { text: 'every update delivered (no seq gaps), p99 < 10 ms', met: hub.gaps === 0 && hub.p99 < 10 && hub.perSec > expected * 0.95 },
    interpretation: `Expected ${Math.round(expected).toLocaleString('en-US')} msgs/s if every update reaches every subscriber; the hub delivered ${Math.round(hub.perSec).toLocaleString('en-US')}/s with p99 ${hub.p99} ms (bare uWS: ${Math.round(bare.perSec).toLocaleString('en-US')}/s, p99 ${bare.p99} ms). Client and server share the 2 cores, so the load generator bounds both.`,
  },
  rows,
);
