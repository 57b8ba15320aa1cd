import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { scaleForMarkets } from '../sim/size.js';
import type { Profile } from './profiles.js';
import { capacityLine, machineInfo, simSentence, writeReport, type BenchReport, type StepResult, type WsFigures } from './report.js';
import { hasWrk, runAutocannon, runWrk, type RestResult } from './rest-load.js';
import { projectRoot, startTarget, stopOnSignal, type SimMode, type Target } from './target.js';
import { quantile, WsLoad } from './ws-load.js';

export interface RunOptions {
  readonly profileName: string;
  readonly profile: Profile;
  readonly outDir: string;
  /** Stop stepping after this long (the baseline still runs). */
  readonly maxMinutes: number;
  /** Also write bench/results/capacity-<profile>.json for BENCHMARKS.md. */
  readonly results: boolean;
  readonly log: (line: string) => void;
  readonly command: string;
  /** The simulator lists at least this many markets (sim.scale); its default world when undefined. */
  readonly markets?: number | undefined;
  /** Where the venues run: `crossbook sim` in its own process (default: the service's CPU is its own), or embedded in the service. */
  readonly sim?: SimMode;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A market pool: the `want` most recently quoted active markets (as `platform:market_id`, ranked by
 * /prices/bulk `updated_at`, so subscriptions see traffic), and one market with an order book.
 */
export async function marketPool(
  t: Pick<Target, 'api' | 'key'>,
  want: number,
): Promise<{ ids: string[]; book: { platform: string; market: string } | undefined }> {
  const h = { 'x-api-key': t.key };
  const candidates: string[] = [];
  let cursor: string | null = null;
  do {
    const r = await fetch(`${t.api}/markets?limit=2000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
      headers: h,
      signal: AbortSignal.timeout(30_000),
    });
    const b = (await r.json()) as { markets: { platform: string; market_id: string }[]; cursor?: string | null };
    for (const m of b.markets) candidates.push(`${m.platform}:${m.market_id}`);
    cursor = b.cursor ?? null;
  } while (cursor && candidates.length < Math.max(4 * want, 2000));
  const updated = new Map<string, number>();
  for (let i = 0; i < candidates.length; i += 100) {
    const r = await fetch(`${t.api}/prices/bulk?ids=${encodeURIComponent(candidates.slice(i, i + 100).join(','))}`, {
      headers: h,
      signal: AbortSignal.timeout(30_000),
    });
    const b = (await r.json()) as { prices: Record<string, { updated_at: string }> };
    for (const [id, q] of Object.entries(b.prices ?? {})) updated.set(id, Date.parse(q.updated_at));
  }
  const ids = candidates.filter((id) => updated.has(id)).sort((a, b) => updated.get(b)! - updated.get(a)!);
  let book: { platform: string; market: string } | undefined;
  for (const id of ids.slice(0, 200)) {
    const [platform, market] = [id.slice(0, id.indexOf(':')), id.slice(id.indexOf(':') + 1)];
    if (
      (await fetch(`${t.api}/orderbook?platform=${platform}&market_id=${encodeURIComponent(market)}`, { headers: h, signal: AbortSignal.timeout(30_000) }))
        .status === 200
    ) {
      book = { platform, market };
      break;
    }
  }
  return { ids: ids.slice(0, want), book };
}

export function fillPaths(paths: readonly string[], ids: readonly string[], book: { platform: string; market: string } | undefined): string[] {
  return paths.map((p) =>
    `/api/v2${p}`
      .replace('{ids}', encodeURIComponent(ids.slice(0, 100).join(',')))
      .replace('{platform}', book?.platform ?? '')
      .replace('{market}', encodeURIComponent(book?.market ?? '')),
  );
}

function wsFigures(load: WsLoad, clients: number, seconds: number): WsFigures {
  const lat = load.latencies;
  return {
    clients,
    delivered: load.delivered,
    perSec: load.delivered / seconds,
    p50: quantile(lat, 0.5),
    p99: quantile(lat, 0.99),
    max: lat.length ? lat[lat.length - 1]! : 0,
    lost: load.lost,
    failed: load.failed,
  };
}

/** Runs one measured window: WebSocket clients already connected, REST load (if any) for `seconds`. */
export async function window(
  load: WsLoad,
  clients: number,
  rest: { base: string; paths: string[]; key: string; connections: number } | undefined,
  seconds: number,
): Promise<{ ws: WsFigures; rest: RestResult | undefined; harnessCpuPct: number; seconds: number }> {
  load.reset();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r =
    rest && rest.connections > 0 ? await runAutocannon(rest.base, rest.paths, rest.key, rest.connections, seconds) : (await sleep(seconds * 1000), undefined);
  const sec = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { ws: wsFigures(load, clients, sec), rest: r, harnessCpuPct: ((cpu.user + cpu.system) / 1e6 / sec) * 100, seconds: sec };
}

async function startBare(rate: number): Promise<{ port: number; pid: number; stop: () => Promise<unknown> }> {
  // The built file, also when this module runs from src/ under tsx (tests): like the service, the baseline runs as shipped.
  const file = join(projectRoot(), 'dist', 'src', 'capacity', 'bare.js');
  const child: ChildProcess = spawn(process.execPath, [file, String(Math.max(1, Math.round(rate)))], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((res, rej) => {
    createInterface({ input: child.stdout! }).once('line', res);
    child.once('exit', (c) => rej(new Error(`bare baseline exited ${c}`)));
  });
  const gone = new Promise((r) => child.once('exit', r));
  return {
    port: (JSON.parse(line) as { port: number }).port,
    pid: child.pid!,
    stop: () => {
      child.kill('SIGKILL');
      return gone;
    },
  };
}

/** The service's environment for a world of at least `markets` markets (none: the default world). */
function simScaleEnv(markets: number | undefined): Record<string, string> | undefined {
  return markets === undefined ? undefined : { CROSSBOOK__sim__scale: String(scaleForMarkets(markets)) };
}

/** A step's figures judged against the profile's objectives. */
export function judgeStep(
  p: Profile,
  step: number,
  s: Profile['steps'][number],
  w: Awaited<ReturnType<typeof window>>,
  wrk: RestResult | undefined,
  service: StepResult['service'],
): StepResult {
  const broken: string[] = [];
  if (s.clients > 0 && w.ws.p99 > p.slo.p99Ms) broken.push(`WebSocket p99 ${w.ws.p99} ms > ${p.slo.p99Ms}`);
  if (w.rest && w.rest.p99 > p.slo.p99Ms) broken.push(`REST p99 ${w.rest.p99} ms > ${p.slo.p99Ms}`);
  if (w.ws.lost > 0) broken.push(`${w.ws.lost} updates lost`);
  const attempts = (w.rest?.requests ?? 0) + s.clients;
  const errors = (w.rest?.errors ?? 0) + w.ws.failed;
  if (attempts > 0 && errors / attempts > p.slo.maxErrorRate) broken.push(`${errors} errors of ${attempts}`);
  if (s.clients > 0 && w.ws.delivered === 0) broken.push('no update delivered');
  return {
    step,
    clients: s.clients,
    subscriptions: p.subscriptions,
    restConnections: s.rest,
    ticksPerSecond: p.ticksPerSecond,
    seconds: w.seconds,
    ws: w.ws,
    rest: w.rest,
    wrk,
    service,
    harnessCpuPct: w.harnessCpuPct,
    ok: broken.length === 0,
    broken,
  };
}

const STEP_HEADER = '  step  clients  REST  delivered/s  WS p50/p99 ms  REST req/s  REST p99  lost  CPU%  RSS MiB  sim CPU%  lag p99  SLO';

/** One row of the console table under {@link STEP_HEADER}. */
function stepLine(r: StepResult): string {
  const pad = (v: string, n: number): string => v.padStart(n);
  const sv = r.service;
  return `  ${pad(String(r.step), 4)}  ${pad(String(r.clients), 7)}  ${pad(String(r.restConnections), 4)}  ${pad(Math.round(r.ws.perSec).toString(), 11)}  ${pad(`${r.ws.p50}/${r.ws.p99}`, 13)}  ${pad(r.rest ? Math.round(r.rest.rps).toString() : '–', 10)}  ${pad(r.rest ? String(r.rest.p99) : '–', 8)}  ${pad(String(r.ws.lost), 4)}  ${pad(Math.round(sv.cpuPct).toString(), 4)}  ${pad(Math.round(sv.rssMiB).toString(), 7)}  ${pad(sv.sim ? Math.round(sv.sim.cpuPct).toString() : '–', 8)}  ${pad(sv.lagP99Ms.toFixed(1), 7)}  ${r.ok ? 'met' : r.broken.join('; ')}${r.harnessCpuPct > 90 ? ' (harness CPU-bound)' : ''}`;
}

/**
 * `crossbook bench`: starts the simulator (`crossbook sim`, or embedded with `sim` 'embedded') at the
 * profile's tick rate and the service on a temporary DATA_DIR, steps the load up until a service-level objective breaks, measures the bare
 * uWebSockets.js baselines at the last passing load, and writes the report. Stops everything it
 * started, also on error and on SIGINT.
 */
export async function runBench(o: RunOptions): Promise<BenchReport> {
  const p = o.profile;
  const t0 = performance.now();
  const deadline = Date.now() + o.maxMinutes * 60_000;
  o.log(`crossbook bench: profile ${o.profileName} (${p.steps.length} steps of ${p.stepSeconds} s, ${p.ticksPerSecond} ticks/s, SLO p99 ≤ ${p.slo.p99Ms} ms)`);
  const sim = o.sim ?? 'external';
  const target = await startTarget({ ticksPerSecond: p.ticksPerSecond, log: o.log, env: simScaleEnv(o.markets), startTimeoutMs: 120_000, sim });
  const load = new WsLoad(`${target.url.replace('http', 'ws')}/api/v2/ws`, target.key);
  let bare: Awaited<ReturnType<typeof startBare>> | undefined;
  const offSignal = stopOnSignal(async () => {
    load.close();
    await bare?.stop();
    await target.stop();
  });
  const steps: StepResult[] = [];
  const baseline: { ws?: WsFigures & { rate: number }; rest?: RestResult & { bytes: number } } = {};
  try {
    o.log(`  service ${target.url} (pid ${target.pid}), simulator ${target.simPid ? `in its own process (pid ${target.simPid})` : 'embedded'}; warming up…`);
    await sleep(3000);
    const pool = await marketPool(target, p.markets);
    if (pool.ids.length === 0) throw new Error('the service lists no markets');
    const paths = fillPaths(p.restPaths, pool.ids, pool.book);
    const subsOf = (i: number): string[] => {
      const out: string[] = [];
      for (let k = 0; k < p.subscriptions; k++) out.push(pool.ids[(i * p.subscriptions + k) % pool.ids.length]!);
      return out;
    };
    o.log(`  ${pool.ids.length} markets in the pool; REST paths: ${p.restPaths.join(', ')}`);
    o.log(STEP_HEADER);
    for (let i = 0; i < p.steps.length; i++) {
      if (Date.now() > deadline) {
        o.log(`  time budget of ${o.maxMinutes} min reached`);
        break;
      }
      const s = p.steps[i]!;
      await load.grow(s.clients, subsOf);
      await sleep(1000);
      await target.sample();
      const w = await window(load, s.clients, s.rest ? { base: target.url, paths, key: target.key, connections: s.rest } : undefined, p.stepSeconds);
      const service = await target.sample();
      const wrk = s.rest > 0 && hasWrk() ? runWrk(`${target.url}${paths[0]}`, target.key, s.rest, Math.max(2, p.stepSeconds / 2)) : undefined;
      const r = judgeStep(p, i + 1, s, w, wrk, service);
      steps.push(r);
      o.log(stepLine(r));
      if (!r.ok) break;
    }
    // Baselines at the last passing load (or the first step): the same clients and subscriptions
    // against a bare uWS publish loop at the rate the service published, and a bare route.
    const ref = [...steps].reverse().find((s) => s.ok) ?? steps[0];
    if (ref) {
      load.close();
      if (ref.clients > 0) {
        const rate = Math.max(1, ref.service.publishedPerSec);
        bare = await startBare(rate);
        const bl = new WsLoad(`ws://127.0.0.1:${bare.port}/ws`, 'none');
        try {
          await bl.grow(ref.clients, subsOf);
          await sleep(1000);
          const w = await window(bl, ref.clients, undefined, p.stepSeconds);
          baseline.ws = { ...w.ws, rate };
          o.log(
            `  baseline: bare uWS publish loop at ${Math.round(rate)} publishes/s to ${ref.clients} clients: ${Math.round(w.ws.perSec)} msgs/s, p99 ${w.ws.p99} ms`,
          );
        } finally {
          bl.close();
        }
      }
      if (ref.restConnections > 0) {
        bare ??= await startBare(1);
        const bytes = Buffer.byteLength(await (await fetch(`${target.url}${paths[0]}`, { headers: { 'x-api-key': target.key } })).text());
        const r = await runAutocannon(`http://127.0.0.1:${bare.port}`, [`/bare?bytes=${bytes}`], target.key, ref.restConnections, p.stepSeconds);
        baseline.rest = { ...r, bytes };
        o.log(`  baseline: bare uWS route, ${bytes}-byte body, ${ref.restConnections} connections: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms`);
      }
    }
  } finally {
    offSignal();
    load.close();
    await bare?.stop();
    await target.stop();
  }
  const report: BenchReport = {
    profileName: o.profileName,
    profile: p,
    sim,
    machine: machineInfo(),
    command: o.command,
    durationSec: (performance.now() - t0) / 1000,
    steps,
    baseline,
    capacity: capacityLine(p, steps),
    pids: [target.pid, ...(target.simPid ? [target.simPid] : []), ...(bare ? [bare.pid] : [])],
  };
  const files = writeReport(o.outDir, report);
  if (o.results) writeResultsFile(report);
  o.log(`\n${report.capacity.line}\nreport: ${files.html} (data: ${files.json})`);
  return report;
}

