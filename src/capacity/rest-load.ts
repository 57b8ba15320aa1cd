import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';

export interface RestResult {
  readonly client: 'autocannon' | 'wrk';
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly requests: number;
  readonly errors: number;
  /** CPU the load generator itself used, % of one core: near 100 means the client, not the server, bounded the figure. */
  readonly clientCpuPct: number;
}

/** autocannon over `paths` (each connection walks them in turn) for `seconds`. */
export async function runAutocannon(base: string, paths: readonly string[], key: string, connections: number, seconds: number): Promise<RestResult> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await autocannon({
    url: base,
    connections,
    duration: seconds,
    headers: { 'x-api-key': key },
    requests: paths.map((p) => ({ method: 'GET' as const, path: p })),
  });
  const cpu = process.cpuUsage(cpu0);
  const sec = (performance.now() - t0) / 1000;
  return {
    client: 'autocannon',
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    requests: r.requests.total,
    errors: r.errors + r.non2xx + r.timeouts,
    clientCpuPct: ((cpu.user + cpu.system) / 1e6 / sec) * 100,
  };
}

export const hasWrk = (): boolean => spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).status === 0;

/** wrk on one URL (it needs a script for sequences; one path is what bounds the server). */
export function runWrk(url: string, key: string, connections: number, seconds: number): RestResult | undefined {
  const r = spawnSync('wrk', ['-t1', `-c${Math.max(1, connections)}`, `-d${Math.max(1, Math.round(seconds))}s`, '--latency', '-H', `X-API-Key: ${key}`, url], {
    encoding: 'utf8',
  });
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
  if (!rps) return undefined;
  const ms = (re: RegExp): number => {
    const m = re.exec(r.stdout);
    return m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  };
  const total = Number(/(\d+) requests in/.exec(r.stdout)?.[1] ?? 0);
  const errs = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(r.stdout);
  const sockErrs = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  // wrk runs in its own process: its CPU is not the harness's (NaN: not measured).
  return {
    client: 'wrk',
    rps: Number(rps[1]),
    p50: ms(/\s50%\s+([\d.]+)(us|ms|s)/),
    p99: ms(/\s99%\s+([\d.]+)(us|ms|s)/),
    max: ms(/Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)/),
    requests: total,
    errors: errs + sockErrs,
    clientCpuPct: NaN,
  };
}
