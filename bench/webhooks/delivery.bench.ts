/**
 * Webhook delivery to a local receiver (node:http on loopback, in this process): latency from
 * `dispatch` to the receiver's handler at a steady 500 events/s, and throughput of a burst of
 * 20,000 events (queue large enough to hold it), at 1 and 4 deliveries in flight. Baseline: the
 * same POSTs sent straight with node:http on a keep-alive agent (no queue, no signing, no retry
 * bookkeeping), 4 in flight.
 */
import { createServer, Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { begin, record, type Row } from '../lib.js';

const BURST = 20_000;
let received = 0;
const latencies: number[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received++;
    const t = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { t: number } }).data.t;
    latencies.push(performance.now() - t);
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
const endpoint = { id: 'wh_bench', url, events: ['arb' as const], minRoi: 0, secret: 'whsec_bench', createdAt: new Date().toISOString() };
const payload = { opportunity_id: 'arb_x', close_reason: 'book_moved', record: { group_id: 1, title: 'Bench group', duration_ms: 4000, peak_roi: 1.2 } };

const until = async (n: number): Promise<void> => {
  while (received < n) await new Promise((r) => setTimeout(r, 1));
};
const q = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.floor(p * (xs.length - 1))]!;

async function burst(concurrency: number): Promise<{ perSec: number; p50: number; p99: number }> {
  const d = new WebhookDispatcher({ concurrency, queueSize: BURST });
  d.setEndpoints([endpoint]);
  received = 0;
  latencies.length = 0;
  const t0 = performance.now();
  for (let i = 0; i < BURST; i++) d.dispatch({ kind: 'arb', type: 'arb_expired', roi: 1, platforms: [], data: { ...payload, t: performance.now() } });
  await until(BURST);
  const secs = (performance.now() - t0) / 1000;
  d.close();
  return { perSec: BURST / secs, p50: q(latencies, 0.5), p99: q(latencies, 0.99) };
}

async function steady(rate: number, seconds: number): Promise<{ perSec: number; p50: number; p99: number }> {
  const d = new WebhookDispatcher({ concurrency: 4 });
  d.setEndpoints([endpoint]);
  received = 0;
  latencies.length = 0;
  const n = rate * seconds;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    d.dispatch({ kind: 'arb', type: 'arb_expired', roi: 1, platforms: [], data: { ...payload, t: performance.now() } });
    const due = t0 + ((i + 1) * 1000) / rate;
    while (performance.now() < due) await new Promise((r) => setTimeout(r, 1));
  }
  await until(n);
  d.close();
  return { perSec: n / ((performance.now() - t0) / 1000), p50: q(latencies, 0.5), p99: q(latencies, 0.99) };
}

async function bare(concurrency: number): Promise<{ perSec: number; p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true });
  received = 0;
  latencies.length = 0;
  let next = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < BURST) {
      next++;
      const body = JSON.stringify({ data: { ...payload, t: performance.now() } });
      await new Promise<void>((resolve, reject) => {
        const req = request(
          url,
          { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            res.resume();
            res.on('end', resolve);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const secs = (performance.now() - t0) / 1000;
  agent.destroy();
  return { perSec: BURST / secs, p50: q(latencies, 0.5), p99: q(latencies, 0.99) };
}

begin(
  'Webhook delivery',
  `Signed JSON POSTs to a local node:http receiver on loopback, in the same process (its handler's time is included). Burst: ${BURST.toLocaleString('en-US')} events dispatched at once; latency is from dispatch to the receiver's handler, so in a burst it includes the wait in the queue. Steady: 500 events/s for 4 s.`,
);
const base = await bare(4);
const b1 = await burst(1);
const b4 = await burst(4);
const s = await steady(500, 4);
server.close();
const rows: Row[] = [
  { label: 'bare node:http POSTs, 4 in flight', baseline: true, perSec: base.perSec, p50: base.p50, p99: base.p99 },
  { label: 'dispatcher burst, 1 in flight', perSec: b1.perSec, p50: b1.p50, p99: b1.p99 },
  { label: 'dispatcher burst, 4 in flight', perSec: b4.perSec, p50: b4.p50, p99: b4.p99 },
  { label: 'dispatcher steady 500/s, 4 in flight (paced: no ratio)', group: 'steady', perSec: s.perSec, p50: s.p50, p99: s.p99 },
];
record(
  {
    title: 'Webhook delivery latency and throughput to a local receiver',
    columns: [
      { key: 'perSec', title: 'deliveries/s', digits: 0 },
      { key: 'p50', title: 'p50 ms', digits: 2 },
      { key: 'p99', title: 'p99 ms', digits: 2 },
    ],
    ratio: { metric: 'perSec', title: 'deliveries/s vs bare POSTs' },
    interpretation: `One endpoint takes ${Math.round(b4.perSec).toLocaleString('en-US')} signed deliveries/s with 4 in flight (${Math.round(b1.perSec).toLocaleString('en-US')} with 1); at a steady 500 events/s a delivery reaches the receiver in ${s.p50.toFixed(2)} ms at the median and ${s.p99.toFixed(2)} ms at p99.`,
  },
  rows,
);