/** bench/results/capacity-<profile>.json in the shape bench/run.ts turns into a BENCHMARKS.md section. */
export function writeResultsFile(r: BenchReport): string {
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const pass = r.steps.find((s) => s.step === r.capacity.lastPassingStep);
  const rows: Record<string, unknown>[] = r.steps.map((s) => ({
    label: `step ${s.step}: ${s.clients} clients × ${s.subscriptions} subs, ${s.restConnections} REST conns`,
    group: 'steps',
    perSec: Math.round(s.ws.perSec),
    wsP99: s.clients ? s.ws.p99 : undefined,
    rps: s.rest ? Math.round(s.rest.rps) : undefined,
    restP99: s.rest?.p99,
    cpu: Math.round(s.service.cpuPct),
    rss: Math.round(s.service.rssMiB),
    simCpu: s.service.sim ? Math.round(s.service.sim.cpuPct) : undefined,
    lag: Math.round(s.service.lagP99Ms * 10) / 10,
    slo: s.ok ? 'met' : s.broken.join('; '),
  }));
  if (r.baseline.ws && pass)
    rows.push(
      {
        label: `bare uWS publish loop, ${r.baseline.ws.clients} clients`,
        group: 'ws',
        baseline: true,
        perSec: Math.round(r.baseline.ws.perSec),
        wsP99: r.baseline.ws.p99,
      },
      { label: `crossbook at step ${pass.step}`, group: 'ws', perSec: Math.round(pass.ws.perSec), wsP99: pass.ws.p99 },
    );
  if (r.baseline.rest && pass?.rest)
    rows.push(
      {
        label: `bare uWS route, ${r.baseline.rest.bytes}-byte body`,
        group: 'rest',
        baseline: true,
        rps: Math.round(r.baseline.rest.rps),
        restP99: r.baseline.rest.p99,
      },
      { label: `crossbook at step ${pass.step}`, group: 'rest', rps: Math.round(pass.rest.rps), restP99: pass.rest.p99 },
    );
  const file = join(dir, `capacity-${r.profileName}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        name: `capacity-${r.profileName}`,
        title: `Capacity: crossbook bench --profile ${r.profileName}`,
        intro: `${r.profile.description} The whole service in a child process, the simulator at ${r.profile.ticksPerSecond} ticks/s ${r.sim === 'external' ? 'in a process of its own (`crossbook sim`)' : 'embedded in the service'}; WebSocket clients and autocannon in the harness, stepping up until an objective breaks. HTML report: \`${r.command}\` writes bench-report/report.html.`,
        command: r.command,
        machine: r.machine,
        sections: [
          {
            title: `Load steps (${r.profile.stepSeconds} s each)`,
            columns: [
              { key: 'perSec', title: 'delivered msgs/s' },
              { key: 'wsP99', title: 'WS p99 ms' },
              { key: 'rps', title: 'REST req/s' },
              { key: 'restP99', title: 'REST p99 ms' },
              { key: 'cpu', title: 'service CPU %' },
              { key: 'rss', title: 'RSS MiB' },
              ...(r.sim === 'external' ? [{ key: 'simCpu', title: 'simulator CPU %' }] : []),
              { key: 'lag', title: 'loop lag p99 ms', digits: 1 },
              { key: 'slo', title: 'SLO' },
            ],
            rows,
            ratio: { metric: r.profile.steps.some((s) => s.clients > 0) ? 'perSec' : 'rps', title: 'vs bare' },
            target: {
              text: `p99 ≤ ${r.profile.slo.p99Ms} ms, nothing lost, errors ≤ ${r.profile.slo.maxErrorRate * 100}%`,
              met: r.capacity.lastPassingStep !== null,
            },
            interpretation: `Capacity: ${r.capacity.line}.`,
            notes: [`${simSentence(r.sim)} The harness shares the machine (its CPU is in the HTML report).`, `Run took ${Math.round(r.durationSec)} s.`],
          },
        ],
      },
      null,
      2,
    ) + '\n',
  );
  return file;
}
