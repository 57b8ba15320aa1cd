import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../config/load.js';
import { DEFAULT_MAX_POSITIONS } from '../signals/wallets.js';
import { machineInfo } from './report.js';
import { uplotChart, uplotHead } from './charts.js';
import { projectRoot, startTarget, stopOnSignal } from './target.js';
import { quantile, WsLoad } from './ws-load.js';

export interface SoakOptions {
  readonly minutes: number;
  readonly sampleSeconds: number;
  readonly ticksPerSecond: number;
  readonly clients: number;
  readonly subscriptions: number;
  /** Steady REST rate, requests per second (autocannon overallRate over 4 connections). */
  readonly restRate: number;
  /**
   * The service's time- and count-bounded memory (minute volume buckets, kept 48 h; smart-wallet
   * entries, 24 h; the recent-trade ring, 100,000; the simulator's trade log, 20,000 a venue;
   * wallet positions, 200,000) is
   * scaled down to fill within the first quarter
   * of the run, so that the second half, where the slope is judged, sees the steady state and any
   * growth there is a leak, not a window filling. false keeps the service's own windows.
   */
  readonly scaledWindows: boolean;
  readonly outDir: string;
  readonly results: boolean;
  readonly command: string;
  readonly log: (line: string) => void;
}

export interface SoakSample {
  readonly minute: number;
  readonly rssMiB: number;
  readonly rssAnonMiB: number;
  readonly heapMiB: number;
  readonly heapTotalMiB: number;
  readonly externalMiB: number;
  /** Wallet positions held (the ledger's bounded working set). */
  readonly positions: number;
  readonly cpuPct: number;
  readonly lagP99Ms: number;
  readonly lagMaxMs: number;
  readonly restRps: number;
  readonly restP99: number;
  readonly wsPerSec: number;
  readonly wsP99: number;
  readonly lost: number;
  readonly errors: number;
}

/** The scaled memory windows of a soak of `minutes`: a quarter of the run, at least a minute. */
export function scaledWindowMs(minutes: number): number {
  return Math.max(60_000, Math.round((minutes * 60_000) / 4));
}

/** The count-bounded memory a soak scales down. */
const SCALED_COUNTS = { recentTrades: 2_000, tradeLog: 2_000, maxPositions: 5_000 } as const;

/** The same counts as the service would run with unscaled (config/default.json and the code's defaults). */
function productionCounts(): { recentTrades: number; tradeLog: number; maxPositions: number } {
  const c = loadConfig({ env: {} });
  return { recentTrades: c.memory.recentTrades, tradeLog: c.sim.tradeLog, maxPositions: c.signals?.wallets?.maxPositions ?? DEFAULT_MAX_POSITIONS };
}

/** What a soak of `minutes` scales, for its log line and its report. */
function scaledDescription(minutes: number): string {
  const n = (x: number): string => x.toLocaleString('en-US');
  const [s, d] = [SCALED_COUNTS, productionCounts()];
  return `minute volume and smart-flow windows ${scaledWindowMs(minutes) / 60_000} min instead of 48 h and 24 h, ${n(s.recentTrades)} recent trades in memory instead of ${n(d.recentTrades)} and ${n(s.tradeLog)} per venue in the simulator instead of ${n(d.tradeLog)}, ${n(s.maxPositions)} wallet positions instead of ${n(d.maxPositions)}`;
}

/** Least-squares slope of y over x. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * `npm run soak`: the embedded default under a steady load (WebSocket clients on the prices
 * channel, REST at a fixed rate) for `minutes`, sampled every `sampleSeconds`: RSS, heap,
 * event-loop lag, REST and WebSocket p99. The RSS slope over the second half (MiB/hour) says
 * whether memory is flat. Writes soak.json and soak.html to `outDir` and, with `results`,
 * bench/results/soak.json for BENCHMARKS.md.
 */
