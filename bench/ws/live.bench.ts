/**
 * WebSocket fan-out under live ingest (issue 18): the service as deployed (`crossbook serve`, the
 * real feed runtime, every consumer attached) following the venue simulator in its own process
 * (`crossbook sim`, the venues set to live mode at its URLs, as a real venue would be), against a
 * bare uWebSockets.js publish loop (live-bare.ts) that subscribes to the same simulator feed and
 * publishes each frame's price change. C clients each subscribe to S venue_a markets; latency is
 * the client's receive time − the message's `recv_ts` (when the venue frame arrived, same machine
 * clock), so it covers parse, state, the consumers and the fan-out; lost = per-topic seq gaps.
 * One target runs at a time; the simulator runs throughout; pairs alternate (bare first in even
 * pairs, hub first in odd ones). Prints the hub/bare p99 ratio; results are printed, not written:
 * BENCHMARKS.md quotes them.
 *
 * Env: LIVE_CLIENTS (1000), LIVE_SUBS (100), LIVE_RATE (simulator ticks/s, 500), LIVE_PAIRS (3),
 * LIVE_SECONDS (10), LIVE_PROF (a directory: the service runs with --cpu-prof into it), LIVE_DIRECT
 * (1: each service run is also measured on its uWS port behind the HTTP front, as `direct`, to
 * tell the front's relay from the hub's share), LIVE_BASE_BIN (another build's bin/crossbook.js: that
 * build's service runs in every pair too, as `base`, a before/after in one run). Besides the
 * process's CPU, each service run reports its front thread's (the busiest thread other than the
 * main one: the HTTP front's worker), from Linux /proc, and its main thread's time waiting for a
 * core and its involuntary context switches (/proc schedstat and status: how often another thread
 * took the core from it), and this process's CPU (the clients: near a full core, the load generator
 * rather than the target sets the latencies). Receive times are read finer than a ms (fineEpochNow).
 * LIVE_PROBE=1 preloads bench/ws/loop-probe.ts into the service (event-loop
 * delay, utilization, GC pauses by kind over each window; LIVE_PROBE_DIR keeps its output, and
 * LOOP_PROBE_PROF=<µs> a CPU profile of each window's main thread); LIVE_CONFIG (JSON merged over
 * the service's configuration, e.g. `{"capture":{…,"enabled":false}}`) and LIVE_NODE_ARGS (node
 * flags for the service) tell a component's share. The summary gives each target's p99 over the
 * bare loop's per pair, their median and spread, and the p99 of every run's samples pooled.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { cpuSeconds } from '../../src/capacity/target.js';
import { quantile, WsLoad } from '../../src/capacity/ws-load.js';
import { begin, repoRoot } from '../lib.js';
import { readUntil, startSim, type SimEndpoints } from '../sim-process.js';

const CLIENTS = Number(process.env['LIVE_CLIENTS'] ?? 1000);
const SUBS = Number(process.env['LIVE_SUBS'] ?? 100);
const RATE = Number(process.env['LIVE_RATE'] ?? 500);
const PAIRS = Number(process.env['LIVE_PAIRS'] ?? 3);
const SECONDS = Number(process.env['LIVE_SECONDS'] ?? 10);
const PROF = process.env['LIVE_PROF'];
const DIRECT = process.env['LIVE_DIRECT'] === '1';
const BASE_BIN = process.env['LIVE_BASE_BIN'];
/** 1: the service runs with bench/ws/loop-probe.ts preloaded, and each run prints its main thread's figures. */
const PROBE = process.env['LIVE_PROBE'] === '1';
/** Where the probe writes (its figures, and with LOOP_PROBE_PROF its CPU profiles); default each run's data directory, removed at the end. */
const PROBE_DIR = process.env['LIVE_PROBE_DIR'];
/** More node flags for the service (space-separated), e.g. `--trace-gc`. */
const NODE_ARGS = (process.env['LIVE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
/** JSON merged over the service's configuration, e.g. `{"capture":{"enabled":false}}`, to tell a component's share. */
const CONFIG = JSON.parse(process.env['LIVE_CONFIG'] ?? '{}') as Record<string, unknown>;
const here = dirname(fileURLToPath(import.meta.url));
const bin = join(repoRoot(), 'bin/crossbook.js');
/** Data directories of the service runs, removed at the end. */
const dirs: string[] = [];
/**
 * How `npm start` runs the service (package.json's start script): its environment assignments and the
 * node flags before bin/crossbook.js (`--heap-growing-percent=15`: a full collection once the heap grew
 * 15% past the live one). Every service run of this bench runs so, since issue 34's figure is of
 * `npm start`'s port; LIVE_PLAIN=1 runs plain `node bin/crossbook.js serve`, as earlier sessions did.
 * Each build runs as its own package.json says (LIVE_BASE_BIN's with its flags), so a change of the
 * start script's flags is measured against the flags it replaces.
 */
function npmStart(root: string): { readonly env: Record<string, string>; readonly nodeArgs: string[] } {
  if (process.env['LIVE_PLAIN'] === '1') return { env: {}, nodeArgs: [] };
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const m = /(?:^|&&)\s*((?:[A-Z_]+=\S+\s+)*)node\s+((?:--\S+\s+)*)bin\/crossbook\.js serve\s*$/.exec(pkg.scripts['start'] ?? '');
  if (!m) throw new Error(`package.json's start script is not "[VAR=value …] node [--flag …] bin/crossbook.js serve": ${pkg.scripts['start']}`);
  const env = Object.fromEntries(
    m[1]!
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  return { env, nodeArgs: m[2]!.trim().split(/\s+/).filter(Boolean) };
}
/** How `npm start` runs the service of the build whose `bin/crossbook.js` is `file` (its own package.json's start script). */
const npmStartOf = (file: string): ReturnType<typeof npmStart> => npmStart(join(dirname(file), '..'));
const NPM_START = npmStartOf(bin);
/** A start as a command line: its environment assignments, then node and its flags. */
const startLine = (s: ReturnType<typeof npmStart>): string =>
  `${Object.entries(s.env)
    .map(([k, v]) => `${k}=${v} `)
    .join('')}node ${s.nodeArgs.join(' ')}`;

/** The probe's output file of each service run, by pid. */
const probes = new Map<number, string>();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Result {
  perSec: number;
  p50: number;
  p99: number;
  max: number;
  lost: number;
  failed: number;
  /** The target's CPU over the measured window, % of one core. */
  cpuPct: number;
  /** Its busiest thread other than the main one over the window (the front's worker), % of one core. */
  threadPct: number;
  /** The main thread's time waiting for a core (runnable, not running) over the window, ms per second (Linux schedstat). */
  waitMsPerSec: number;
  /** The main thread's involuntary context switches per second (preempted while runnable). */
  preemptPerSec: number;
  /** The clients' process (this one) over the window, % of one core: near 100 the load generator, not the target, sets the latencies. */
  clientsCpuPct: number;
  /** The 1-minute load average as the run began. */
  load: number;
  /** Its latency samples, sorted (for the p99 of every run of a target pooled). */
  samples: number[];
}

/** The main thread of `pid`: ns waited on a run queue, and involuntary context switches so far. */
function mainSched(pid: number): { waitNs: number; preempted: number } {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ');
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  return { waitNs: Number(stat[1]), preempted: Number(/nonvoluntary_ctxt_switches:\s*(\d+)/.exec(status)?.[1] ?? NaN) };
}

/** CPU time (s) of each thread of `pid` other than the main one, by thread id (Linux /proc; ticks of 10 ms). */
function threadSeconds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    if (tid === String(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(f[11]) + Number(f[12])) / 100);
    } catch {
      // The thread ended.
    }
  }
  return out;
}

