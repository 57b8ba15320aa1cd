import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HopProbe } from './hop-probe.js';
import { processSampler, type CpuRss } from './proc.js';
import type { Profile } from './profiles.js';
import { machineInfo, type BenchReport, type StepResult, type WsFigures } from './report.js';
import { runAutocannon, type RestResult } from './rest-load.js';
import { fillPaths, judgeStep, marketPool } from './run.js';
import { startSimProcess, type SimProcess } from './sim-process.js';
import type { Topology } from './topology-spec.js';
import { createKey, keyWorks, startServe, stopOnSignal, type ProcessSample, type ServeProcess } from './target.js';
import { quantile, WsLoad } from './ws-load.js';

/** The nats-server binary on PATH or where Debian's package puts it, or undefined. */
export function natsServerBin(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v nats-server || ls /usr/sbin/nats-server 2>/dev/null'], { encoding: 'utf8' });
  const p = r.stdout.trim().split('\n')[0];
  return p ? p : undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no free port'))));
    });
  });
}

/** A nats-server with JetStream for one topology run: loopback, a free port, its store in `dir`. */
interface NatsProcess {
  readonly url: string;
  readonly pid: number;
  sample(): CpuRss;
  stop(): Promise<void>;
}

async function startNats(bin: string, dir: string): Promise<NatsProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(bin, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  const kill = (): void => void child.kill('SIGKILL');
  process.once('exit', kill);
  await new Promise<void>((resolve, reject) => {
    let err = '';
    const t = setTimeout(() => reject(new Error(`nats-server did not start within 15 s: ${err}`)), 15_000);
    child.stderr!.on('data', (d: Buffer) => {
      if (err.length < 10_000) err += d.toString();
      if (err.includes('Server is ready')) {
        clearTimeout(t);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`nats-server exited (${code}): ${err}`)));
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid!,
    sample: processSampler(child.pid!),
    async stop() {
      process.off('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/** A server clients are spread over: the single process, or an edge. */
interface Server {
  readonly serve: ServeProcess;
  readonly key: string;
}

/** The processes of one topology, started in order: simulator, NATS, core (or the single process), edges. */
interface Deployment {
  readonly sim: SimProcess;
  readonly nats: NatsProcess | undefined;
  readonly core: Server;
  readonly edges: readonly Server[];
  /** Where clients go: the edges, or the single process. */
  readonly servers: readonly Server[];
  readonly pids: readonly number[];
  stop(): Promise<void>;
}

/** A key an edge accepts: the core's when keys reach the edges, else one made on the edge's DATA_DIR. */
async function edgeKey(serve: ServeProcess, coreKey: string, dataDir: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (await keyWorks(serve.api, coreKey, 3000)) return coreKey;
  const key = createKey(dataDir, env);
  if (!(await keyWorks(serve.api, key))) throw new Error(`edge ${serve.url} accepts neither the core's key nor its own`);
  return key;
}

async function deploy(t: Topology, p: Profile, natsBin: string | undefined, log: (s: string) => void): Promise<Deployment> {
  const root = mkdtempSync(join(tmpdir(), `crossbook-topology-${t.name.replace('+', '')}-`));
  const dir = (name: string): string => mkdtempSync(join(root, `${name}-`));
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    BASE_URL: '',
    PORT: '0',
    HOST: '127.0.0.1',
    SIM_RATE: String(p.ticksPerSecond),
    SIM_SEED: '20261122',
    LOG_LEVEL: 'warn',
  };
  const started: { stop(): Promise<void> }[] = [];
  const pids: number[] = [];
  const stop = async (): Promise<void> => {
    for (const s of started.reverse()) await s.stop().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const sim = await startSimProcess({ env: { ...base, DATA_DIR: dir('sim') }, dir: root, startTimeoutMs: 120_000 });
    started.push(sim);
    pids.push(sim.pid);
    const env = { ...base, CROSSBOOK_CONFIG: sim.configFile };
    const nats = t.edges > 0 ? await startNats(natsBin!, dir('nats')) : undefined;
    if (nats) {
      started.push(nats);
      pids.push(nats.pid);
    }
    const coreDir = dir('core');
    const coreEnv = { ...env, DATA_DIR: coreDir };
    const role = nats ? ['--role', 'core', '--nats', nats.url] : [];
    const coreServe = await startServe({ args: role, env: coreEnv, startTimeoutMs: 120_000 });
    started.push(coreServe);
    pids.push(coreServe.pid);
    const core = { serve: coreServe, key: createKey(coreDir, coreEnv) };
    await keyWorks(coreServe.api, core.key);
    const edges: Server[] = [];
    for (let i = 0; i < t.edges; i++) {
      const edgeDir = dir(`edge${i + 1}`);
      const edgeEnv = { ...env, DATA_DIR: edgeDir };
      const serve = await startServe({ args: ['--role', 'edge', '--nats', nats!.url], env: edgeEnv, startTimeoutMs: 120_000 });
      started.push(serve);
      pids.push(serve.pid);
      edges.push({ serve, key: await edgeKey(serve, core.key, edgeDir, edgeEnv) });
    }
    log(
      `  ${t.name}: simulator pid ${sim.pid}${nats ? `, nats-server pid ${nats.pid} (${nats.url})` : ''}, ${nats ? 'core' : 'service'} ${coreServe.url}${edges.map((e, i) => `, edge ${i + 1} ${e.serve.url}`).join('')}`,
    );
    return { sim, nats, core, edges, servers: edges.length ? edges : [core], pids, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The processes' figures of one step. */
export interface ProcessFigures extends CpuRss {
  /** `simulator`, `nats-server`, `single`, `core`, `edge 1`, … */
  readonly name: string;
}

/** One load step of a topology. */
export interface TopologyStep extends StepResult {
  readonly processes: readonly ProcessFigures[];
  /** CPU of every crossbook process (core or single, and the edges), % of one core. */
  readonly crossbookCpuPct: number;
  /** Edge arrival − core arrival of the same update, ms (core + edges only). */
  readonly hop: { readonly p50: number; readonly p99: number; readonly paired: number } | undefined;
}

/** What one topology carried. */
export interface TopologyResult {
  readonly topology: Topology;
  readonly steps: readonly TopologyStep[];
  /** Why it was not run, when it was not. */
  readonly skipped?: string;
  /** Why it stopped before its steps ended or broke an objective (a process stopped answering), with the steps it did. */
  readonly failed?: string;
}

/** What `crossbook bench --topology` reports. */
export interface TopologyReport {
  readonly profileName: string;
  readonly profile: Profile;
  readonly machine: BenchReport['machine'];
  readonly command: string;
  readonly durationSec: number;
  readonly results: readonly TopologyResult[];
  readonly pids: readonly number[];
}

/** Client counts per server: `total` dealt round-robin over `n` servers. */
export function share(total: number, n: number, i: number): number {
  return Math.floor(total / n) + (i < total % n ? 1 : 0);
}

/** REST load split over the servers (each autocannon on its own server, at once); rates add up, latencies are the worst server's. */
async function restOver(servers: readonly Server[], paths: string[], connections: number, seconds: number): Promise<RestResult | undefined> {
  const runs = servers.map((s, i) => ({ s, c: share(connections, servers.length, i) })).filter((x) => x.c > 0);
  if (runs.length === 0) return undefined;
  const rs = await Promise.all(runs.map((x) => runAutocannon(x.s.serve.url, paths, x.s.key, x.c, seconds)));
  const sum = (f: (r: RestResult) => number): number => rs.reduce((a, r) => a + f(r), 0);
  const max = (f: (r: RestResult) => number): number => Math.max(...rs.map(f));
  return {
    client: 'autocannon',
    rps: sum((r) => r.rps),
    requests: sum((r) => r.requests),
    errors: sum((r) => r.errors),
    p50: max((r) => r.p50),
    p99: max((r) => r.p99),
    max: max((r) => r.max),
    clientCpuPct: max((r) => r.clientCpuPct),
  };
}

/** One measured window over every server's clients and REST connections. */
async function measure(
  loads: readonly WsLoad[],
  servers: readonly Server[],
  step: Profile['steps'][number],
  paths: string[],
  seconds: number,
): Promise<{ ws: WsFigures; rest: RestResult | undefined; harnessCpuPct: number; seconds: number }> {
  for (const l of loads) l.reset();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const rest = step.rest > 0 ? await restOver(servers, paths, step.rest, seconds) : (await new Promise((r) => setTimeout(r, seconds * 1000)), undefined);
  const sec = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const lat = loads.flatMap((l) => l.latencies);
  const delivered = loads.reduce((a, l) => a + l.delivered, 0);
  const ws: WsFigures = {
    clients: step.clients,
    delivered,
    perSec: delivered / sec,
    p50: quantile(lat, 0.5),
    p99: quantile(lat, 0.99),
    max: lat.length ? lat[lat.length - 1]! : 0,
    lost: loads.reduce((a, l) => a + l.lost, 0),
    failed: loads.reduce((a, l) => a + l.failed, 0),
  };
  return { ws, rest, harnessCpuPct: ((cpu.user + cpu.system) / 1e6 / sec) * 100, seconds: sec };
}

/** Samples every process of the deployment; the service sample is the core's (or the single process's). */
async function sampleAll(d: Deployment): Promise<{ core: ProcessSample; processes: ProcessFigures[] }> {
  const answer = (s: Server, name: string): Promise<ProcessSample> =>
    s.serve.sample(s.key).catch((e: unknown) => {
      throw new Error(`the ${name} (${s.serve.url}) did not answer /metrics: ${(e as Error).message}`);
    });
  const core = await answer(d.core, d.nats ? 'core' : 'service');
  const edges = await Promise.all(d.edges.map((e, i) => answer(e, `edge ${i + 1}`)));
  const processes: ProcessFigures[] = [
    { name: 'simulator', ...d.sim.sample() },
    ...(d.nats ? [{ name: 'nats-server', ...d.nats.sample() }] : []),
    { name: d.nats ? 'core' : 'single', cpuPct: core.cpuPct, rssMiB: core.rssMiB },
    ...edges.map((e, i) => ({ name: `edge ${i + 1}`, cpuPct: e.cpuPct, rssMiB: e.rssMiB })),
  ];
  return { core, processes };
}

/** Steps one deployed topology's load up until an objective breaks (the profile's steps and objectives). */
async function stepTopology(t: Topology, d: Deployment, p: Profile, deadline: number, log: (s: string) => void, steps: TopologyStep[]): Promise<void> {
  const pool = await marketPool({ api: d.core.serve.api, key: d.core.key }, p.markets).catch((e: unknown) => {
    throw new Error(`the ${d.nats ? 'core' : 'service'} (${d.core.serve.url}) did not list its markets: ${(e as Error).message}`);
  });
  if (pool.ids.length === 0) throw new Error(`${t.name}: the service lists no markets`);
  const paths = fillPaths(p.restPaths, pool.ids, pool.book);
  const subsOf = (i: number): string[] => Array.from({ length: p.subscriptions }, (_, k) => pool.ids[(i * p.subscriptions + k) % pool.ids.length]!);
  const wsUrl = (s: Server): string => `${s.serve.url.replace('http', 'ws')}/api/v2/ws`;
  const loads = d.servers.map((s) => new WsLoad(wsUrl(s), s.key));
  const n = d.servers.length;
  const probe = d.edges.length
    ? await HopProbe.open(
        { ws: wsUrl(d.core), key: d.core.key },
        d.edges.map((e) => ({ ws: wsUrl(e), key: e.key })),
        pool.ids.slice(0, Math.min(20, pool.ids.length)),
      )
    : undefined;
  try {
    for (let i = 0; i < p.steps.length && Date.now() < deadline; i++) {
      const s = p.steps[i]!;
      await Promise.all(loads.map((l, j) => l.grow(share(s.clients, n, j), (k) => subsOf(k * n + j))));
      await new Promise((r) => setTimeout(r, 1000));
      await sampleAll(d);
      probe?.reset();
      const w = await measure(loads, d.servers, s, paths, p.stepSeconds);
      const { core, processes } = await sampleAll(d);
      const hop = probe?.figures();
      const crossbookCpuPct = processes.filter((x) => x.name !== 'simulator' && x.name !== 'nats-server').reduce((a, x) => a + x.cpuPct, 0);
      const r: TopologyStep = { ...judgeStep(p, i + 1, s, w, undefined, core), processes, crossbookCpuPct, hop };
      steps.push(r);
      log(
        `  ${t.name.padEnd(7)} step ${r.step}: ${s.clients} clients, ${s.rest} REST → ${Math.round(w.ws.perSec)} msgs/s, WS p50/p99 ${w.ws.p50}/${w.ws.p99} ms, REST ${w.rest ? `${Math.round(w.rest.rps)} req/s p99 ${w.rest.p99} ms` : '–'}${hop ? `, NATS hop p50/p99 ${hop.p50.toFixed(1)}/${hop.p99.toFixed(1)} ms (${hop.paired} pairs)` : ''}, CPU ${processes.map((x) => `${x.name} ${Math.round(x.cpuPct)}%`).join(' ')}: ${r.ok ? 'met' : r.broken.join('; ')}`,
      );
      if (!r.ok) break;
    }
  } finally {
    probe?.close();
    for (const l of loads) l.close();
  }
}

/**
 * `crossbook bench --topology single,core+1,core+2`: for each topology in turn, starts the simulator
 * (`crossbook sim`), nats-server and a core and its edges (`crossbook serve --role …`, as an operator
 * would), spreads the profile's WebSocket clients and REST connections over the serving processes
 * and steps the load up until an objective breaks. Topologies that need NATS are skipped, and
 * said so, when nats-server is not installed. Stops everything it started, also on error and SIGINT.
 */
export async function runTopologies(o: {
  readonly profileName: string;
  readonly profile: Profile;
  readonly topologies: readonly Topology[];
  readonly maxMinutes: number;
  readonly command: string;
  readonly log: (line: string) => void;
}): Promise<TopologyReport> {
  const t0 = performance.now();
  const machine = machineInfo();
  const bin = natsServerBin();
  const results: TopologyResult[] = [];
  const pids: number[] = [];
  o.log(
    `crossbook bench --topology: profile ${o.profileName} (${o.profile.ticksPerSecond} ticks/s, SLO p99 ≤ ${o.profile.slo.p99Ms} ms), ${o.topologies.map((t) => t.name).join(', ')}`,
  );
  for (const t of o.topologies) {
    if (t.edges > 0 && !bin) {
      const why = 'nats-server is not installed (Debian: apt-get install nats-server)';
      o.log(`  ${t.name}: skipped: ${why}`);
      results.push({ topology: t, steps: [], skipped: why });
      continue;
    }
    const d = await deploy(t, o.profile, bin, o.log);
    pids.push(...d.pids);
    const off = stopOnSignal(d.stop);
    const steps: TopologyStep[] = [];
    try {
      await new Promise((r) => setTimeout(r, 3000));
      await stepTopology(t, d, o.profile, Date.now() + o.maxMinutes * 60_000, o.log, steps);
      results.push({ topology: t, steps });
    } catch (e) {
      // A process that stops answering under load is a result too; the next topology still runs.
      const failed = (e as Error).message;
      o.log(`  ${t.name}: stopped after ${steps.length} step(s): ${failed}`);
      results.push({ topology: t, steps, failed });
    } finally {
      off();
      await d.stop();
    }
  }
  return {
    profileName: o.profileName,
    profile: o.profile,
    machine,
    command: o.command,
    durationSec: (performance.now() - t0) / 1000,
    results,
    pids,
  };
}