export async function runSoak(o: SoakOptions): Promise<{ samples: SoakSample[]; rssSlopeMiBPerHour: number }> {
  const t0 = Date.now();
  o.log(
    `soak: ${o.minutes} min, ${o.clients} WebSocket clients × ${o.subscriptions} subscriptions, REST ${o.restRate} req/s, simulator ${o.ticksPerSecond} ticks/s`,
  );
  const windowMs = scaledWindowMs(o.minutes);
  const scaled: Record<string, string> = o.scaledWindows
    ? {
        CROSSBOOK__signals__wallets__volumeRetentionMs: String(windowMs),
        CROSSBOOK__signals__wallets__smartFlowMs: String(windowMs),
        CROSSBOOK__memory__recentTrades: String(SCALED_COUNTS.recentTrades),
        CROSSBOOK__sim__tradeLog: String(SCALED_COUNTS.tradeLog),
        CROSSBOOK__signals__wallets__maxPositions: String(SCALED_COUNTS.maxPositions),
      }
    : {};
  if (o.scaledWindows) o.log(`  scaled to fill in the first quarter (--production-windows keeps the defaults): ${scaledDescription(o.minutes)}`);
  const target = await startTarget({ ticksPerSecond: o.ticksPerSecond, env: scaled });
  const load = new WsLoad(`${target.url.replace('http', 'ws')}/api/v2/ws`, target.key);
  const offSignal = stopOnSignal(async () => {
    load.close();
    await target.stop();
  });
  o.log(`  service ${target.url} (pid ${target.pid})`);
  const samples: SoakSample[] = [];
  try {
    await new Promise((r) => setTimeout(r, 3000));
    const page = (await (await fetch(`${target.api}/markets?limit=500`, { headers: { 'x-api-key': target.key } })).json()) as {
      markets: { platform: string; market_id: string }[];
    };
    const ids = page.markets.map((m) => `${m.platform}:${m.market_id}`);
    await load.grow(o.clients, (i) => Array.from({ length: o.subscriptions }, (_, k) => ids[(i * o.subscriptions + k) % ids.length]!));
    const paths = ['/api/v2/markets?limit=50', `/api/v2/prices/bulk?ids=${encodeURIComponent(ids.slice(0, 100).join(','))}`, '/api/v2/status'];
    await target.sample();
    o.log('  min   RSS MiB  anon MiB  heap used/total MiB  ext MiB  positions  CPU%  lag p99/max ms  REST req/s  REST p99  WS msgs/s  WS p99  lost  errors');
    while (Date.now() - t0 < o.minutes * 60_000) {
      load.reset();
      const r = await autocannon({
        url: target.url,
        connections: 4,
        overallRate: o.restRate,
        duration: o.sampleSeconds,
        headers: { 'x-api-key': target.key },
        requests: paths.map((p) => ({ method: 'GET' as const, path: p })),
      });
      const s = await target.sample();
      const x: SoakSample = {
        minute: Math.round(((Date.now() - t0) / 60_000) * 10) / 10,
        rssMiB: Math.round(s.rssMiB),
        rssAnonMiB: Math.round(s.rssAnonMiB),
        heapMiB: Math.round(s.heapMiB),
        heapTotalMiB: Math.round(s.heapTotalMiB),
        externalMiB: Math.round(s.externalMiB),
        positions: s.walletPositions,
        cpuPct: Math.round(s.cpuPct),
        lagP99Ms: Math.round(s.lagP99Ms * 10) / 10,
        lagMaxMs: Math.round(s.lagMaxMs * 10) / 10,
        restRps: Math.round(r.requests.average),
        restP99: r.latency.p99,
        wsPerSec: Math.round(load.delivered / o.sampleSeconds),
        wsP99: quantile(load.latencies, 0.99),
        lost: load.lost,
        errors: r.errors + r.non2xx + r.timeouts + load.failed,
      };
      samples.push(x);
      o.log(
        `  ${x.minute.toFixed(1).padStart(4)}  ${String(x.rssMiB).padStart(7)}  ${String(x.rssAnonMiB).padStart(8)}  ${`${x.heapMiB}/${x.heapTotalMiB}`.padStart(19)}  ${String(x.externalMiB).padStart(7)}  ${String(x.positions).padStart(9)}  ${String(x.cpuPct).padStart(4)}  ${`${x.lagP99Ms}/${x.lagMaxMs}`.padStart(14)}  ${String(x.restRps).padStart(10)}  ${String(x.restP99).padStart(8)}  ${String(x.wsPerSec).padStart(9)}  ${String(x.wsP99).padStart(6)}  ${String(x.lost).padStart(4)}  ${x.errors}`,
      );
    }
  } finally {
    offSignal();
    load.close();
    await target.stop();
  }
  const half = samples.slice(Math.floor(samples.length / 2));
  const perHour = (f: (s: SoakSample) => number): number =>
    Math.round(
      slope(
        half.map((s) => s.minute),
        half.map(f),
      ) *
        60 *
        10,
    ) / 10;
  const rssSlopeMiBPerHour = perHour((s) => s.rssMiB);
  const anonSlopeMiBPerHour = perHour((s) => s.rssAnonMiB);
  const m = machineInfo();
  mkdirSync(o.outDir, { recursive: true });
  writeFileSync(join(o.outDir, 'soak.json'), JSON.stringify({ options: { ...o, log: undefined }, machine: m, samples, rssSlopeMiBPerHour }, null, 2) + '\n');
  writeFileSync(join(o.outDir, 'soak.html'), soakHtml(samples, rssSlopeMiBPerHour, m, o));
  o.log(
    `\nslopes over the second half: RSS ${rssSlopeMiBPerHour} MiB/hour, anonymous RSS ${anonSlopeMiBPerHour} MiB/hour; report ${join(o.outDir, 'soak.html')}`,
  );
  if (o.results) writeSoakResults(samples, rssSlopeMiBPerHour, anonSlopeMiBPerHour, m, o);
  return { samples, rssSlopeMiBPerHour };
}

