// The NATS hop, measured on the service as it runs: `crossbook serve` (single process) against
// nats-server + `serve --role core` + `serve --role edge` (needs dist/: npx tsc -p tsconfig.json),
// in alternating pairs, at the default simulator size and at CROSSBOOK__sim__scale=20.
//
// For each run: a WebSocket client (on the single process, or on the edge) subscribes to the
// prices of SUBSCRIBE (500) venue_a markets for MEASURE_MS; the latency of a streamed price_update is its
// arrival at the client minus its recv_ts (when the process that owns the feed received the venue
// frame; the same clock, one machine). For the cluster also: the edge's bootstrap time (spawn ->
// /status answering with cluster.link "following"), the size of the core's snapshot in the object
// store, and each process's CPU over the window (from /proc).
//
//   npx tsx bench/cluster/hop.ts   (env PAIRS=2 MEASURE_MS=15000 WARM_MS=10000 SUBSCRIBE=500 SCALES=1,20 KINDS=single,cluster)
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { openLink } from '../../src/cluster/link.js';
import { loadConfig } from '../../src/config/load.js';

const BIN = new URL('../../bin/crossbook.js', import.meta.url).pathname;
const NATS = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find((p) => existsSync(p));
const PAIRS = Number(process.env['PAIRS'] ?? 2);
const MEASURE_MS = Number(process.env['MEASURE_MS'] ?? 15_000);
const WARM_MS = Number(process.env['WARM_MS'] ?? 10_000);
/** Markets subscribed (the pro plan's 500 per connection at most). */
const SUBSCRIBE = Number(process.env['SUBSCRIBE'] ?? 500);
const KINDS = (process.env['KINDS'] ?? 'single,cluster').split(',');
const SCALES = (process.env['SCALES'] ?? '1,20').split(',').map(Number);
const CLK_TCK = 100;

interface MarketPage {
  readonly markets: { market_id: string; platform: string }[];
  readonly total_count: number;
  readonly next_cursor?: string | null;
}

interface Proc {
  readonly child: ChildProcess;
  readonly url: string;
  readonly dataDir: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(check: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function startNats(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(NATS!, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', mkdtempSync(join(tmpdir(), 'cb-bench-nats-'))], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('Server is ready')) resolve();
    });
  });
  return { url: `nats://127.0.0.1:${port}`, child };
}

/** `crossbook serve` with `args`; resolves once it listens. */
async function serve(args: string[], scale: number): Promise<Proc> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'cb-bench-'));
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port), '--data-dir', dataDir, ...args], {
    env: { PATH: process.env['PATH'] ?? '', HOME: tmpdir(), LOG_LEVEL: 'warn', CROSSBOOK__sim__scale: String(scale) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('crossbook is running')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`crossbook ${args.join(' ')} exited (${code})`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, dataDir };
}

async function stop(p: { child: ChildProcess }): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  await Promise.race([exited, sleep(15_000).then(() => p.child.kill('SIGKILL'))]);
}

/** CPU seconds (user + system) a process has used. */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function pct(sorted: readonly number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

interface Sample {
  readonly kind: 'single' | 'cluster';
  readonly scale: number;
  readonly n: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  /** CPU % of one core over the window, per process. */
  readonly cpu: Record<string, number>;
  readonly bootstrapMs?: number;
  readonly snapshotBytes?: number;
  /** The stream over the window: messages the core published per second, and stored bytes per message. */
  readonly stream?: { msgsPerSec: number; bytesPerMsg: number };
  readonly markets: number;
}

/** Subscribes on `on` and collects recv_ts latencies for MEASURE_MS, sampling the CPU of `procs` around it. */
async function measure(on: Proc, key: string, procs: Record<string, Proc>): Promise<Omit<Sample, 'kind' | 'scale' | 'bootstrapMs' | 'snapshotBytes'>> {
  const h = { headers: { 'x-api-key': key } };
  const page = async (cursor?: string): Promise<MarketPage> =>
    (await (await fetch(`${on.url}/api/v2/markets?limit=100${cursor ? `&cursor=${cursor}` : ''}`, h)).json()) as MarketPage;
  await until(async () => ((await page()).markets.filter((m) => m.platform === 'venue_a').length >= 50 ? true : undefined), 120_000, 'markets');
  // Up to SUBSCRIBE venue_a markets, so that a large catalog (few updates per market) still gives enough samples.
  const ids: string[] = [];
  for (let p: MarketPage | undefined = await page(); p && ids.length < SUBSCRIBE; p = p.next_cursor ? await page(p.next_cursor) : undefined)
    ids.push(...p.markets.filter((m) => m.platform === 'venue_a').map((m) => m.market_id));
  ids.length = Math.min(ids.length, SUBSCRIBE);
  const ws = new WebSocket(`${on.url.replace('http', 'ws')}/api/v2/ws`, h);
  await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
  const lat: number[] = [];
  let measuring = false;
  ws.on('message', (d: Buffer) => {
    const now = Date.now();
    const m = JSON.parse(d.toString()) as Record<string, unknown>;
    if (m['type'] === 'error') process.stderr.write(`${JSON.stringify(m)}\n`);
    if (measuring && m['type'] === 'price_update' && m['snapshot'] !== true && typeof m['recv_ts'] === 'number') lat.push(now - m['recv_ts']);
  });
  ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: ids }));
  await sleep(WARM_MS);
  const cpu0 = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, cpuSeconds(p.child.pid!)]));
  const t0 = Date.now();
  measuring = true;
  await sleep(MEASURE_MS);
  measuring = false;
  const secs = (Date.now() - t0) / 1000;
  const cpu = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, Math.round(((cpuSeconds(p.child.pid!) - cpu0[k]!) / secs) * 100)]));
  ws.close();
  lat.sort((a, b) => a - b);
  return { n: lat.length, p50: pct(lat, 50), p90: pct(lat, 90), p99: pct(lat, 99), max: lat.at(-1) ?? NaN, cpu, markets: (await page()).total_count };
}

