/**
 * REST under live ingest (issue 18): the service started as `npm start` starts it (`node
 * --heap-growing-percent=15 bin/crossbook.js serve`, embedded simulator at its default rate, every
 * consumer attached), in a process of its own per front: `default` (config/default.json's
 * `server.front`, off since issue 34: uWS on the public port), `guard` (the HTTP front) or `off`. Each endpoint is measured against a
 * bare uWebSockets.js route serving the same bytes to the same request (query string and key
 * header included; bare-target.ts, a process of its own), with
 * wrk (-t1 -c100), guard / off / bare in alternating rounds in one run. Endpoints: /markets?limit=50,
 * /prices/bulk with 100 ids, /orderbook of one market, /trades?limit=100, /prices/history and
 * /search (the longest word of a live title).
 *
 * Both services run at once, each with its own simulator, so every measurement (the bare ones too)
 * shares the machine with two live ingests.
 *
 * Env: LIVE_PAIRS (3), LIVE_SECONDS (5), LIVE_WARM_MS (5000, the simulator's start-up), LIVE_FRONTS
 * (`default`: the fronts to start, any of default, guard, off), LIVE_ONLY (substrings of the endpoint names to measure, comma-separated; all by default).
 * Besides req/s and p99, each run reports the serving process's CPU time per request (Linux /proc),
 * net of what the service spends in the 2 s before the endpoint's rounds with no request (its live
 * ingest): a figure that depends less on how loaded the shared machine is than req/s does.
 * LIVE_BASE_BIN (other builds' bin/crossbook.js, comma-separated) adds each build with the front off to the rounds.
 * The bare route's bytes are fetched from the first service as each endpoint's rounds begin, and
 * the size each service serves after them is printed beside them (`bytes:`).
 * Results are printed, not written: BENCHMARKS.md quotes them.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { begin, repoRoot } from '../lib.js';

const PAIRS = Number(process.env['LIVE_PAIRS'] ?? 3);
const SECONDS = Number(process.env['LIVE_SECONDS'] ?? 5);
const WARM_MS = Number(process.env['LIVE_WARM_MS'] ?? 5000);
const FRONTS = (process.env['LIVE_FRONTS'] ?? 'default').split(',').filter((f): f is Front => f === 'default' || f === 'guard' || f === 'off');
const ONLY = (process.env['LIVE_ONLY'] ?? '').split(',');
const IDLE_MS = 2000;
/** Other builds' bin/crossbook.js, each started with the front off beside this one (a before/after in one run). */
const BASE_BINS = (process.env['LIVE_BASE_BIN'] ?? '').split(',').filter(Boolean);
const bin = join(repoRoot(), 'bin/crossbook.js');

type Front = 'default' | 'guard' | 'off';

interface Run {
  readonly rps: number;
  readonly p99: number;
  readonly errors: number;
  readonly requests: number;
  /** CPU time of the serving process over the run (user + system), ms. */
  readonly cpuMs: number;
}

/** User + system CPU time of a process so far, ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Requests per second and p99 (ms) of one wrk run. */
function wrk(url: string, pid: number, key?: string): Run {
  const cpu0 = cpuMs(pid);
  const args = ['-t1', '-c100', `-d${SECONDS}s`, '--latency', ...(key ? ['-H', `X-API-Key: ${key}`] : []), url];
  const out = execFileSync('wrk', args, { encoding: 'utf8' });
  const cpu = cpuMs(pid) - cpu0;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const m = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const p99 = m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return { rps, p99, errors: non2xx + (sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0), requests, cpuMs: cpu };
}

/** A port nothing listens on now (the kernel's pick of an ephemeral one), for a service to take. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** A service in a process of its own, with its own data directory and enterprise key. */
interface Service {
  readonly base: string;
  readonly key: string;
  readonly pid: number;
}

