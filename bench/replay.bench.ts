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
 * The client reads the body on a raw socket into one buffer and only counts bytes (the count is the
 * end line's), so the figure is the server's; the two bodies are compared by SHA-256 (an untimed
 * read for (b)). Each read says the CPU per event of the service's main thread, of its other
 * threads (libuv's pool decompressing blocks) and of the client.
 * Env: REPLAY_RATE, REPLAY_SECONDS, REPLAY_RUNS (timed reads of (b)), REPLAY_PROF (a directory for
 * the service's CPU profile), REPLAY_BASE (the root of another built checkout, e.g. main's: its
 * service captures the same session beside this one's, and its cache is read in alternation with
 * this build's, the before of a before/after).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
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
/** The root of another built checkout (e.g. main's) whose service captures the same session beside this one's: the before of a before/after. */
const BASE = process.env['REPLAY_BASE'];
const baseBin = join(BASE ?? '.', 'bin/crossbook.js');
/** What to call the other build in the report (default: its path). */
const BASE_LABEL = process.env['REPLAY_BASE_LABEL'] ?? BASE;
// Waiting on the wall clock is right here: this is a bench driving processes, not the engine.
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `crossbook sim` at RATE: the venues' connection overrides from its banner. */
async function simVenues(children: ChildProcess[]): Promise<Record<string, unknown>> {
  const eps = await startSim(children, RATE, 21_000 + Math.floor(Math.random() * 400) * 10);
  return Object.fromEntries(Object.entries(eps).map(([v, ep]) => [v, { connection: { mode: 'live', ...ep } }]));
}

/** `crossbook serve` on `dir` (its config there); resolves once /health answers. */
async function serve(dir: string, children: ChildProcess[], prof?: string, cli = bin): Promise<{ port: number; child: ChildProcess }> {
  const port = 22_000 + Math.floor(Math.random() * 1000);
  const child = spawn(process.execPath, [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), cli, 'serve', '--port', String(port), '--data-dir', dir], {
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
  /** Bytes of NDJSON (the chunked framing left out). */
  readonly bytes: number;
  readonly sec: number;
  readonly sha?: string | undefined;
  /** CPU seconds the service used during the read (every thread; /proc ticks of 10 ms). */
  readonly cpu: number;
  /** Of which its main thread (the merge, the pump, uWS's writes) and the rest (libuv's pool: decompression; GC helpers). */
  readonly cpuMain: number;
  /** CPU seconds the client (this process) used. */
  readonly client: number;
}

/** CPU ticks of a process's main thread and of all its threads (Linux /proc). */
function ticks(pid: number): { main: number; all: number } {
  const of = (path: string): number => {
    const stat = readFileSync(path, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  };
  return { main: of(`/proc/${pid}/task/${pid}/stat`), all: of(`/proc/${pid}/stat`) };
}

/** Seconds of CPU this process used so far. */
const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/** The NDJSON of a chunked body, counted as it arrives: its bytes, its last 256 bytes, and whether the last chunk came. */
class ChunkedCounter {
  bytes = 0;
  done = false;
  tail = '';
  private state: 'head' | 'size' | 'data' | 'crlf' = 'head';
  private left = 0;
  private line = '';

  /** `hash`: told each piece of the body. */
  constructor(private readonly hash?: (b: Buffer) => void) {}

  push(c: Buffer): void {
    let i = 0;
    while (i < c.length && !this.done) {
      if (this.state === 'head') {
        this.line += c.toString('latin1', i, c.length);
        const at = this.line.indexOf('\r\n\r\n');
        if (at < 0) return;
        if (!this.line.startsWith('HTTP/1.1 200')) throw new Error(`GET /replay: ${this.line.slice(0, this.line.indexOf('\r\n'))}`);
        i = c.length - (this.line.length - at - 4);
        this.line = '';
        this.state = 'size';
      } else if (this.state === 'size') {
        const nl = c.indexOf(10, i);
        this.line += c.toString('latin1', i, nl < 0 ? c.length : nl);
        if (nl < 0) return;
        i = nl + 1;
        this.left = parseInt(this.line.trim(), 16);
        this.line = '';
        if (this.left === 0) this.done = true;
        this.state = 'data';
      } else if (this.state === 'data') {
        const n = Math.min(this.left, c.length - i);
        const piece = c.subarray(i, i + n);
        this.bytes += n;
        this.hash?.(piece);
        this.tail = (this.tail + piece.toString('latin1', Math.max(0, n - 256))).slice(-256);
        this.left -= n;
        i += n;
        if (this.left === 0) this.state = 'crlf';
      } else {
        const nl = c.indexOf(10, i);
        if (nl < 0) return;
        i = nl + 1;
        this.state = 'size';
      }
    }
  }
}

/**
 * One GET /replay on a raw socket that only counts the body (and hashes it when asked), so the
 * client costs little beside the server on the shared cores; the count is the end line's.
 */
function read(svc: { port: number; child: ChildProcess }, key: string, query: string, hash: boolean): Promise<Read> {
  const pid = svc.child.pid!;
  return new Promise((resolve, reject) => {
    const h = hash ? createHash('sha256') : undefined;
    const body = new ChunkedCounter(h && ((b) => h.update(b)));
    const c0 = ticks(pid);
    const u0 = ownCpu();
    const t0 = performance.now();
    // One read buffer for the whole body (net's onread): no allocation per read, so the client's GC stays out of the figure.
    const sock = connect({
      port: svc.port,
      host: '127.0.0.1',
      onread: {
        buffer: Buffer.allocUnsafe(1024 * 1024),
        callback: (n: number, buf: Uint8Array): boolean => {
          onData(Buffer.from(buf.buffer, buf.byteOffset, n));
          return true;
        },
      },
    });
    sock.on('error', reject);
    sock.write(`GET /api/v2/replay?${query} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${key}\r\n\r\n`);
    const onData = (c: Buffer): void => {
      try {
        body.push(c);
      } catch (e) {
        sock.destroy();
        reject(e as Error);
        return;
      }
      if (!body.done) return;
      const sec = (performance.now() - t0) / 1000;
      const c1 = ticks(pid);
      const client = ownCpu() - u0;
      sock.destroy();
      const end = JSON.parse(body.tail.trimEnd().split('\n').pop()!) as { type: string; count: number };
      if (end.type !== 'end') reject(new Error(`replay ended with ${JSON.stringify(end)}`));
      else
        resolve({ events: end.count, bytes: body.bytes, sec, sha: h?.digest('hex'), cpu: (c1.all - c0.all) / 100, cpuMain: (c1.main - c0.main) / 100, client });
    };
  });
}

/** Bytes of the normalized cache's files under a DATA_DIR. */
function cacheBytes(dir: string): number {
  let n = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const q = join(d, e.name);
      if (e.isDirectory()) walk(q);
      else n += statSync(q).size;
    }
  };
  walk(join(dir, 'capture', '_norm'));
  return n;
}

/** A DATA_DIR for one build: its config, and an enterprise key made by that build. */
function dataDir(venues: Record<string, unknown>, cli: string): { dir: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cb-replay-bench-'));
  writeFileSync(join(dir, 'live.json'), JSON.stringify({ venues, capture: { replayCache: true } }));
  const key = execFileSync(process.execPath, [cli, 'keys', 'create', '--plan', 'enterprise', '--data-dir', dir], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  return { dir, key };
}

const median = (rs: readonly Read[]): Read => [...rs].sort((a, b) => a.sec - b.sec)[Math.floor(rs.length / 2)]!;
const perEvent = (r: Read): Row => ({
  events: r.events,
  sec: r.sec,
  rate: r.events / r.sec,
  mb: mib(r.bytes),
  cpuRate: r.events / r.cpu,
  mainNs: (r.cpuMain / r.events) * 1e9,
  offNs: ((r.cpu - r.cpuMain) / r.events) * 1e9,
  clientNs: (r.client / r.events) * 1e9,
  label: '',
});

begin(
  'Replay from the capture',
  `GET /api/v2/replay over HTTP on the real service, on a session it captured from the simulator in its own process (all eight venues live, ${RATE.toLocaleString('en-US')} book changes per second, ${SECONDS} s): the window mapped again from the captured frames (a restarted service) against the same window from the normalized cache (src/capture/normcache.ts), in one run${BASE ? `; and the cache of another build (${BASE_LABEL}), a service that captured the same simulator session beside it, read in alternation with this build's` : ''}.`,
);
const children: ChildProcess[] = [];
const dirs: string[] = [];
try {
  const venues = await simVenues(children);
  const mine = dataDir(venues, bin);
  dirs.push(mine.dir);
  const other = BASE === undefined ? undefined : dataDir(venues, baseBin);
  if (other) dirs.push(other.dir);
  const from = Date.now() - 1000;
  let svc = await serve(mine.dir, children, PROF);
  const baseSvc = other && (await serve(other.dir, children, undefined, baseBin));
  await sleep(SECONDS * 1000);
  // The session ends: the simulator stops, so what the services then do is the replay.
  await stop(children[0]!);
  const to = Date.now();
  const settled = await quiet(svc.child.pid!);
  if (baseSvc) await quiet(baseSvc.child.pid!);
  const q = `from=${from}&to=${to}`;
  const checked = await read(svc, mine.key, q, true);
  const cached: Read[] = [];
  const based: Read[] = [];
  // Alternated: this build first in even rounds, the other build first in odd ones.
  for (let i = 0; i < RUNS; i++) {
    if (baseSvc && i % 2 === 1) based.push(await read(baseSvc, other!.key, q, false));
    cached.push(await read(svc, mine.key, q, false));
    if (baseSvc && i % 2 === 0) based.push(await read(baseSvc, other!.key, q, false));
  }
  // A window from the middle of the run, also from the cache: the run's lines from there on.
  const mid = await read(svc, mine.key, `from=${Math.round((from + to) / 2)}&to=${to}`, false);
  if (baseSvc) await stop(baseSvc.child);
  await stop(svc.child);
  const onDisk = cacheBytes(mine.dir);
  const baseOnDisk = other && cacheBytes(other.dir);
  svc = await serve(mine.dir, children);
  await quiet(svc.child.pid!);
  const frames = await read(svc, mine.key, q, true);
  await stop(svc.child);
  const best = median(cached);
  const baseBest = based.length > 0 ? median(based) : undefined;
  const same = frames.sha === checked.sha && frames.events === checked.events;
  const rate = best.events / best.sec;
  const rows: Row[] = [
    { ...perEvent(frames), label: 'frames → live mappers → NDJSON (restarted service)', baseline: baseBest === undefined },
    ...(baseBest ? [{ ...perEvent(baseBest), label: `the other build's cache (median of ${RUNS})`, baseline: true }] : []),
    { ...perEvent(best), label: `normalized cache (median of ${RUNS})` },
    { ...perEvent(mid), label: 'normalized cache, the second half of the window (starts mid-run)' },
  ];
  const bpe = (bytes: number, events: number): string => (bytes / events).toFixed(1);
  record(
    {
      title: 'GET /api/v2/replay of a captured simulator session',
      columns: [
        { key: 'events', title: 'events' },
        { key: 'sec', title: 'seconds', digits: 3 },
        { key: 'rate', title: 'events/s' },
        { key: 'mb', title: 'NDJSON MiB', digits: 1 },
        { key: 'cpuRate', title: "events per CPU s of the service's process" },
        { key: 'mainNs', title: 'service main thread, CPU ns per event' },
        { key: 'offNs', title: 'its other threads, CPU ns per event' },
        { key: 'clientNs', title: 'client, CPU ns per event' },
      ],
      ratio: { metric: 'rate', title: baseBest ? "rate vs the other build's cache" : 'rate vs frames' },
      target: { text: `/replay ≥ 1,000,000 normalized events/s (measured ${Math.round(rate).toLocaleString('en-US')})`, met: rate >= 1_000_000 },
      interpretation: `The normalized cache streams ${Math.round(rate).toLocaleString('en-US')} events/s (${(mib(best.bytes) / best.sec).toFixed(0)} MiB/s of NDJSON), ${(rate / (frames.events / frames.sec)).toFixed(1)}× the frames path's ${Math.round(frames.events / frames.sec).toLocaleString('en-US')} events/s over the same window${baseBest ? ` and ${(rate / (baseBest.events / baseBest.sec)).toFixed(2)}× the other build's cache (${Math.round(baseBest.events / baseBest.sec).toLocaleString('en-US')} events/s)` : ''}; the two bodies of this build are ${same ? 'byte for byte the same (SHA-256)' : 'NOT the same'}. Timed reads of the cache: ${cached.map((c) => `${Math.round(c.events / c.sec).toLocaleString('en-US')}`).join(', ')} events/s${baseBest ? `; of the other build's: ${based.map((c) => `${Math.round(c.events / c.sec).toLocaleString('en-US')}`).join(', ')}` : ''}. The second half of the window, which starts mid-run, is served from the cache too (the run's lines from its start on): ${Math.round(mid.events / mid.sec).toLocaleString('en-US')} events/s. The cache on disk: ${onDisk.toLocaleString('en-US')} bytes, ${bpe(onDisk, checked.events)} bytes per event (${bpe(checked.bytes, checked.events)} of NDJSON)${baseOnDisk !== undefined && baseBest ? `; the other build's ${baseOnDisk.toLocaleString('en-US')} bytes, ${bpe(baseOnDisk, baseBest.events)} per event` : ''}.`,
      notes: [
        "The client (a raw socket in the bench process) parses the chunked framing and counts the body's bytes only; the cache reads it was timed on were not hashed, an untimed one was.",
        "CPU per event: the service's threads from /proc during the read (ticks of 10 ms): its main thread (the pump, uWS's writes and the kernel's send path; where the cache is read on the main thread, as before branch `replay1m`, also the block reads, decompression's buffers and the merge) and the others (the cache's read thread where there is one: blocks read, checksums, the merge, the ring; libuv's pool: decompression; V8's GC helpers); the client's from process.cpuUsage. Events per CPU s: the read's events over the CPU of all the service's threads, a figure the machine's load moves less than the wall rate.",
        `The service captured with its background work on (the history index following the capture on its thread, writing the normalized cache there); after the simulator stopped, the reads waited until the service used under 10% of a core (${settled.toFixed(0)} s), and the restarted one likewise.`,
      ],
    },
    rows,
  );
  if (!same) process.exitCode = 1;
} finally {
  for (const c of children) await stop(c);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
