/**
 * REST under live ingest (issue 18): the service started as `npm start` starts it (`crossbook serve`,
 * embedded simulator at its default rate, every consumer attached) in its own process, against a
 * bare uWebSockets.js route serving the same bytes (bare-target.ts, its own process), with wrk
 * (-t1 -c100), alternating pairs in one run. Also the service's uWS port directly (behind the
 * front), to tell the front's share from the routes'.
 *
 * Env: LIVE_PAIRS (3), LIVE_SECONDS (5), LIVE_PATH (`/api/v2/markets?limit=50`), LIVE_WARM_MS
 * (5000, the simulator's start-up). Results are printed, not written: BENCHMARKS.md quotes them.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { begin, repoRoot } from '../lib.js';

const PAIRS = Number(process.env['LIVE_PAIRS'] ?? 3);
const SECONDS = Number(process.env['LIVE_SECONDS'] ?? 5);
const PATH = process.env['LIVE_PATH'] ?? '/api/v2/markets?limit=50';
const WARM_MS = Number(process.env['LIVE_WARM_MS'] ?? 5000);
const bin = join(repoRoot(), 'bin/crossbook.js');

/** Requests per second and p99 (ms) of one wrk run. */
function wrk(url: string, key?: string): { rps: number; p99: number; errors: number } {
  const args = ['-t1', '-c100', `-d${SECONDS}s`, '--latency', ...(key ? ['-H', `X-API-Key: ${key}`] : []), url];
  const out = execFileSync('wrk', args, { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const m = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const p99 = m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return { rps, p99, errors: non2xx + (sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0) };
}

/** The TCP ports a process listens on. */
function listening(pid: number): number[] {
  const out = execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((l) => l.includes(`pid=${pid},`))
    .map((l) => Number(/:(\d+)\s/.exec(l)?.[1]))
    .filter((p) => p > 0);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cb-live-'));
  const children: ChildProcess[] = [];
  try {
    const key = execFileSync(process.execPath, [bin, 'keys', 'create', '--plan', 'enterprise', '--data-dir', dir], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop()!;
    const port = 18_000 + Math.floor(Math.random() * 1000);
    const svc = spawn(process.execPath, [bin, 'serve', '--port', String(port), '--data-dir', dir], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    children.push(svc);
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      if (i > 300) throw new Error('the service did not answer /api/v2/status');
      const ok = await fetch(`${base}/api/v2/status`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, WARM_MS));
    const body = Buffer.from(await (await fetch(base + PATH, { headers: { 'X-API-Key': key } })).arrayBuffer());
    // uWS behind the front: the one other port of the process that serves the route (the embedded
    // simulator's venue servers listen too).
    let inner: number | undefined;
    for (const p of listening(svc.pid!))
      if (
        p !== port &&
        (await fetch(`http://127.0.0.1:${p}${PATH}`, { headers: { 'X-API-Key': key } }).then(
          (r) => r.ok,
          () => false,
        ))
      )
        inner = p;
    const bare = spawn(process.execPath, [join(repoRoot(), 'dist/bench/api/bare-target.js'), String(body.length)], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(bare);
    bare.stdin!.end(body);
    const barePort = Number(await new Promise<string>((resolve) => createInterface({ input: bare.stdout! }).once('line', resolve)));
    begin(`REST under live ingest: ${PATH}`, `${body.length} bytes; wrk -t1 -c100 -d${SECONDS}s, ${PAIRS} rounds alternating front / direct uWS / bare`);
    const runs: Record<string, { rps: number; p99: number; errors: number }[]> = { front: [], direct: [], bare: [] };
    for (let i = 0; i < PAIRS; i++) {
      runs['front']!.push(wrk(base + PATH, key));
      if (inner) runs['direct']!.push(wrk(`http://127.0.0.1:${inner}${PATH}`, key));
      runs['bare']!.push(wrk(`http://127.0.0.1:${barePort}/bare`));
    }
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
    const bareRps = med(runs['bare']!.map((r) => r.rps));
    const bareP99 = med(runs['bare']!.map((r) => r.p99));
    for (const [name, rs] of Object.entries(runs)) {
      if (!rs.length) continue;
      const rps = med(rs.map((r) => r.rps));
      const p99 = med(rs.map((r) => r.p99));
      const each = rs.map((r) => Math.round(r.rps).toLocaleString('en-US')).join(' / ');
      console.log(
        `${name}: ${Math.round(rps).toLocaleString('en-US')} req/s (${each}), p99 ${p99.toFixed(2)} ms, errors ${rs.reduce((a, r) => a + r.errors, 0)}; ` +
          `${(rps / bareRps).toFixed(2)}× bare req/s, p99 ${(p99 / bareP99).toFixed(2)}× bare`,
      );
    }
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
