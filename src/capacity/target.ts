import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { EVENT_LOOP_RESOLUTION_MS } from '../server/routes/metrics.js';
import { cli, cpuSeconds, rssMiB, type CpuRss } from './proc.js';
import { startSimProcess, type SimProcess } from './sim-process.js';

export { cpuSeconds, projectRoot, rssMiB } from './proc.js';

/** What a step records of the service process. */
export interface ProcessSample {
  /** CPU used since the previous sample, % of one core. */
  readonly cpuPct: number;
  readonly rssMiB: number;
  /** The anonymous part of RSS (heap, native buffers); the rest is file pages, mostly LMDB's memory map, which grows with the data. */
  readonly rssAnonMiB: number;
  /** Event-loop delay p99 and max since the previous scrape (prom-client resets its histogram per scrape), ms, net of the sampling interval. */
  readonly lagP99Ms: number;
  readonly lagMaxMs: number;
  readonly heapMiB: number;
  /** V8 heap reserved (used + free pages) and memory held by C++ objects bound to JS (buffers), MiB. */
  readonly heapTotalMiB: number;
  readonly externalMiB: number;
  /** WebSocket messages published (once per topic, before fan-out) since the previous sample, per second. */
  readonly publishedPerSec: number;
  /** Wallet positions the ledger holds (bounded by signals.wallets.maxPositions). */
  readonly walletPositions: number;
  /** The simulator's own process over the same interval, when it runs outside the service. */
  readonly sim?: CpuRss;
}

/** A metric's value in a Prometheus text exposition (the unlabelled series, or the sum of labelled ones). */
export function metric(text: string, name: string): number {
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue;
    const v = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) {
      sum += v;
      found = true;
    }
  }
  return found ? sum : NaN;
}

/**
 * Runs `cleanup` (stop the service and load the run started) on SIGINT or SIGTERM, then exits 130.
 * Node runs no 'exit' handlers when a signal ends the process, so without this a Ctrl-C left the
 * service child running. Returns the function that removes the handlers (call it in `finally`).
 */
export function stopOnSignal(cleanup: () => Promise<unknown>): () => void {
  const on = (): void => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', on);
  process.once('SIGTERM', on);
  return () => {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  };
}

/** Where a run's venues come from: the service's embedded simulator, or `crossbook sim` in a process of its own. */
export type SimMode = 'embedded' | 'external';

/** A crossbook service started for a run: its own DATA_DIR, loopback, the simulator at `ticksPerSecond`. */
export interface Target {
  readonly url: string;
  readonly api: string;
  /** An enterprise key (no rate limits, no connection caps) made for the run with `crossbook keys create`. */
  readonly key: string;
  readonly pid: number;
  readonly dataDir: string;
  /** The `crossbook sim` process feeding the service, when the simulator runs outside it. */
  readonly simPid: number | undefined;
  sample(): Promise<ProcessSample>;
  stop(): Promise<void>;
}

/** The environment of every process a run starts (service, simulator, key tool). */
function runEnv(o: { ticksPerSecond: number; seed?: number; dataDir: string; env?: Readonly<Record<string, string>> }): NodeJS.ProcessEnv {
  // BASE_URL is cleared: test runners (Vite) set it to '/', which the service would read as its public URL.
  return {
    ...process.env,
    BASE_URL: '',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: o.dataDir,
    SIM_RATE: String(o.ticksPerSecond),
    SIM_SEED: String(o.seed ?? 20261122),
    LOG_LEVEL: 'warn',
    ...o.env,
  };
}

/** A `crossbook serve` child process that printed its API line. */
export interface ServeProcess {
  readonly url: string;
  readonly api: string;
  readonly pid: number;
  /** The service's figures since the previous call (CPU from /proc, the rest from /metrics with `key`). */
  sample(key: string): Promise<ProcessSample>;
  stop(): Promise<void>;
}

