import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scaleForMarkets } from '../sim/size.js';
import { heapByComponent } from './heap-owners.js';
import type { Profile } from './profiles.js';
import { machineInfo, type BenchReport, type WsFigures } from './report.js';
import { runAutocannon } from './rest-load.js';
import { fillPaths, marketPool, window } from './run.js';
import { cpuSeconds, startTarget, stopOnSignal, type ProcessSample, type Target } from './target.js';
import { WsLoad } from './ws-load.js';

/** Options of `crossbook bench --profile scale`. */
export interface ScaleOptions {
  /** Market counts to run the service at (the simulator's scale is chosen to list at least each). */
  readonly sizes: readonly number[];
  /** The scale profile: tick rate, subscriptions, the fixed client load (its first step) and the REST paths. */
  readonly profile: Profile;
  /** Take a heap snapshot at this size and price the components per market (the smallest size ≥ 10,000 by default). */
  readonly componentsAt: number | undefined;
  /** How long one size may take to bring every venue live, s. */
  readonly liveTimeoutSec: number;
  /** Skip the sizes left once this long has passed. */
  readonly maxMinutes: number;
  readonly log: (line: string) => void;
}

/** One size's figures. */
export interface ScalePoint {
  readonly markets: number;
  readonly scale: number;
  /** Markets /markets reports once every venue is live. */
  readonly listed: number;
  readonly listenSec: number;
  readonly statusOkSec: number | null;
  readonly allLiveSec: number | null;
  /** Until the number of cross-venue events (/events) stops changing. */
  readonly matchedSec: number | null;
  readonly restartStatusOkSec: number | null;
  readonly restartAllLiveSec: number | null;
  /** After warm-up, with every venue live and no client load. */
  readonly idle: ProcessSample;
  /** Service CPU, % of one core per 1,000 simulator ticks/s (the simulator runs in a process of its own, `sim.process` child). */
  readonly ingestCpuPer1k: number;
  readonly reads: readonly { readonly path: string; readonly rps: number; readonly p99: number; readonly errors: number }[];
  readonly fanout: WsFigures | undefined;
  /** Heap bytes by component (src/capacity/heap-owners.ts), when measured at this size. */
  readonly components: Readonly<Record<string, number>> | undefined;
}

