/**
 * Full-pipeline replay against live ingest, like for like: the ingest bench's own workload
 * (bench/ingest-workload.ts: 100k Kalshi `orderbook_delta` frames over 10k markets, venue_b twins
 * that matching groups, WebSocket clients in a child process) through the service's path, and the
 * full-pipeline replay of the very frames it captured, at `--speed max`, in one process, alternated
 * per round:
 *  (a)      live, capture off: the ingest bench's path (a) (the feed runtime through every consumer);
 *  (cap)    live, capture on: the same with every frame appended to a capture log (the ingest
 *           bench's `cap`), timed until the capture is written; each round's on a DATA_DIR of its
 *           own, which starts with venue_b's pages and books as its feed records them, then the
 *           Kalshi session (catalog walk, snapshots, the deltas);
 *  (replay) what `crossbook replay --data-dir D --from F --to T --speed max --out O` runs
 *           (src/cli/replay.ts `replayCommandOptions` → src/replay/run.ts) on that DATA_DIR: F the
 *           first delta's receive time, T just after the last record.
 * As the command does, the replay reads the capture from its start (the catalog and snapshots warm it
 * up; nothing before F is written); its rate is timed from the first item at or after F to the last
 * item applied (main-thread CPU from /proc, whole-process CPU, wall), and the whole command's CPU is
 * reported beside it. Each replay is checked to end with the books live ended the (cap) run with.
 *
 * Env: INGEST_DELTAS, INGEST_MARKETS, INGEST_CLIENTS (the ingest bench's), REPLAY_PIPE_ROUNDS (timed
 * rounds after one warm-up round, default 3), REPLAY_PIPE_PROFILE=<file>: a CPU profile of the last
 * round's replay window (V8 inspector), for `.cpuprofile` viewers; REPLAY_PIPE_KEEP=<dir>: the last
 * round's capture log copied there, its window in window.json (to replay it with another build).
 */
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayCommandOptions } from '../src/cli/replay.js';
import { openCapture, type Capture } from '../src/capture/index.js';
import type { Config } from '../src/config/schema.js';
import { log } from '../src/core/log.js';
import { itemTime, type ReplayInput, type ReplayItem } from '../src/replay/input.js';
import { replay, type BookLine, type ReplayResult } from '../src/replay/run.js';
import { ask, CLIENTS, DELTAS, digest, MARKETS, startLive, SUBS, type Live, type World, world } from './ingest-workload.js';
import { begin, gc, mainThreadCpuMs, median, pairedRatio, record, type Row } from './lib.js';

const ROUNDS = Number(process.env['REPLAY_PIPE_ROUNDS'] ?? 3);
const PROFILE = process.env['REPLAY_PIPE_PROFILE'];
/** A directory to copy the last round's capture log to (with its window in window.json). */
const KEEP = process.env['REPLAY_PIPE_KEEP'];
/** The whole bench stops by itself after this long, whatever happens. */
const DEADLINE_MS = Number(process.env['REPLAY_PIPE_DEADLINE_S'] ?? 240) * 1000;

/** One timed run: what it did, and the main-thread CPU, whole-process CPU and wall time it took. */
interface Run {
  readonly ops: number;
  readonly cpuMs: number;
  readonly procMs: number;
  readonly wallMs: number;
}

/** A clock over the main thread's CPU, the whole process's and the wall. */
function stopwatch(): () => { cpuMs: number; procMs: number; wallMs: number } {
  const m0 = mainThreadCpuMs();
  const p0 = process.cpuUsage();
  const t0 = performance.now();
  return () => {
    const p = process.cpuUsage(p0);
    return { cpuMs: mainThreadCpuMs() - m0, procMs: (p.user + p.system) / 1e3, wallMs: performance.now() - t0 };
  };
}

/**
 * One live run of the workload's deltas, timed from the first frame to the last processed: capture
 * off, or appending every frame to `capture` (timed until it is written).
 */
