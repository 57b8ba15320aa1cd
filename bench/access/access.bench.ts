/**
 * Cost of the access layer (issue 3 target: under 10% of throughput on a cached /status-sized
 * response). The same pre-built body is served by a bare route and by a route behind the whole
 * access layer, in a child process; autocannon drives each in turn (alternating, best of runs),
 * and wrk too when it is installed, since autocannon runs out of CPU before uWebSockets.js does
 * on 2 cores.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { begin, record, type Row } from '../lib.js';

const here = dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const CONNECTIONS = 100;

async function startTarget(): Promise<{ port: number; key: string; bytes: number; stop: () => void }> {
  const child = spawn(process.execPath, [join(here, 'target.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (c) => reject(new Error(`target exited ${c}`)));
  });
  const info = JSON.parse(line) as { port: number; key: string; bytes: number };
  return { ...info, stop: () => child.kill('SIGKILL') };
}

async function cannon(url: string, headers: Record<string, string>): Promise<{ rps: number; p99: number; errors: number; non2xx: number }> {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers, pipelining: 1 });
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

function wrk(url: string, key: string): number | undefined {
  const has = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
  if (has.status !== 0) return undefined;
  const r = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '-H', `X-API-Key: ${key}`, url], { encoding: 'utf8' });
  const m = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
  return m ? Number(m[1]) : undefined;
}

begin('Access layer overhead', 'Throughput of a cached /status-sized JSON body with and without the access layer, same server process, same run.');
const t = await startTarget();
try {
  const base = `http://127.0.0.1:${t.port}`;
  const bare: number[] = [];
  const keyed: number[] = [];
  let bareP99 = 0;
  let keyedP99 = 0;
  let bad = 0;
  for (let run = 0; run < 2; run++) {
    const a = await cannon(`${base}/bare`, {});
    const b = await cannon(`${base}/api/v2/cached?limit=20`, { 'x-api-key': t.key });
    bare.push(a.rps);
    keyed.push(b.rps);
    bareP99 = Math.max(bareP99, a.p99);
    keyedP99 = Math.max(keyedP99, b.p99);
    bad += a.errors + a.non2xx + b.errors + b.non2xx;
  }
  const rows: Row[] = [
    { label: 'bare route, autocannon', group: 'ac', baseline: true, rps: Math.max(...bare), p99: bareP99 },
    { label: 'access layer, autocannon', group: 'ac', rps: Math.max(...keyed), p99: keyedP99 },
  ];
  const wb = wrk(`${base}/bare`, t.key);
  const wk = wrk(`${base}/api/v2/cached?limit=20`, t.key);
  if (wb !== undefined && wk !== undefined)
    rows.push({ label: 'bare route, wrk', group: 'wrk', baseline: true, rps: wb }, { label: 'access layer, wrk', group: 'wrk', rps: wk });
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
      ],
      ratio: { metric: 'rps', title: 'vs bare' },
      target: { text: 'access layer costs under 10% of throughput (ratio ≥ 0.90)', met: ratio >= 0.9 },
      interpretation: `The access layer keeps ${(ratio * 100).toFixed(0)}% of the bare route's throughput${wb === undefined ? ' (wrk not installed: autocannon, which saturates a core of its own, bounds both figures)' : ''}.`,
      notes: bad ? [`${bad} errors or non-2xx responses during the runs`] : [],
    },
    rows,
  );
} finally {
  t.stop();
}