async function runSingle(scale: number): Promise<Sample> {
  const single = await serve([], scale);
  try {
    const key = readFileSync(join(single.dataDir, 'demo-key'), 'utf8').trim();
    return { kind: 'single', scale, ...(await measure(single, key, { single })) };
  } finally {
    await stop(single);
  }
}

async function runCluster(scale: number): Promise<Sample> {
  const nats = await startNats();
  const core = await serve(['--role', 'core', '--nats', nats.url], scale);
  let edge: Proc | undefined;
  try {
    const key = readFileSync(join(core.dataDir, 'demo-key'), 'utf8').trim();
    const c = loadConfig({ env: {} }).cluster!;
    const link = await openLink({ natsUrl: nats.url, stream: c.stream, bucket: c.bucket, maxAgeMs: c.maxAgeMs, maxMsgs: c.maxMsgs });
    // The core's first full snapshot (the catalog loaded) before the edge starts.
    await until(async () => ((await fetch(`${core.url}/api/v2/status`)).ok ? true : undefined), 120_000, 'core status');
    await sleep(c.snapshotIntervalMs + 1_000);
    const t0 = Date.now();
    edge = await serve(['--role', 'edge', '--nats', nats.url], scale);
    const e = edge;
    await until(
      async () => {
        const s = (await (await fetch(`${e.url}/api/v2/status`)).json()) as { cluster?: { link: string } };
        return s.cluster?.link === 'following' ? true : undefined;
      },
      120_000,
      'edge following',
    );
    const bootstrapMs = Date.now() - t0;
    const info0 = (await link.jsm.streams.info(c.stream)).state;
    const t1 = Date.now();
    const sample = await measure(edge, key, { core, edge });
    const info1 = (await link.jsm.streams.info(c.stream)).state;
    const secs = (Date.now() - t1) / 1000;
    const stream = { msgsPerSec: Math.round((info1.last_seq - info0.last_seq) / secs), bytesPerMsg: Math.round(info1.bytes / info1.messages) };
    const sizes = (await link.objects.list()).filter((o) => !o.deleted && o.name.startsWith('state.')).map((o) => o.size);
    await link.close();
    return { kind: 'cluster', scale, ...sample, bootstrapMs, snapshotBytes: Math.max(...sizes), stream };
  } finally {
    if (edge) await stop(edge);
    await stop(core);
    await stop(nats);
  }
}

async function main(): Promise<void> {
  if (!NATS) throw new Error('nats-server is not installed (apt-get install nats-server)');
  const load0 = loadavg();
  const started = new Date().toISOString();
  const samples: Sample[] = [];
  for (const scale of SCALES)
    for (let i = 0; i < PAIRS; i++) {
      // Alternate which goes first, so a drift of the machine's load does not favour one.
      const order = i % 2 === 0 ? [runSingle, runCluster] : [runCluster, runSingle];
      for (const run of order.filter((r) => KINDS.includes(r === runSingle ? 'single' : 'cluster'))) {
        const s = await run(scale);
        samples.push(s);
        process.stderr.write(`${JSON.stringify(s)}\n`);
      }
    }
  const load1 = loadavg();
  const lines = [
    `date ${started}; ${cpus().length} x ${cpus()[0]?.model ?? '?'}; node ${process.version}`,
    `command: npx tsx bench/cluster/hop.ts (PAIRS=${PAIRS} MEASURE_MS=${MEASURE_MS} SCALES=${SCALES.join(',')})`,
    `load average before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${load1.map((x) => x.toFixed(2)).join(' ')}`,
    '',
    '| scale | run | markets | updates | p50 ms | p90 ms | p99 ms | max ms | CPU % (per process) | edge bootstrap ms | snapshot bytes | stream msgs/s, bytes/msg |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...samples.map(
      (s) =>
        `| ${s.scale} | ${s.kind} | ${s.markets} | ${s.n} | ${s.p50} | ${s.p90} | ${s.p99} | ${s.max} | ${Object.entries(s.cpu)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')} | ${s.bootstrapMs ?? ''} | ${s.snapshotBytes ?? ''} | ${s.stream ? `${s.stream.msgsPerSec}, ${s.stream.bytesPerMsg}` : ''} |`,
    ),
    '',
    '| scale | p50 cluster / single | p99 cluster / single |',
    '|---|---|---|',
    ...SCALES.map((scale) => {
      const med = (kind: string, k: 'p50' | 'p99'): number => {
        const v = samples
          .filter((s) => s.scale === scale && s.kind === kind)
          .map((s) => s[k])
          .sort((a, b) => a - b);
        return v[Math.floor(v.length / 2)]!;
      };
      return `| ${scale} | ${(med('cluster', 'p50') / med('single', 'p50')).toFixed(2)} | ${(med('cluster', 'p99') / med('single', 'p99')).toFixed(2)} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
