/**
 * GET /api/v2/replay over HTTP on the real service (`crossbook serve`, built), on a session it
 * captured from the simulator (`crossbook sim` in its own process, all eight venues live at
 * REPLAY_RATE book changes per second for REPLAY_SECONDS). Two paths over the same window, in the
 * same run:
 *  (a) the frames path (baseline): the service restarted on the same DATA_DIR, so the window is
 *      from before its own capture run and every frame is mapped again by the live mappers;
 *  (b) the normalized cache (src/capture/normcache.ts): the service that captured the session,
 *      the window from its capture start, served by copying the cached lines; and once the second
 *      half of the window, which starts mid-run (served from the cache too).
 * The client reads the body with node:http and only counts bytes (the count is the end line's),
 * so the figure is the server's; the two bodies are compared by SHA-256 (an untimed read for (b)).
 * Env: REPLAY_RATE, REPLAY_SECONDS, REPLAY_RUNS (timed reads of (b)).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { begin, mib, record, repoRoot, type Row } from './lib.js';
import { startSim } from './sim-process.js';

const num = (name: string, def: number): number => Number(process.env[name] ?? def);
const RATE = num('REPLAY_RATE', 4000);
const SECONDS = num('REPLAY_SECONDS', 90);
const RUNS = num('REPLAY_RUNS', 3);
/** A directory for a CPU profile of the service that serves from the cache. */
const PROF = process.env['REPLAY_PROF'];
const bin = join(repoRoot(), 'bin/crossbook.js');
// Waiting on the wall clock is right here: this is a bench driving processes, not the engine.
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `crossbook sim` at RATE: the venues' connection overrides from its banner. */
async function simVenues(children: ChildProcess[]): Promise<Record<string, unknown>> {
  const eps = await startSim(children, RATE, 21_000 + Math.floor(Math.random() * 400) * 10);
  return Object.fromEntries(Object.entries(eps).map(([v, ep]) => [v, { connection: { mode: 'live', ...ep } }]));
}