function writeSoakResults(samples: readonly SoakSample[], slopeMiB: number, anonSlopeMiB: number, m: ReturnType<typeof machineInfo>, o: SoakOptions): void {
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  // One row per ~5 minutes keeps the table readable; the HTML has every sample.
  const every = Math.max(1, Math.round(samples.length / 8));
  const rows = samples.filter((_, i) => i === 0 || i % every === 0 || i === samples.length - 1).map((s) => ({ label: `minute ${s.minute}`, ...s }));
  const first = samples[0];
  const last = samples.at(-1);
  // Anonymous memory (heap, native buffers) is what a leak grows; file pages follow LMDB's data, which a soak appends to.
  const flat = Math.abs(anonSlopeMiB) < 20;
  writeFileSync(
    join(dir, 'soak.json'),
    JSON.stringify(
      {
        name: 'soak',
        title: 'Soak: the embedded default under steady load',
        intro: `${o.minutes} minutes of the whole service (simulator at ${o.ticksPerSecond} ticks/s) with ${o.clients} WebSocket clients × ${o.subscriptions} subscriptions and REST at ${o.restRate} req/s (markets pages, 100-id bulk prices, status), sampled every ${o.sampleSeconds} s.${o.scaledWindows ? ` Memory bounded by time or count is scaled to fill within the first quarter (${scaledDescription(o.minutes)}), so the second half shows the steady state.` : ''}`,
        command: o.command,
        machine: m,
        sections: [
          {
            title: `RSS, event-loop lag and p99 over ${o.minutes} minutes`,
            columns: [
              { key: 'rssMiB', title: 'RSS MiB' },
              { key: 'rssAnonMiB', title: 'anon MiB' },
              { key: 'heapMiB', title: 'heap MiB' },
              { key: 'heapTotalMiB', title: 'heap total MiB' },
              { key: 'positions', title: 'wallet positions' },
              { key: 'cpuPct', title: 'CPU %' },
              { key: 'lagP99Ms', title: 'loop lag p99 ms', digits: 1 },
              { key: 'restRps', title: 'REST req/s' },
              { key: 'restP99', title: 'REST p99 ms' },
              { key: 'wsPerSec', title: 'WS msgs/s' },
              { key: 'wsP99', title: 'WS p99 ms' },
              { key: 'lost', title: 'lost' },
              { key: 'errors', title: 'errors' },
            ],
            rows,
            target: {
              text: 'flat memory (anonymous RSS slope within ±20 MiB/hour over the second half), nothing lost, no errors',
              met: flat && samples.every((s) => s.lost === 0 && s.errors === 0),
            },
            interpretation: `RSS went from ${first?.rssMiB ?? '?'} to ${last?.rssMiB ?? '?'} MiB (anonymous ${first?.rssAnonMiB ?? '?'} → ${last?.rssAnonMiB ?? '?'} MiB); over the second half, least squares: RSS ${slopeMiB} MiB/hour, anonymous ${anonSlopeMiB} MiB/hour (the rest of RSS is LMDB's memory-mapped file, which grows with the candles and trades written). ${samples.reduce((a, s) => a + s.lost, 0)} updates lost, ${samples.reduce((a, s) => a + s.errors, 0)} errors.`,
            notes: ['Baseline: the first sample of the same run (the soak compares the service with itself over time).', `HTML chart: ${o.outDir}/soak.html`],
          },
        ],
      },
      null,
      2,
    ) + '\n',
  );
}

/** The soak's HTML page: memory and latency over the run (uPlot, inlined). */
function soakHtml(samples: readonly SoakSample[], slopeMiB: number, m: ReturnType<typeof machineInfo>, o: SoakOptions): string {
  const xs = samples.map((s) => s.minute);
  const memory = uplotChart({
    id: 'memory',
    title: 'Memory',
    xs,
    xLabel: 'minutes from start',
    yLabel: 'MiB',
    series: [
      { label: 'RSS', color: '#27ae60', ys: samples.map((s) => s.rssMiB) },
      { label: 'RSS anonymous', color: '#d35400', ys: samples.map((s) => s.rssAnonMiB) },
      { label: 'heap used', color: '#8bc34a', ys: samples.map((s) => s.heapMiB) },
      { label: 'heap total', color: '#2c6fbb', ys: samples.map((s) => s.heapTotalMiB) },
      { label: 'external', color: '#7f8c8d', ys: samples.map((s) => s.externalMiB) },
    ],
  });
  const latency = uplotChart({
    id: 'latency',
    title: 'Latency',
    xs,
    xLabel: 'minutes from start',
    yLabel: 'ms',
    series: [
      { label: 'REST p99', color: '#2c6fbb', ys: samples.map((s) => s.restP99) },
      { label: 'WebSocket p99', color: '#c0392b', ys: samples.map((s) => s.wsP99) },
      { label: 'event-loop lag p99', color: '#7f8c8d', ys: samples.map((s) => s.lagP99Ms) },
    ],
  });
  const esc = (t: string): string => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>crossbook soak</title>${uplotHead()}<style>body{font-family:system-ui,sans-serif;margin:2em}.chart{margin:1em 0}</style></head><body>
<h1>crossbook soak</h1><p>${esc(m.date)} · ${esc(m.cpu)} × ${m.cores} · Node ${esc(m.node)} · load ${m.load1} · <code>${esc(o.command)}</code></p>
<p>RSS slope over the second half: <b>${slopeMiB} MiB/hour</b>.</p>
${memory}
${latency}
</body></html>
`;
}