/**
 * The service on a fresh data directory (with an Enterprise key), following the simulator at
 * `venues` (the configuration override); resolves once every one of `ids` is subscribable.
 */
async function startHub(venues: unknown, ids: string[], children: ChildProcess[], bin: string): Promise<{ url: string; key: string; child: ChildProcess }> {
  const dir = mkdtempSync(join(tmpdir(), 'cb-fanout-live-'));
  dirs.push(dir);
  // The bench's clients share one key: the per-key subscription budget (websocket.keyIdsPerSecond,
  // 2,000 ids a second) would spread their 100,000 subscriptions over 50 s, and they wait 15 s for
  // their replies. The bench measures the fan-out, so the budget is set out of its reach.
  writeFileSync(join(dir, 'live.json'), JSON.stringify({ venues, websocket: { keyIdsPerSecond: 1e9, keyIdsBurst: 1e9 }, ...CONFIG }));
  const key = execFileSync(process.execPath, [bin, 'keys', 'create', '--plan', 'enterprise', '--data-dir', dir], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const port = 18_000 + Math.floor(Math.random() * 1000);
  const probe = PROBE ? ['--import', join(here, 'loop-probe.js')] : [];
  const start = npmStartOf(bin);
  const args = [
    ...start.nodeArgs,
    ...NODE_ARGS,
    ...probe,
    ...(PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : []),
    bin,
    'serve',
    '--port',
    String(port),
    '--data-dir',
    dir,
  ];
  const probeOut = join(PROBE_DIR ?? dir, `probe-${dirs.length}.jsonl`);
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', NODE_ARGS.includes('--trace-gc') ? 'inherit' : 'ignore', 'inherit'],
    env: { ...process.env, ...start.env, LOG_LEVEL: 'warn', CROSSBOOK_CONFIG: join(dir, 'live.json'), LOOP_PROBE_OUT: probeOut },
  });
  probes.set(child.pid!, probeOut);
  children.push(child);
  const url = `ws://127.0.0.1:${port}/api/v2/ws`;
  for (let i = 0; ; i++) {
    if (i > 600) throw new Error('the service did not accept the markets within 60 s');
    await sleep(100);
    if ((await accepted(url, key, ids)) === ids.length) return { url, key, child };
  }
}