/** `crossbook serve` on `dir` (its config there); resolves once /health answers. */
async function serve(dir: string, children: ChildProcess[], prof?: string): Promise<{ port: number; child: ChildProcess }> {
  const port = 22_000 + Math.floor(Math.random() * 1000);
  const child = spawn(process.execPath, [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), bin, 'serve', '--port', String(port), '--data-dir', dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, LOG_LEVEL: 'warn', CROSSBOOK_CONFIG: join(dir, 'live.json') },
  });
  children.push(child);
  for (let i = 0; ; i++) {
    if (i > 1200) throw new Error('the service did not answer within 120 s');
    await sleep(100);
    const up = await fetch(`http://127.0.0.1:${port}/api/v2/status`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (up) return { port, child };
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** CPU seconds of a process so far (Linux /proc; ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Waits (at most a minute) until the service's background work is done: under 10% of a core over two seconds. */
async function quiet(pid: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < 30; i++) {
    const c0 = cpuSeconds(pid);
    await sleep(2000);
    if (cpuSeconds(pid) - c0 < 0.2) break;
  }
  return (performance.now() - t0) / 1000;
}

interface Read {
  readonly events: number;
  readonly bytes: number;
  readonly sec: number;
  readonly sha?: string | undefined;
  /** CPU seconds the service used during the read (every thread; /proc ticks of 10 ms). */
  readonly cpu: number;
}

/** One GET /replay, the body counted (and hashed when asked); the count is the end line's. */
function read(svc: { port: number; child: ChildProcess }, key: string, query: string, hash: boolean): Promise<Read> {
  const port = svc.port;
  const pid = svc.child.pid!;
  return new Promise((resolve, reject) => {
    const c0 = cpuSeconds(pid);
    const t0 = performance.now();
    const h = hash ? createHash('sha256') : undefined;
    let bytes = 0;
    let tail = '';
    const req = request({ host: '127.0.0.1', port, path: `/api/v2/replay?${query}`, headers: { 'x-api-key': key } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET /replay: ${res.statusCode}`));
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        h?.update(c);
        tail = (tail + c.toString('latin1', Math.max(0, c.length - 200))).slice(-200);
      });
      res.on('end', () => {
        const sec = (performance.now() - t0) / 1000;
        const end = JSON.parse(tail.trimEnd().split('\n').pop()!) as { type: string; count: number };
        if (end.type !== 'end') reject(new Error(`replay ended with ${JSON.stringify(end)}`));
        else resolve({ events: end.count, bytes, sec, sha: h?.digest('hex'), cpu: cpuSeconds(pid) - c0 });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

begin(
  'Replay from the capture',
  `GET /api/v2/replay over HTTP on the real service, on a session it captured from the simulator in its own process (all eight venues live, ${RATE.toLocaleString('en-US')} book changes per second, ${SECONDS} s): the window mapped again from the captured frames (the baseline, a restarted service) against the same window from the normalized cache (src/capture/normcache.ts), in one run.`,
);
const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'cb-replay-bench-'));
try {
  const venues = await simVenues(children);
  writeFileSync(join(dir, 'live.json'), JSON.stringify({ venues, capture: { replayCache: true } }));
  const key = execFileSync(process.execPath, [bin, 'keys', 'create', '--plan', 'enterprise', '--data-dir', dir], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const from = Date.now() - 1000;
  let svc = await serve(dir, children, PROF);
  await sleep(SECONDS * 1000);
  // The session ends: the simulator stops, so what the service then does is the replay.
  await stop(children[0]!);
  const to = Date.now();
  const settled = await quiet(svc.child.pid!);
  const q = `from=${from}&to=${to}`;
  const checked = await read(svc, key, q, true);
  const cached: Read[] = [];
  for (let i = 0; i < RUNS; i++) cached.push(await read(svc, key, q, false));
  // A window from the middle of the run, also from the cache: the run's lines from there on.
  const mid = await read(svc, key, `from=${Math.round((from + to) / 2)}&to=${to}`, false);
  await stop(svc.child);
  svc = await serve(dir, children);
  await quiet(svc.child.pid!);
  const frames = await read(svc, key, q, true);
  await stop(svc.child);
  const best = [...cached].sort((a, b) => a.sec - b.sec)[Math.floor(cached.length / 2)]!;
  const same = frames.sha === checked.sha && frames.events === checked.events;
  const rate = best.events / best.sec;
  const rows: Row[] = [
    {
      label: 'frames → live mappers → NDJSON (restarted service)',
      baseline: true,
      events: frames.events,
      sec: frames.sec,
      rate: frames.events / frames.sec,
      mb: mib(frames.bytes),
      cpuRate: frames.events / frames.cpu,
    },
    { label: `normalized cache (median of ${RUNS})`, events: best.events, sec: best.sec, rate, mb: mib(best.bytes), cpuRate: best.events / best.cpu },
    {
      label: 'normalized cache, the second half of the window (starts mid-run)',
      events: mid.events,
      sec: mid.sec,
      rate: mid.events / mid.sec,
      mb: mib(mid.bytes),
      cpuRate: mid.events / mid.cpu,
    },
  ];
  record(
    {
      title: 'GET /api/v2/replay of a captured simulator session',
      columns: [
        { key: 'events', title: 'events' },
        { key: 'sec', title: 'seconds', digits: 3 },
        { key: 'rate', title: 'events/s' },
        { key: 'mb', title: 'NDJSON MiB', digits: 1 },
        { key: 'cpuRate', title: "events per CPU s of the service's process" },
      ],
      ratio: { metric: 'rate', title: 'rate vs frames' },
      target: { text: `/replay ≥ 1,000,000 normalized events/s (measured ${Math.round(rate).toLocaleString('en-US')})`, met: rate >= 1_000_000 },
      interpretation: `The normalized cache streams ${Math.round(rate).toLocaleString('en-US')} events/s (${(mib(best.bytes) / best.sec).toFixed(0)} MiB/s of NDJSON), ${(rate / (frames.events / frames.sec)).toFixed(1)}× the frames path's ${Math.round(frames.events / frames.sec).toLocaleString('en-US')} events/s over the same window; the two bodies are ${same ? 'byte for byte the same (SHA-256)' : 'NOT the same'}. Timed reads of the cache: ${cached.map((c) => `${Math.round(c.events / c.sec).toLocaleString('en-US')}`).join(', ')} events/s. The second half of the window, which starts mid-run, is served from the cache too (the run's lines from its start on): ${Math.round(mid.events / mid.sec).toLocaleString('en-US')} events/s.`,
      notes: [
        'The client (node:http in the bench process) counts bytes only; the cache reads it was timed on were not hashed, an untimed one was.',
        "Events per CPU s: the read's events over the CPU time the service's process used during it (all its threads, from /proc), a figure the machine's load moves less than the wall rate.",
        `The service captured with its background work on (the history index following the capture on its thread, writing the normalized cache there); after the simulator stopped, the reads waited until the service used under 10% of a core (${settled.toFixed(0)} s), and the restarted one likewise.`,
      ],
    },
    rows,
  );
  if (!same) process.exitCode = 1;
} finally {
  for (const c of children) await stop(c);
  rmSync(dir, { recursive: true, force: true });
}