/** What `crossbook bench --profile scale` reports. */
export interface ScaleReport {
  readonly profile: Profile;
  readonly machine: BenchReport['machine'];
  readonly command: string;
  readonly durationSec: number;
  readonly points: readonly ScalePoint[];
  /** Sizes not run (time budget or the machine's memory) and why. */
  readonly skipped: readonly string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface StatusDoc {
  status?: string;
  platforms?: Record<string, { feed_status?: string }>;
}

/** Polls /status until it is ok and until every venue's feed is ok; seconds from `t0`, null when the time ran out. */
async function startupTimes(t: Target, t0: number, timeoutSec: number): Promise<{ statusOkSec: number | null; allLiveSec: number | null }> {
  const until = t0 + timeoutSec * 1000;
  let statusOkSec: number | null = null;
  while (performance.now() < until) {
    const st = (await (await fetch(`${t.api}/status`)).json().catch(() => ({}))) as StatusDoc;
    const now = (performance.now() - t0) / 1000;
    if (statusOkSec === null && st.status === 'ok') statusOkSec = now;
    const feeds = Object.values(st.platforms ?? {});
    if (statusOkSec !== null && feeds.length > 0 && feeds.every((p) => p.feed_status === 'ok')) return { statusOkSec, allLiveSec: now };
    await sleep(500);
  }
  return { statusOkSec, allLiveSec: null };
}

/** The first time the count of cross-venue events held for three polls 2 s apart; seconds from `t0`. */
async function matchedTime(t: Target, t0: number, timeoutSec: number): Promise<number | null> {
  const until = t0 + timeoutSec * 1000;
  let last = -1;
  let since = 0;
  let held = 0;
  while (performance.now() < until) {
    const r = (await (await fetch(`${t.api}/events?limit=1`, { headers: { 'x-api-key': t.key } })).json().catch(() => ({}))) as {
      _meta?: { total_count?: number };
    };
    const n = r._meta?.total_count ?? -1;
    if (n !== last) {
      last = n;
      since = (performance.now() - t0) / 1000;
      held = 0;
    } else if (n > 0 && ++held >= 3) return since;
    await sleep(2000);
  }
  return null;
}

async function listedMarkets(t: Target): Promise<number> {
  const r = (await (await fetch(`${t.api}/markets?limit=1`, { headers: { 'x-api-key': t.key } })).json()) as { total_count?: number };
  return r.total_count ?? 0;
}

/** Service CPU over `seconds` without client load, per 1,000 ticks/s of the simulator. */
async function ingestCpu(t: Target, ticksPerSecond: number, seconds: number): Promise<number> {
  const c0 = cpuSeconds(t.pid);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const pct = ((cpuSeconds(t.pid) - c0) / ((performance.now() - t0) / 1000)) * 100;
  return ticksPerSecond > 0 ? (pct / ticksPerSecond) * 1000 : 0;
}

/** Each REST path of the profile alone, `seconds` each at the first step's connections. */
async function reads(t: Target, paths: readonly string[], labels: readonly string[], connections: number, seconds: number): Promise<ScalePoint['reads']> {
  const out: { path: string; rps: number; p99: number; errors: number }[] = [];
  for (let i = 0; i < paths.length; i++) {
    const r = await runAutocannon(t.url, [paths[i]!], t.key, connections, seconds);
    out.push({ path: labels[i]!, rps: r.rps, p99: r.p99, errors: r.errors });
  }
  return out;
}

/** Signals the service to write a heap snapshot (it runs with --heapsnapshot-signal) and prices it by component. */
async function components(t: Target, dir: string, log: (s: string) => void): Promise<Record<string, number> | undefined> {
  process.kill(t.pid, 'SIGUSR2');
  const deadline = Date.now() + 300_000;
  let size = -1;
  while (Date.now() < deadline) {
    await sleep(2000);
    const f = readdirSync(dir).find((n) => n.endsWith('.heapsnapshot'));
    if (!f) continue;
    const s = statSync(join(dir, f)).size;
    if (s > 0 && s === size) {
      log(`  heap snapshot ${Math.round(s / 2 ** 20)} MiB written; attributing by component…`);
      return heapByComponent(join(dir, f));
    }
    size = s;
  }
  log('  heap snapshot not written within 5 minutes; no component figures at this size');
  return undefined;
}

/** The service at `markets`: start, warm-up, reads, fan-out, ingest CPU, restart from its DATA_DIR. */
async function measureSize(markets: number, withComponents: boolean, o: ScaleOptions): Promise<ScalePoint> {
  const p = o.profile;
  const scale = scaleForMarkets(markets);
  const env = { CROSSBOOK__sim__scale: String(scale) };
  const snapDir = mkdtempSync(join(tmpdir(), 'crossbook-heap-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'crossbook-scale-'));
  const nodeArgs = withComponents ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`] : [];
  const startTimeoutMs = 60_000 + scale * 300;
  const t0 = performance.now();
  let target = await startTarget({ ticksPerSecond: p.ticksPerSecond, env, dataDir, nodeArgs, startTimeoutMs });
  const load = new WsLoad(`${target.url.replace('http', 'ws')}/api/v2/ws`, target.key);
  const off = stopOnSignal(async () => {
    load.close();
    await target.stop();
  });
  try {
    const listenSec = (performance.now() - t0) / 1000;
    const up = await startupTimes(target, t0, o.liveTimeoutSec);
    const matchedSec = up.allLiveSec === null ? null : await matchedTime(target, t0, o.liveTimeoutSec);
    o.log(
      `  ${markets.toLocaleString('en-US')} markets (scale ${scale}): listening ${listenSec.toFixed(1)} s, /status ok ${up.statusOkSec?.toFixed(1) ?? '–'} s, all venues live ${up.allLiveSec?.toFixed(1) ?? '–'} s, matched ${matchedSec?.toFixed(1) ?? '–'} s`,
    );
    await sleep(p.stepSeconds * 1000);
    await target.sample();
    const ingestCpuPer1k = await ingestCpu(target, p.ticksPerSecond, p.stepSeconds);
    const idle = await target.sample();
    const listed = await listedMarkets(target);
    const comps = withComponents ? await components(target, snapDir, o.log) : undefined;
    const pool = await marketPool(target, p.markets);
    const paths = fillPaths(p.restPaths, pool.ids, pool.book);
    const step = p.steps[0]!;
    const r = step.rest > 0 ? await reads(target, paths, p.restPaths, step.rest, p.stepSeconds) : [];
    let fanout: WsFigures | undefined;
    if (step.clients > 0 && pool.ids.length > 0) {
      const subsOf = (i: number): string[] => Array.from({ length: p.subscriptions }, (_, k) => pool.ids[(i * p.subscriptions + k) % pool.ids.length]!);
      await load.grow(step.clients, subsOf);
      await sleep(1000);
      fanout = (await window(load, step.clients, undefined, p.stepSeconds)).ws;
      load.close();
    }
    o.log(
      `    RSS ${Math.round(idle.rssMiB)} MiB, heap ${Math.round(idle.heapMiB)} MiB, ${listed.toLocaleString('en-US')} listed; ingest ${ingestCpuPer1k.toFixed(1)}% CPU per 1k ticks/s`,
    );
    await target.stop();
    const t1 = performance.now();
    target = await startTarget({ ticksPerSecond: p.ticksPerSecond, env, dataDir, startTimeoutMs });
    const again = await startupTimes(target, t1, o.liveTimeoutSec);
    o.log(`    restart from DATA_DIR: /status ok ${again.statusOkSec?.toFixed(1) ?? '–'} s, all venues live ${again.allLiveSec?.toFixed(1) ?? '–'} s`);
    return {
      markets,
      scale,
      listed,
      listenSec,
      statusOkSec: up.statusOkSec,
      allLiveSec: up.allLiveSec,
      matchedSec,
      restartStatusOkSec: again.statusOkSec,
      restartAllLiveSec: again.allLiveSec,
      idle,
      ingestCpuPer1k,
      reads: r,
      fanout,
      components: comps,
    };
  } finally {
    off();
    load.close();
    await target.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(snapDir, { recursive: true, force: true });
  }
}

/** Bytes of memory a size needs, about: what the fitted curve says, to skip sizes this machine cannot hold. */
function fitsInMemory(markets: number, done: readonly ScalePoint[], freeMiB: number): boolean {
  const last = done.at(-1);
  if (!last) return true;
  const perMarket = last.idle.rssMiB / Math.max(1, last.listed);
  return perMarket * markets * 1.5 < freeMiB;
}

/**
 * `crossbook bench --profile scale`: the whole service at each size in turn (a fresh DATA_DIR each,
 * then a restart on it), measured after warm-up; component costs from a heap snapshot at one size.
 */
export async function runScale(o: ScaleOptions, command: string): Promise<ScaleReport> {
  const t0 = performance.now();
  const deadline = Date.now() + o.maxMinutes * 60_000;
  const points: ScalePoint[] = [];
  const skipped: string[] = [];
  const at = o.componentsAt ?? o.sizes.find((n) => n >= 10_000) ?? o.sizes[0];
  o.log(`crossbook bench: profile scale at ${o.sizes.map((n) => n.toLocaleString('en-US')).join(', ')} markets (${o.profile.ticksPerSecond} ticks/s)`);
  for (const n of o.sizes) {
    const free = memAvailableMiB();
    if (Date.now() > deadline) skipped.push(`${n.toLocaleString('en-US')} markets: the time budget of ${o.maxMinutes} min ran out`);
    else if (!fitsInMemory(n, points, free))
      skipped.push(`${n.toLocaleString('en-US')} markets: the curve so far needs more than the ${Math.round(free / 1024)} GiB available`);
    else points.push(await measureSize(n, n === at, o));
  }
  for (const s of skipped) o.log(`  skipped ${s}`);
  return { profile: o.profile, machine: machineInfo(), command, durationSec: (performance.now() - t0) / 1000, points, skipped };
}

function memAvailableMiB(): number {
  const f = '/proc/meminfo';
  if (!existsSync(f)) return Infinity;
  const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync(f, 'utf8'));
  return m ? Number(m[1]) / 1024 : Infinity;
}