/** The service's uWS port behind its front: the one other port the process listens on. */
function innerUrl(pid: number, publicUrl: string): string {
  const out = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
  const ports = out
    .split('\n')
    .filter((l) => l.includes(`pid=${pid},`))
    .map((l) => Number(/:(\d+)\s/.exec(l)?.[1]))
    .filter((p) => p > 0 && !publicUrl.includes(`:${p}/`));
  if (ports.length !== 1) throw new Error(`expected one inner port of the service, found ${ports.join(', ') || 'none'}`);
  return `ws://127.0.0.1:${ports[0]}/api/v2/ws`;
}

/** How many of `ids` a prices subscription accepts (0 while the service is not up). */
function accepted(url: string, key: string, ids: string[]): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { 'x-api-key': key } });
    const done = (n: number): void => {
      ws.terminate();
      resolve(n);
    };
    ws.on('error', () => done(0));
    ws.on('open', () => ws.send(JSON.stringify({ type: 'subscribe', channel: 'prices', market_ids: ids })));
    ws.on('message', (d: Buffer) => {
      const m = JSON.parse(d.toString()) as { type: string; market_ids?: string[] };
      if (m.type === 'subscribed') done(m.market_ids?.length ?? 0);
    });
  });
}

async function startBare(ep: SimEndpoints, children: ChildProcess[]): Promise<{ url: string; key: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(here, 'live-bare.js'), ep.rest, ep.ws!], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const [line] = await readUntil(child, () => true);
  return { url: `ws://127.0.0.1:${(JSON.parse(line!) as { port: number }).port}/api/v2/ws`, key: 'none', child };
}

/**
 * The clients' receive time, ms since the epoch, finer than `Date.now`'s whole ms: `performance.now()`
 * anchored at the instant `Date.now()` turns to its next ms. The stamp it is compared with (`recv_ts`)
 * is the server's `Date.now()`, the whole ms below the frame's arrival, so a latency read against it is
 * the true one plus that fraction, half a ms on average: half a ms is taken off, and p99 is read to a
 * tenth of a ms rather than to a whole one (at the bare loop's 9–10 ms, a whole ms was 0.1× of the ratio).
 */
function fineEpochNow(): () => number {
  const d0 = Date.now();
  let d = d0;
  while (d === d0) d = Date.now();
  const anchor = d - performance.now() - 0.5;
  return () => anchor + performance.now();
}