async function liveRun(live: Live, capture?: Capture): Promise<Run & { from: number; to: number }> {
  await live.wire(capture ?? false);
  await capture?.flush();
  await ask(live.child, 'reset');
  gc();
  const from = live.clock.now();
  const stop = stopwatch();
  const ops = await live.push((b) => live.socket().frame(b));
  await capture?.flush();
  const t = stop();
  const to = live.clock.now() + 1;
  live.unwire();
  return { ops, ...t, from, to };
}

/**
 * The replay's input with a stopwatch around the window: started before the first item at or after
 * `from` is handed on (a batch is cut there), stopped when the replay asks past the last item.
 */
async function* timedWindow(items: ReplayInput, from: number, on: { start(): void; end(): void }): AsyncGenerator<ReplayItem | readonly ReplayItem[]> {
  let started = false;
  for await (const v of items) {
    const batch: readonly ReplayItem[] = Array.isArray(v) ? (v as readonly ReplayItem[]) : [v as ReplayItem];
    const cut = started ? -1 : batch.findIndex((it) => itemTime(it) >= from);
    if (cut < 0) {
      yield v;
      continue;
    }
    if (cut > 0) yield batch.slice(0, cut);
    started = true;
    on.start();
    yield cut > 0 ? batch.slice(cut) : v;
  }
  on.end();
}

/** Top 10 levels of the Kalshi books a replay ended with, as `digest` gives live's. */
function replayDigest(books: readonly BookLine[], venue: string, tickers: readonly string[]): string {
  const l = (x: readonly (readonly [number, number])[]): string =>
    x
      .slice(0, 10)
      .map((v) => `${v[0]}x${v[1]}`)
      .join(',');
  const of = new Map(books.filter((b) => b.venue === venue).map((b) => [b.instrument, b]));
  return tickers
    .map((t) => {
      const b = of.get(t);
      return b ? `${t}|${l(b.bids)}|${l(b.asks)}` : `${t}|missing`;
    })
    .join('\n');
}

