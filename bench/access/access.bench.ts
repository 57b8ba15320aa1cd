/**
 * Cost of the access layer (issue 3 target: under 10% of throughput on a cached /status-sized
 * response). The same pre-built body is served by a bare route and by a route behind the whole
 * access layer, in a child process with the HTTP front off; autocannon drives each in turn
 * (alternating, best of 2 runs), and wrk too when it is installed (3 alternating rounds, medians),
 * since autocannon runs out of CPU before uWebSockets.js does on 2 cores. Each run also reads the
 * child's CPU time per request (/proc).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { begin, record, type Row } from '../lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONNECTIONS = 100;

/** User + system CPU time of a process so far, ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function startTarget(): Promise<{ port: number; key: string; bytes: number; pid: number; stop: () => void }> {
  const child = spawn(process.execPath, [join(here, 'target.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (c) => reject(new Error(`target exited ${c}`)));
  });
  const info = JSON.parse(line) as { port: number; key: string; bytes: number };
  return { ...info, pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

/** One autocannon run; `cpu` is the target's CPU time per request, µs. */
async function cannon(
  url: string,
  headers: Record<string, string>,
  pid: number,
): Promise<{ rps: number; p99: number; errors: number; non2xx: number; cpu: number }> {
  const cpu0 = cpuMs(pid);
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers, pipelining: 1 });
  const cpu = ((cpuMs(pid) - cpu0) * 1000) / r.requests.total;
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx, cpu };
}

/** One wrk run (undefined when wrk is not installed): req/s and the target's CPU time per request, µs. */
function wrk(url: string, key: string, pid: number): { rps: number; cpu: number } | undefined {
  const has = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  if (has.status !== 0) return undefined;
  const cpu0 = cpuMs(pid);
  const r = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '-H', `X-API-Key: ${key}`, url], { encoding: 'utf8' });
  const cpu = cpuMs(pid) - cpu0;
  const m = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
  const n = /(\d+) requests in/.exec(r.stdout);
  return m && n ? { rps: Number(m[1]), cpu: (cpu * 1000) / Number(n[1]) } : undefined;
}

const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;

begin('Access layer overhead', 'Throughput of a cached /status-sized JSON body with and without the access layer, same server process, same run.');
const t = await startTarget();
try {
  const base = `http://127.0.0.1:${t.port}`;
  const keyedUrl = `${base}/api/v2/cached?limit=20`;
  const ac = { bare: [] as Awaited<ReturnType<typeof cannon>>[], keyed: [] as Awaited<ReturnType<typeof cannon>>[] };
  for (let run = 0; run < 2; run++) {
    ac.bare.push(await cannon(`${base}/bare`, {}, t.pid));
    ac.keyed.push(await cannon(keyedUrl, { 'x-api-key': t.key }, t.pid));
  }
  const bad = [...ac.bare, ...ac.keyed].reduce((n, r) => n + r.errors + r.non2xx, 0);
  const acRow = (rs: typeof ac.bare): { rps: number; p99: number; cpu: number } => ({
    rps: Math.max(...rs.map((r) => r.rps)),
    p99: Math.max(...rs.map((r) => r.p99)),
    cpu: med(rs.map((r) => r.cpu)),
  });
  const rows: Row[] = [
    { label: 'bare route, autocannon', group: 'ac', baseline: true, ...acRow(ac.bare) },
    { label: 'access layer, autocannon', group: 'ac', ...acRow(ac.keyed) },
  ];
  // wrk, 3 alternating rounds, medians: it does not run out of CPU before uWS does, as autocannon can.
  const wb: { rps: number; cpu: number }[] = [];
  const wk: { rps: number; cpu: number }[] = [];
  for (let run = 0; run < 3; run++) {
    const x = wrk(`${base}/bare`, t.key, t.pid);
    const y = wrk(keyedUrl, t.key, t.pid);
    if (!x || !y) break;
    wb.push(x);
    wk.push(y);
  }
  if (wb.length > 0)
    rows.push(
      { label: 'bare route, wrk', group: 'wrk', baseline: true, rps: med(wb.map((r) => r.rps)), cpu: med(wb.map((r) => r.cpu)) },
      { label: 'access layer, wrk', group: 'wrk', rps: med(wk.map((r) => r.rps)), cpu: med(wk.map((r) => r.cpu)) },
    );
  const best = rows
    .filter((r) => !r['baseline'])
    .map((r) => {
      const base = rows.find((b) => b['baseline'] && b['group'] === r['group'])!;
      return (r['rps'] as number) / (base['rps'] as number);
    });
  const ratio = Math.min(...best);
  record(
    {
      title: `Cached ${t.bytes}-byte body, ${CONNECTIONS} connections, ${SECONDS} s per run`,
      columns: [
        { key: 'rps', title: 'req/s', digits: 0 },
        { key: 'p99', title: 'p99 ms', digits: 1 },
        { key: 'cpu', title: 'server CPU µs/request', digits: 1 },
      ],
      ratio: { metric: 'rps', title: 'vs bare' },
      target: { text: 'access layer costs under 10% of throughput (ratio ≥ 0.90)', met: ratio >= 0.9 },
      interpretation: `The access layer keeps ${(ratio * 100).toFixed(0)}% of the bare route's throughput${wb.length === 0 ? ' (wrk not installed: autocannon, which saturates a core of its own, bounds both figures)' : ''}. Both routes are served by the same process with the HTTP front off (uWS on the port); the CPU column is that process's user + system time per request (/proc), which depends less on the machine's load than req/s.`,
      notes: bad ? [`${bad} errors or non-2xx responses during the runs`] : [],
    },
    rows,
  );
} finally {
  t.stop();
}
