import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EVENT_LOOP_RESOLUTION_MS } from '../server/routes/metrics.js';

/** The repository root, from this file in src/ (tests) or dist/src/ (built). */
export function projectRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, here.includes('/dist/') ? '../../..' : '../..');
}

/** The built CLI entry; `crossbook bench` runs the service the way a user does. */
const cli = (): string => join(projectRoot(), 'bin', 'crossbook.js');

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
}

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** utime + stime of a process, seconds (Linux /proc). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

export function rssMiB(pid: number, field: 'VmRSS' | 'RssAnon' = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
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

/** A crossbook service started for a run: its own DATA_DIR, loopback, the simulator at `ticksPerSecond`. */
export interface Target {
  readonly url: string;
  readonly api: string;
  /** An enterprise key (no rate limits, no connection caps) made for the run with `crossbook keys create`. */
  readonly key: string;
  readonly pid: number;
  readonly dataDir: string;
  sample(): Promise<ProcessSample>;
  stop(): Promise<void>;
}

export async function startTarget(o: {
  ticksPerSecond: number;
  seed?: number;
  log?: (s: string) => void;
  /** Extra environment for the service (configuration overrides such as CROSSBOOK__memory__recentTrades). */
  env?: Readonly<Record<string, string>>;
  /** Start on this DATA_DIR and leave it in place on stop (a restart measurement); default a fresh temporary one, removed on stop. */
  dataDir?: string;
  /** How long the service may take to listen (default 60 s; a large simulated world takes longer to generate). */
  startTimeoutMs?: number;
  /** Node options for the service process (e.g. --heapsnapshot-signal). */
  nodeArgs?: readonly string[];
}): Promise<Target> {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'crossbook-bench-'));
  const startMs = o.startTimeoutMs ?? 60_000;
  // BASE_URL is cleared: test runners (Vite) set it to '/', which the service would read as its public URL.
  const env = {
    ...process.env,
    BASE_URL: '',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SIM_RATE: String(o.ticksPerSecond),
    SIM_SEED: String(o.seed ?? 20261122),
    LOG_LEVEL: 'warn',
    ...o.env,
  };
  const child: ChildProcess = spawn(process.execPath, [...(o.nodeArgs ?? []), cli(), 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const kill = (): void => void child.kill('SIGKILL');
  process.once('exit', kill);
  const url = await new Promise<string>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`the service did not start within ${startMs / 1000} s`)), startMs);
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = /API:\s+(\S+)\/api\/v2/.exec(l);
      if (m) {
        clearTimeout(t);
        res(m[1]!);
      }
    });
    child.once('exit', (c) => rej(new Error(`the service exited (${c}) before it started`)));
  });
  const made = spawnSync(process.execPath, [cli(), 'keys', 'create', '--plan', 'enterprise', '--account', 'bench', '--data-dir', dataDir], {
    encoding: 'utf8',
    env,
  });
  const key = made.stdout.trim().split('\n').at(-1) ?? '';
  if (!key.startsWith('pmx_')) throw new Error(`could not create a bench key: ${made.stderr || made.stdout}`);
  const api = `${url}/api/v2`;
  // The server picks new keys up within half a second.
  for (let i = 0; i < 50; i++) {
    if ((await fetch(`${api}/markets?limit=1`, { headers: { 'x-api-key': key } })).status === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = child.pid!;
  let lastCpu = cpuSeconds(pid);
  let lastAt = performance.now();
  let lastPublished = NaN;
  const sample = async (): Promise<ProcessSample> => {
    const text = await (await fetch(`${api}/metrics`, { headers: { 'x-api-key': key } })).text();
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
  };
  await sample();
  return {
    url,
    api,
    key,
    pid,
    dataDir,
    sample,
    async stop() {
      process.off('exit', kill);
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const t = setTimeout(kill, 15_000);
        await gone;
        clearTimeout(t);
      }
      if (o.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