/** Starts `crossbook serve <args>` with `env` and waits for the line that gives its URL. */
export async function startServe(o: {
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  startTimeoutMs: number;
  nodeArgs?: readonly string[];
}): Promise<ServeProcess> {
  const child: ChildProcess = spawn(process.execPath, [...(o.nodeArgs ?? []), cli(), 'serve', ...o.args], { env: o.env, stdio: ['ignore', 'pipe', 'inherit'] });
  const kill = (): void => void child.kill('SIGKILL');
  process.once('exit', kill);
  const url = await new Promise<string>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`the service did not start within ${o.startTimeoutMs / 1000} s`)), o.startTimeoutMs);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = /API:\s+(\S+)\/api\/v2/.exec(l);
      if (m) {
        clearTimeout(t);
        res(m[1]!);
      }
    });
    child.once('exit', (c) => rej(new Error(`the service (serve ${o.args.join(' ')}) exited (${c}) before it started`)));
  }).catch((e: unknown) => {
    kill();
    process.off('exit', kill);
    throw e;
  });
  const api = `${url}/api/v2`;
  const pid = child.pid!;
  let lastCpu = cpuSeconds(pid);
  let lastAt = performance.now();
  let lastPublished = NaN;
  return {
    url,
    api,
    pid,
    async sample(key) {
      const text = await (await fetch(`${api}/metrics`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(30_000) })).text();
      const cpu = cpuSeconds(pid);
      const now = performance.now();
      const sec = (now - lastAt) / 1000;
      const published = metric(text, 'crossbook_ws_published_total');
      const s: ProcessSample = {
        cpuPct: ((cpu - lastCpu) / sec) * 100,
        rssMiB: rssMiB(pid),
        rssAnonMiB: rssMiB(pid, 'RssAnon'),
        lagP99Ms: Math.max(0, metric(text, 'nodejs_eventloop_lag_p99_seconds') * 1000 - EVENT_LOOP_RESOLUTION_MS),
        lagMaxMs: Math.max(0, metric(text, 'nodejs_eventloop_lag_max_seconds') * 1000 - EVENT_LOOP_RESOLUTION_MS),
        heapMiB: metric(text, 'nodejs_heap_size_used_bytes') / 1024 / 1024,
        heapTotalMiB: metric(text, 'nodejs_heap_size_total_bytes') / 1024 / 1024,
        externalMiB: metric(text, 'nodejs_external_memory_bytes') / 1024 / 1024,
        publishedPerSec: Number.isNaN(lastPublished) ? 0 : (published - lastPublished) / sec,
        walletPositions: metric(text, 'crossbook_wallet_positions'),
      };
      lastCpu = cpu;
      lastAt = now;
      lastPublished = published;
      return s;
    },
    async stop() {
      process.off('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(kill, 15_000);
      await gone;
      clearTimeout(t);
    },
  };
}

/** Makes an enterprise key on `dataDir` with `crossbook keys create` (what an operator runs). */
export function createKey(dataDir: string, env: NodeJS.ProcessEnv): string {
  const made = spawnSync(process.execPath, [cli(), 'keys', 'create', '--plan', 'enterprise', '--account', 'bench', '--data-dir', dataDir], {
    encoding: 'utf8',
    env,
  });
  const key = made.stdout.trim().split('\n').at(-1) ?? '';
  if (!key.startsWith('pmx_')) throw new Error(`could not create a bench key: ${made.stderr || made.stdout}`);
  return key;
}

/** Waits until `api` answers `key` (a server picks new keys up within half a second); false when it never did. */
export async function keyWorks(api: string, key: string, timeoutMs = 5000): Promise<boolean> {
  for (const until = Date.now() + timeoutMs; Date.now() < until;) {
    const ok = await fetch(`${api}/markets?limit=1`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/**
 * Starts the service for a run. `sim` 'embedded' (the default, how `npm start` runs) serves from
 * the service's own simulator; 'external' starts `crossbook sim` first and points the service at it
 * with the file `crossbook sim --config-out` writes, so the service's CPU is its own.
 */
export async function startTarget(o: {
  ticksPerSecond: number;
  seed?: number;
  log?: (s: string) => void;
  /** Extra environment for the service and the simulator (configuration overrides such as CROSSBOOK__sim__scale). */
  env?: Readonly<Record<string, string>>;
  /** Start on this DATA_DIR and leave it in place on stop (a restart measurement); default a fresh temporary one, removed on stop. */
  dataDir?: string;
  /** How long the service may take to listen (default 60 s; a large simulated world takes longer to generate). */
  startTimeoutMs?: number;
  /** Node options for the service process (e.g. --heapsnapshot-signal). */
  nodeArgs?: readonly string[];
  sim?: SimMode;
}): Promise<Target> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'crossbook-bench-'));
  const startTimeoutMs = o.startTimeoutMs ?? 60_000;
  let env = runEnv({ ...o, dataDir });
  let sim: SimProcess | undefined;
  let serve: ServeProcess | undefined;
  try {
    if (o.sim === 'external') {
      sim = await startSimProcess({ env, dir: dataDir, startTimeoutMs });
      env = { ...env, CROSSBOOK_CONFIG: sim.configFile };
    }
    serve = await startServe({ args: [], env, startTimeoutMs, ...(o.nodeArgs ? { nodeArgs: o.nodeArgs } : {}) });
    const key = createKey(dataDir, env);
    await keyWorks(serve.api, key);
    const svc = serve;
    const simNow = sim;
    const sample = async (): Promise<ProcessSample> => {
      const s = await svc.sample(key);
      return simNow ? { ...s, sim: simNow.sample() } : s;
    };
    await sample();
    return {
      url: svc.url,
      api: svc.api,
      key,
      pid: svc.pid,
      dataDir,
      simPid: simNow?.pid,
      sample,
      async stop() {
        await svc.stop();
        await simNow?.stop();
        if (o.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await serve?.stop();
    await sim?.stop();
    if (o.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
}