async function startService(front: Front, children: ChildProcess[], dirs: string[], bin: string): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), `cb-live-${front}-`));
  dirs.push(dir);
  const key = execFileSync(process.execPath, [bin, 'keys', 'create', '--plan', 'enterprise', '--data-dir', dir], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
  if (front === 'default') delete env['CROSSBOOK__server__front'];
  else env['CROSSBOOK__server__front'] = front;
  const svc = spawn(process.execPath, ['--heap-growing-percent=15', bin, 'serve', '--port', String(port), '--data-dir', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  children.push(svc);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (svc.exitCode !== null) throw new Error(`the service (front ${front}, ${bin}) exited with code ${svc.exitCode}`);
    if (i > 300) throw new Error(`the service (front ${front}, ${bin}) did not answer /api/v2/status`);
    const ok = await fetch(`${base}/api/v2/status`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { base, key, pid: svc.pid! };
}

/** The measured paths: /markets, /prices/bulk over 100 priced markets, /orderbook of the deepest venue_a book among them, the latest trades, one market's history. */
async function paths(s: Service): Promise<Record<string, string>> {
  const get = async (path: string): Promise<unknown> => (await fetch(s.base + path, { headers: { 'X-API-Key': s.key } })).json();
  const page = (await get('/api/v2/markets?limit=400')) as { markets: { platform: string; market_id: string; title: string; yes_bid: number | null }[] };
  const priced = page.markets.filter((m) => m.yes_bid !== null);
  if (priced.length < 100) throw new Error(`only ${priced.length} priced markets to ask /prices/bulk for`);
  const ids = priced.slice(0, 100).map((m) => encodeURIComponent(`${m.platform}:${m.market_id}`));
  let book = '';
  let levels = -1;
  for (const m of priced.filter((x) => x.platform === 'venue_a').slice(0, 20)) {
    const q = `/api/v2/orderbook?platform=venue_a&market_id=${encodeURIComponent(m.market_id)}`;
    const b = (await get(q)) as { yes: { bids: unknown[]; asks: unknown[] } };
    if (b.yes.bids.length + b.yes.asks.length > levels) [book, levels] = [q, b.yes.bids.length + b.yes.asks.length];
  }
  // History of the first priced market since the service started, at one-minute candles (the live
  // service has minutes of history, not the static bench's year).
  const first = priced[0]!;
  const history = `/api/v2/prices/history?platform=${first.platform}&market_id=${encodeURIComponent(first.market_id)}&interval=1m`;
  // A /search term from a live title: its longest word (the static bench's fixed terms need its world).
  const term = first.title.split(/[^A-Za-z]+/).reduce((a, b) => (b.length > a.length ? b : a), '');
  return {
    '/markets?limit=50': '/api/v2/markets?limit=50',
    '/prices/bulk (100 ids)': `/api/v2/prices/bulk?ids=${ids.join(',')}`,
    '/orderbook': book,
    '/trades?limit=100': '/api/v2/trades?limit=100',
    '/prices/history (1m)': history,
    [`/search?q=${term}`]: `/api/v2/search?q=${encodeURIComponent(term)}`,
  };
}

/**
 * A service's answer to `path`, on a connection of its own (closed after): a keep-alive connection
 * kept by fetch's pool sits idle through wrk's rounds and is closed by the server under it.
 */
function bytesOf(s: Service, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = request(s.base + path, { headers: { 'X-API-Key': s.key }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${path}: status ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A bare uWS route answering `body`; resolves with its URL. */
async function bare(body: Buffer, children: ChildProcess[]): Promise<{ url: string; pid: number }> {
  const p = spawn(process.execPath, [join(repoRoot(), 'dist/bench/api/bare-target.js'), String(body.length)], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(p);
  p.stdin!.end(body);
  const port = Number(await new Promise<string>((resolve) => createInterface({ input: p.stdout! }).once('line', resolve)));
  return { url: `http://127.0.0.1:${port}/bare`, pid: p.pid! };
}

const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  try {
    const services = new Map<string, Service>();
    for (const f of FRONTS) services.set(f, await startService(f, children, dirs, bin));
    for (const [i, b] of BASE_BINS.entries())
      services.set(BASE_BINS.length > 1 ? `off (base ${i + 1})` : 'off (base)', await startService('off', children, dirs, b));
    const first = services.values().next().value;
    if (!first) throw new Error('LIVE_FRONTS names no front (default, guard, off)');
    await new Promise((r) => setTimeout(r, WARM_MS));
    const endpoints = Object.entries(await paths(first)).filter(([name]) => ONLY.some((o) => name.includes(o)));
    const load = [loadavg()[0]!];
    for (const [name, path] of endpoints) {
      // The bare route's bytes are the service's answer as the endpoint's rounds begin: a live page
      // grows after the warm-up, and /trades' bytes fetched before the first endpoint's rounds were
      // 13.5 KB (about 35 trades) while the service served 38 KB (its 100) during its own.
      const body = await bytesOf(first, path);
      const bareTarget = await bare(body, children);
      // The bare route gets the same request as the services: the query string (uWS routes /bare by
      // its path alone) and the key header, so the request bytes it reads and parses are the same.
      const bareUrl = bareTarget.url + (path.includes('?') ? path.slice(path.indexOf('?')) : '');
      const order = [...services.keys()].map((f) => `front ${f}`).join(' / ');
      begin(`REST under live ingest: ${name}`, `${body.length} bytes; wrk -t1 -c100 -d${SECONDS}s, ${PAIRS} rounds alternating ${order} / bare`);
      // What each service spends with no request (its ingest), to tell the requests' share of its CPU.
      const idle = new Map<string, number>([['bare', 0]]);
      const before = new Map([...services].map(([f, s]) => [f, cpuMs(s.pid)]));
      await new Promise((r) => setTimeout(r, IDLE_MS));
      for (const [f, s] of services) idle.set(f, (cpuMs(s.pid) - before.get(f)!) / IDLE_MS);
      const runs = new Map<string, Run[]>([...[...services.keys()].map((f): [string, Run[]] => [f, []]), ['bare', []]]);
      for (let i = 0; i < PAIRS; i++) {
        for (const [f, s] of services) runs.get(f)!.push(wrk(s.base + path, s.pid, s.key));
        runs.get('bare')!.push(wrk(bareUrl, bareTarget.pid, first.key));
        load.push(loadavg()[0]!);
      }
      const bareRuns = runs.get('bare')!;
      const bareRps = med(bareRuns.map((r) => r.rps));
      const bareP99 = med(bareRuns.map((r) => r.p99));
      const reqCpu = (mode: string, r: Run): number => ((r.cpuMs - idle.get(mode)! * SECONDS * 1000) * 1000) / r.requests;
      const bareCpu = med(bareRuns.map((r) => reqCpu('bare', r)));
      // What each served after its rounds, beside the bare route's bytes: whether the bytes compared
      // stayed the size the bare route serves (LIVE_ONLY=trades alone may start before its page is full).
      const after = await Promise.all([...services].map(async ([f, s]) => `${f} ${(await bytesOf(s, path)).length.toLocaleString('en-US')}`));
      console.log(`bytes: bare ${body.length.toLocaleString('en-US')}; after the rounds ${after.join(', ')}`);
      for (const [mode, rs] of runs) {
        const rps = med(rs.map((r) => r.rps));
        const p99 = med(rs.map((r) => r.p99));
        const cpu = med(rs.map((r) => reqCpu(mode, r)));
        const each = rs.map((r) => Math.round(r.rps).toLocaleString('en-US')).join(' / ');
        console.log(
          `${mode}: ${Math.round(rps).toLocaleString('en-US')} req/s (${each}), p99 ${p99.toFixed(2)} ms, errors ${rs.reduce((a, r) => a + r.errors, 0)}; ` +
            `${(rps / bareRps).toFixed(2)}× bare req/s, p99 ${(p99 / bareP99).toFixed(2)}× bare; ` +
            `CPU per request ${cpu.toFixed(1)} µs net of ${(idle.get(mode)! * 100).toFixed(0)}% idle ingest (${(cpu / bareCpu).toFixed(2)}× bare)`,
        );
      }
    }
    console.log(`load average (1 min) over the run: ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}`);
  } finally {
    // Each service writes what it holds as it stops: its data directory goes once it has exited
    // (removed under a running service, its disk check failed with ENOENT).
    await Promise.all(children.map((c) => exited(c)));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

/** Sends SIGTERM and resolves when the process has exited (SIGKILL after 60 s: a bench must end). */
function exited(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => c.kill('SIGKILL'), 60_000);
    c.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    c.kill('SIGTERM');
  });
}

await main();