/** `crossbook replay --data-dir dataDir` of [from, to), its window timed; the whole command's CPU too. */
async function replayRun(
  config: Config,
  dataDir: string,
  from: number,
  to: number,
  profiler: Session | undefined,
): Promise<Run & { result: ReplayResult; wholeMs: number }> {
  const out = mkdtempSync(join(tmpdir(), 'cb-replay-pipe-out-'));
  const quiet = log.child({});
  let window: ReturnType<typeof stopwatch> | undefined;
  let t: { cpuMs: number; procMs: number; wallMs: number } | undefined;
  try {
    gc();
    const whole = stopwatch();
    const opts = replayCommandOptions({ ...config, dataDir }, { out, from: String(from), to: String(to), speed: 'max' }, quiet);
    const items = timedWindow(opts.items, from, {
      start: () => {
        if (profiler) void profiler.post('Profiler.start');
        window = stopwatch();
      },
      end: () => (t = window?.()),
    });
    const result = await replay({ ...opts, items });
    const wholeMs = whole().cpuMs;
    if (profiler) writeFileSync(PROFILE!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    if (t === undefined) throw new Error('the replay never reached its window');
    return { ops: DELTAS, ...t, result, wholeMs };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * The capture-on run of a round into a capture log of its own (a service whose capture starts with
 * this run: venue_b's pages and books first, as its feed records them on connecting, then the Kalshi
 * session), and the replay of its window from that log; the log is removed after.
 */
async function captureAndReplay(live: Live, profiler: Session | undefined): Promise<{ cap: Run; rp: Run & { result: ReplayResult; wholeMs: number } }> {
  const dir = mkdtempSync(join(tmpdir(), 'cb-replay-pipe-cap-'));
  try {
    const capture = openCapture(live.config, dir, live.clock, log)!;
    live.recordTwins(capture);
    const cap = await liveRun(live, capture);
    await capture.close();
    const rp = await replayRun(live.config, dir, cap.from, cap.to, profiler);
    if (KEEP !== undefined) {
      // The last round's wins: a capture to time two builds' replays on (a before/after).
      rmSync(KEEP, { recursive: true, force: true });
      cpSync(dir, KEEP, { recursive: true });
      writeFileSync(join(KEEP, 'window.json'), JSON.stringify({ from: cap.from, to: cap.to }));
    }
    return { cap, rp };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Rounds {
  readonly a: Run[];
  readonly cap: Run[];
  readonly replay: (Run & { events: number; flushes: number; wholeMs: number })[];
}

async function rounds(live: Live, w: World): Promise<Rounds> {
  const r: Rounds = { a: [], cap: [], replay: [] };
  const deadline = performance.now() + DEADLINE_MS - 40_000;
  for (let round = 0; round <= ROUNDS; round++) {
    const timed = round > 0;
    const a = await liveRun(live);
    const last = round === ROUNDS || performance.now() > deadline;
    const profiler = last && PROFILE ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
    }
    const { cap, rp } = await captureAndReplay(live, profiler);
    profiler?.disconnect();
    const want = digest(live.core.state, live.kv, w.tickers);
    if (replayDigest(rp.result.books, live.kv.label, w.tickers) !== want) throw new Error(`round ${round}: the replay ended with other Kalshi books than live`);
    const f0 = (x: number): string => Math.round(x).toLocaleString('en-US');
    console.error(
      `round ${round}${timed ? '' : ' (warm-up)'}: a ${f0(a.ops / (a.cpuMs / 1e3))}, cap ${f0(cap.ops / (cap.cpuMs / 1e3))}, replay ${f0(rp.ops / (rp.cpuMs / 1e3))} deltas per main-thread CPU s; replay ${rp.result.events} events, ${rp.result.flushes} flushes, whole command ${f0(rp.wholeMs)} ms CPU`,
    );
    if (timed) {
      r.a.push(a);
      r.cap.push(cap);
      r.replay.push({ ...rp, events: rp.result.events, flushes: rp.result.flushes });
    }
    if (timed && last) break;
  }
  return r;
}

function report(r: Rounds, groups: number): void {
  const cpu = (x: Run): number => x.ops / (x.cpuMs / 1e3);
  const proc = (x: Run): number => x.ops / (x.procMs / 1e3);
  const wall = (x: Run): number => x.ops / (x.wallMs / 1e3);
  const f0 = (x: number): string => Math.round(x).toLocaleString('en-US');
  const spread = (xs: readonly number[]): string => `${f0(Math.min(...xs))}–${f0(Math.max(...xs))}`;
  const row = (label: string, runs: readonly Run[], baseline: boolean): Row => ({
    label,
    baseline,
    cpu: median(runs.map(cpu)),
    cpuNs: 1e9 / median(runs.map(cpu)),
    cpuSpread: spread(runs.map(cpu)),
    proc: median(runs.map(proc)),
    wall: median(runs.map(wall)),
    runs: runs.length,
  });
  const vsA = pairedRatio(r.replay.map(cpu), r.a.map(cpu));
  const vsCap = pairedRatio(r.replay.map(cpu), r.cap.map(cpu));
  const procVsA = pairedRatio(r.replay.map(proc), r.a.map(proc));
  const events = median(r.replay.map((x) => x.events));
  const flushes = median(r.replay.map((x) => x.flushes));
  const whole = median(r.replay.map((x) => x.wholeMs));
  record(
    {
      title: "Replay of the ingest bench's capture vs its live ingest",
      columns: [
        { key: 'cpu', title: 'deltas per CPU s (main thread)' },
        { key: 'cpuNs', title: 'CPU ns/delta', digits: 0 },
        { key: 'cpuSpread', title: 'min–max of runs' },
        { key: 'proc', title: 'deltas per CPU s (whole process)' },
        { key: 'wall', title: 'deltas/s (wall)' },
        { key: 'runs', title: 'runs' },
      ],
      ratio: { metric: 'cpu', title: 'vs (a)' },
      target: {
        text: `full-pipeline replay at --speed max ≥ the ingest bench's rate (like for like; measured: replay ${vsA.toFixed(2)}× live ingest per main-thread CPU second, median of the rounds' ratios)`,
        met: vsA >= 1,
      },
      interpretation: `Per main-thread CPU second the replay of the captured window runs ${vsA.toFixed(2)}× the rate of live ingest with capture off (the ingest bench's path (a)) and ${vsCap.toFixed(2)}× live ingest with capture on (the run that wrote the window), the median of each round's ratio; per CPU second of the whole process ${procVsA.toFixed(2)}× (a). The replay wrote ${f0(events)} events of the window to events.ndjson and ran ${f0(flushes)} recorded flushes in all (the live turn's flush markers, the warm-up's included); the whole command, warm-up from the capture's start and output files included, took ${f0(whole)} ms of main-thread CPU (median).`,
      notes: [
        `The workload is the ingest bench's (bench/ingest-workload.ts): ${MARKETS.toLocaleString('en-US')} Kalshi markets, ${DELTAS.toLocaleString('en-US')} \`orderbook_delta\` frames per run, ${groups.toLocaleString('en-US')} cross-venue groups with venue_b twins, ${CLIENTS} orderbook and ${CLIENTS} prices WebSocket clients of ${SUBS} markets each in a child process. venue_b's Gamma pages and books open each capture log as REST documents (as a venue_b feed records what it receives), so the replay groups the same pairs.`,
        "The same consumers on both sides where the replay has them: the state, matching, arb/EV at each flush and the opportunity lifecycle, on the same per-turn conflation (live flushes once per event-loop turn and records a flush marker for it; the replay flushes at each marker). What live does and the replay does not: fan-out to the WebSocket clients (the replay has no hub), persistence marks and timers, the wallet ledger and alerts (src/replay/run.ts: nothing the command writes reads them), the feed runtime's socket events and protocol hooks, and in (cap) appending every frame to the capture (compression on the thread pool). What the replay does and live does not: read the capture (file reads, Brotli decompression and record decoding on the main thread), run the window through src/cli/replay.ts's filters and the virtual clock, and write each event of the window to events.ndjson (JSON.stringify; the books and opportunities files after the window); the frames are mapped again by the same frame path and mapper.",
        "Rounds: (a), (cap), then the replay of that (cap) run; one warm-up round, then the timed ones. Each (cap) run writes a capture log of its own (a fresh DATA_DIR: venue_b's pages and books, then the Kalshi session), so every replay reads one session from the log's start, as `crossbook replay` does; its window is timed from the first item at or after --from (the capture reader has read and decompressed up to one block ahead by then) to the last item applied; each replay ended with the same Kalshi books (top 10 levels) as live after its (cap) run.",
      ],
    },
    [
      row('(a) live ingest, capture off (the ingest bench’s path)', r.a, true),
      row('(cap) live ingest, capture on', r.cap, false),
      row('(replay) crossbook replay --speed max of the (cap) window', r.replay, false),
    ],
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cb-replay-pipe-'));
  const children: ChildProcess[] = [];
  const servers: Server[] = [];
  const cleanup = (): void => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = setTimeout(() => {
    console.error(`replay-pipeline bench: still running after ${DEADLINE_MS / 1000} s, stopping`);
    cleanup();
    process.exit(1);
  }, DEADLINE_MS);
  deadline.unref();
  try {
    begin(
      'Replay from the capture: full pipeline',
      "The ingest bench's workload (Kalshi `orderbook_delta` frames through the service's path, every consumer wired, WebSocket clients attached) captured to the capture log, then that window replayed by `crossbook replay --speed max` (src/replay/run.ts) through the same pipelines on the virtual clock, alternated in one process. Synthetic, seeded traffic in the venue's real wire format (bench/gen.ts).",
    );
    const w = world();
    const live = await startLive(dir, w, children, servers);
    const r = await rounds(live, w);
    await live.close();
    report(r, live.groups);
  } finally {
    clearTimeout(deadline);
    cleanup();
  }
  setTimeout(() => process.exit(process.exitCode ?? 0), 200).unref();
}

await main();