/** C clients × S markets on `url`, settled, then measured for SECONDS. */
async function measure(url: string, key: string, ids: string[], pid: number): Promise<Result> {
  const load = new WsLoad(url, key, 'prices', 'recv_ts', fineEpochNow());
  try {
    await load.grow(CLIENTS, (c) => Array.from({ length: SUBS }, (_, k) => ids[(c * 7 + k) % ids.length]!));
    if (load.failed > 0) throw new Error(`${load.failed} clients failed to subscribe: ${load.lastFailure}`);
    await sleep(2000);
    load.reset();
    const cpu0 = cpuSeconds(pid);
    const threads0 = threadSeconds(pid);
    const sched0 = mainSched(pid);
    const load1 = loadavg()[0]!;
    const own0 = process.cpuUsage();
    const probe = PROBE ? probes.get(pid) : undefined;
    if (probe) process.kill(pid, 'SIGUSR2');
    const t0 = Date.now();
    await sleep(SECONDS * 1000);
    if (probe) {
      process.kill(pid, 'SIGUSR2');
      for (let i = 0; i < 50 && !existsSync(probe); i++) await sleep(100);
      console.log(`  probe: ${readFileSync(probe, 'utf8').trim().split('\n').pop()}`);
    }
    const secs = (Date.now() - t0) / 1000;
    const cpuPct = ((cpuSeconds(pid) - cpu0) / secs) * 100;
    const own = process.cpuUsage(own0);
    const clientsCpuPct = (own.user + own.system) / 1e4 / secs;
    const sched = mainSched(pid);
    const waitMsPerSec = (sched.waitNs - sched0.waitNs) / 1e6 / secs;
    const preemptPerSec = (sched.preempted - sched0.preempted) / secs;
    let thread = 0;
    for (const [tid, s] of threadSeconds(pid)) thread = Math.max(thread, s - (threads0.get(tid) ?? 0));
    const { delivered, lost, failed, latencies } = load;
    const p99 = quantile(latencies, 0.99);
    const threadPct = (thread / secs) * 100;
    return {
      perSec: delivered / secs,
      p50: quantile(latencies, 0.5),
      p99,
      max: latencies[latencies.length - 1] ?? NaN,
      lost,
      failed,
      cpuPct,
      threadPct,
      waitMsPerSec,
      preemptPerSec,
      clientsCpuPct,
      load: load1,
      samples: latencies,
    };
  } finally {
    load.close();
  }
}

/** The median of `xs` (the mean of the middle two for an even count). */
function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * A target's p99 against the bare loop's: per pair, their median and spread (one pair's p99 moves
 * by a third between rounds, so one pair says little), and the p99 of every run's samples pooled.
 */
function summary(mode: string, rs: Result[], bare: Result[]): string {
  const ratios = rs.map((r, i) => r.p99 / bare[i]!.p99);
  const pooled = (xs: Result[]): number =>
    quantile(
      xs.flatMap((r) => r.samples),
      0.99,
    );
  return (
    `${mode}/bare p99 per pair: ${ratios.map((r) => `${r.toFixed(2)}×`).join(', ')}; median ${median(ratios).toFixed(2)}× ` +
    `(spread ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×; median p99 ${mode} ${ms(median(rs.map((r) => r.p99)))} ms, bare ${ms(median(bare.map((r) => r.p99)))} ms); ` +
    `pooled p99 ${mode} ${ms(pooled(rs))} ms / bare ${ms(pooled(bare))} ms = ${(pooled(rs) / pooled(bare)).toFixed(2)}×; lost: ${mode} ${rs.reduce((s, r) => s + r.lost, 0)}, bare ${bare.reduce((s, r) => s + r.lost, 0)}; ` +
    `main thread preempted (median) ${median(rs.map((r) => r.preemptPerSec)).toFixed(0)}/s, waiting for a core ${median(rs.map((r) => r.waitMsPerSec)).toFixed(0)} ms/s`
  );
}

/** A latency in ms as printed: to a hundredth (the clients read receive times finer than a ms). */
const ms = (x: number): string => x.toFixed(2);

/** CPU of the busiest thread other than the main one per delivered message, µs. */
const perMsg = (r: Result): number => (r.threadPct * 1e4) / r.perSec;

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(PROF ? 'SIGINT' : 'SIGKILL');
  await exited;
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  try {
    const eps = await startSim(children, RATE, 19_000 + Math.floor(Math.random() * 500) * 10);
    const venues = Object.fromEntries(Object.entries(eps).map(([label, ep]) => [label, { connection: { mode: 'live', ...ep } }]));
    const a = eps['venue_a']!;
    const page = (await (await fetch(`${a.rest}/markets?limit=1000`)).json()) as { markets: { ticker: string; status: string }[] };
    const ids = page.markets.filter((m) => m.status === 'active').map((m) => m.ticker);
    begin(
      'WebSocket fan-out under live ingest',
      `${CLIENTS} clients × ${SUBS} of ${ids.length} venue_a markets, simulator at ${RATE} ticks/s in its own process, ${SECONDS} s measured per run, ${PAIRS} alternating pairs; latency from the venue frame's arrival (recv_ts) to the client; ` +
        `the service as npm start runs it: ${startLine(NPM_START)} bin/crossbook.js serve` +
        (BASE_BIN ? `; base: ${startLine(npmStartOf(BASE_BIN))}` : ''),
    );
    const runs: Record<'hub' | 'base' | 'direct' | 'bare', Result[]> = { hub: [], base: [], direct: [], bare: [] };
    const modes = BASE_BIN ? (['bare', 'hub', 'base'] as const) : (['bare', 'hub'] as const);
    const report = (i: number, mode: string, r: Result): void =>
      console.log(
        `pair ${i + 1} ${mode}: ${Math.round(r.perSec).toLocaleString('en-US')} msgs/s, p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms, max ${ms(r.max)} ms, lost ${r.lost}, ` +
          `failed ${r.failed}, CPU ${Math.round(r.cpuPct)}% (busiest other thread ${r.threadPct.toFixed(1)}%, ${perMsg(r).toFixed(1)} µs per message), ` +
          `main thread waiting for a core ${r.waitMsPerSec.toFixed(0)} ms/s, preempted ${r.preemptPerSec.toFixed(0)}/s, clients' CPU ${Math.round(r.clientsCpuPct)}%, load ${r.load.toFixed(1)}`,
      );
    for (let i = 0; i < PAIRS; i++)
      for (const mode of i % 2 === 0 ? modes : [...modes].reverse()) {
        const t = mode === 'bare' ? await startBare(a, children) : await startHub(venues, ids, children, mode === 'base' ? BASE_BIN! : bin);
        await sleep(3000);
        const r = await measure(t.url, t.key, ids, t.child.pid!);
        runs[mode].push(r);
        report(i, mode, r);
        if (mode === 'hub' && DIRECT) {
          const d = await measure(innerUrl(t.child.pid!, t.url), t.key, ids, t.child.pid!);
          runs.direct.push(d);
          report(i, 'direct', d);
        }
        await stop(t.child);
      }
    console.log(
      `\n|  | msgs/s | p50 ms | p99 ms | max ms | lost | target CPU % | busiest other thread, µs per message |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
    );
    for (const mode of ['bare', 'hub', 'base', 'direct'] as const) {
      const rs = runs[mode];
      if (rs.length === 0) continue;
      const col = (f: (r: Result) => number): string => rs.map((r) => Math.round(f(r)).toLocaleString('en-US')).join(' / ');
      const lat = (f: (r: Result) => number): string => rs.map((r) => ms(f(r))).join(' / ');
      console.log(
        `| ${mode} | ${col((r) => r.perSec)} | ${lat((r) => r.p50)} | ${lat((r) => r.p99)} | ${lat((r) => r.max)} | ${col((r) => r.lost)} | ${col((r) => r.cpuPct)} | ${rs.map((r) => perMsg(r).toFixed(1)).join(' / ')} |`,
      );
    }
    const loads = runs.bare.map((r) => r.load);
    console.log(`\nload average at each pair's start: ${loads.map((l) => l.toFixed(1)).join(', ')}`);
    // Past one runnable task per core other processes take the cores in bursts that decide the p99 of
    // a run (bare's own p99 then swings tenfold between pairs): the ratios say nothing about the service.
    if (Math.max(...loads) > cpus().length)
      console.log(
        `load average above ${cpus().length} (the cores) in a pair: the p99 ratios below are the machine's, not the service's; repeat on a quiet machine`,
      );
    for (const mode of ['hub', 'base', 'direct'] as const) if (runs[mode].length) console.log(summary(mode, runs[mode], runs.bare));
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await sleep(300);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();
