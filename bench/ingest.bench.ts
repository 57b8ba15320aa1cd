/**
 * Ingest throughput of Kalshi book deltas through the path that runs, on one process.
 *
 * (a) the service's path: `orderbook_delta` text frames enter the real Kalshi feed (createKalshiFeed
 *     on the feed runtime: socket events, FramePath, the mapper, the protocol's hooks), then
 *     pipelines/ingest.ts (applyToState) with every consumer the service wires (startPipelines:
 *     persistence marks and timers, fan-out to the WebSocket hub with real clients, matching,
 *     arb/EV recompute, wallets). The process is built by src/compose.ts on a temporary DATA_DIR
 *     and listens on 127.0.0.1; only the venue's socket is in-process (an injected `createWebSocket`
 *     that hands the runtime the frames as `ws` would, Buffers) and the catalog comes from a local
 *     HTTP server.
 * (b) baseline: the same frames, Buffer → text → the same mapper (its in-place read, else
 *     JSON.parse and map) → applyEvent → the same consumer calls in the wired order, with the
 *     same conflation (one fan-out and arb/EV flush per turn), in a plain loop without RxJS, on
 *     the same state, hub, clients and persistence (the pipelines unwired while it runs).
 * Also: the old figure (mapFrames + applyToState into a fresh state with no subscriber), the mapper
 * alone, and JSON.parse alone, so the ratios tell where time goes.
 *
 * The workload and the service it runs through (seeded Kalshi traffic with venue_b twins that
 * matching groups, WebSocket clients in a child process) are bench/ingest-workload.ts, shared with
 * bench/replay-pipeline.bench.ts.
 *
 * Env: INGEST_DELTAS, INGEST_MARKETS, INGEST_CLIENTS (per channel), INGEST_BATCH (frames per event-loop turn), INGEST_ROUNDS, INGEST_ONLY
 * (comma-separated workload names; results are not written then), INGEST_PROFILE=<file>: a CPU
 * profile of the last timed (a) run alone (V8 inspector), for `.cpuprofile` viewers; INGEST_CALIBRATE: a
 * fixed kernel's CPU time after each run (see calibrationMs).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { Session } from 'node:inspector/promises';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Observable } from 'rxjs';
import { MALFORMED_CHECK_MS } from '../pipelines/ingest.js';
import { CLOCK_MS } from '../pipelines/persistence.js';
import { type Core, type Domain } from '../src/compose.js';
import type { NormalizedEvent } from '../src/core/types.js';
import { applyToState } from '../src/pipeline/operators.js';
import { applyEvent, EngineState } from '../src/state/engine.js';
import { mapFrames, type RawFrame } from '../src/venues/common/frames.js';
import type { VenueFeed } from '../src/venues/protocol.js';
import { KalshiMapper } from '../src/venues/kalshi/mappers.js';
import { HubConflation } from '../src/ws/conflate.js';
import type { WsHub } from '../src/ws/hub.js';
import { Turn } from '../src/pipeline/turn.js';
import { T0 } from './gen.js';
import { FloorBooks, floorFanout, type FloorFanout } from './ingest-floor.js';
import {
  ask,
  BATCH,
  CLIENTS,
  DELTAS,
  digest,
  immediate,
  LEVELS,
  MARKETS,
  PAIR_EVERY,
  SIDS,
  sleep,
  startLive,
  subscriptions,
  SUBS,
  type ClientReport,
  type VenueSocket,
  type World,
  world,
} from './ingest-workload.js';
import { begin, keep, mainThreadCpuMs, measureEachAsync, pairedRatio, record, type AsyncCandidate, type AsyncStats, type Row } from './lib.js';

const num = (name: string, def: number): number => Number(process.env[name] ?? def);
const ROUNDS = num('INGEST_ROUNDS', 3);
const ONLY = process.env['INGEST_ONLY']?.split(',');
const PROFILE = process.env['INGEST_PROFILE'];
/** Which workload INGEST_PROFILE profiles: `a` (default) or `cap`. */
const PROFILE_OF = process.env['INGEST_PROFILE_OF'] ?? 'a';
const TARGET = 300_000;
const TARGET_FACTOR = 1.5;
/** The whole bench stops by itself after this long, whatever happens. */
const DEADLINE_MS = num('INGEST_DEADLINE_S', 115) * 1000;
/** No measured round starts that would end after this (ms since the process started). */
const MEASURE_UNTIL_MS = DEADLINE_MS - 15_000;

/** GC entries seen during the current run (INGEST_DEBUG prints them per run). */
const gcs: PerformanceEntry[] = [];
if (process.env['INGEST_DEBUG']) new PerformanceObserver((l) => void gcs.push(...l.getEntries())).observe({ entryTypes: ['gc'] });
function gcSummary(): string {
  const by = new Map<string, { n: number; ms: number }>();
  for (const e of gcs) {
    const kind = ((e as { readonly detail?: unknown }).detail as { kind?: number } | undefined)?.kind;
    const name =
      kind === constants.NODE_PERFORMANCE_GC_MINOR
        ? 'minor'
        : kind === constants.NODE_PERFORMANCE_GC_MAJOR
          ? 'major'
          : kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL
            ? 'incremental'
            : 'weak';
    const x = by.get(name) ?? { n: 0, ms: 0 };
    x.n++;
    x.ms += e.duration;
    by.set(name, x);
  }
  return `gc ${[...by].map(([k, v]) => `${k} ${v.n}×/${v.ms.toFixed(0)} ms`).join(', ') || 'none'}`;
}
/**
 * INGEST_CALIBRATE: after each run (untimed), a fixed piece of JavaScript that touches nothing of
 * the service (string-keyed Map sets and gets, random reads and writes over 64 MiB), and its
 * main-thread CPU ms, printed. On this shared host the same instructions cost up to twice the CPU
 * time from one minute to the next: a run whose kernel also read slow was a slow host, not a slow
 * build (BENCHMARKS.md issue 34 `ingest22`).
 */
const CALIBRATE = process.env['INGEST_CALIBRATE'] !== undefined;
let calArray: Float64Array | undefined;
let calKeys: string[] | undefined;
function calibrationMs(): number {
  const arr = (calArray ??= new Float64Array(8 * 1024 * 1024));
  const keys = (calKeys ??= Array.from({ length: 50_000 }, (_, i) => `KXBENCH-${i}-M${i * 7}`));
  const m0 = mainThreadCpuMs();
  let sum = 0;
  for (let rep = 0; rep < 20; rep++) {
    const m = new Map<string, number>();
    for (let r = 0; r < 4; r++)
      for (let i = 0; i < keys.length; i++) {
        m.set(keys[i]!, i);
        sum += m.get(keys[(i * 7919) % keys.length]!) ?? 0;
      }
    let x = 12_345 + rep;
    for (let i = 0; i < 2_000_000; i++) {
      x = (x * 1_103_515_245 + 12_345) >>> 0;
      sum += arr[x & (arr.length - 1)]!;
      arr[x & (arr.length - 1)] = i;
    }
  }
  keep(sum);
  return mainThreadCpuMs() - m0;
}

const debug = (msg: string): void => void (process.env['INGEST_DEBUG'] && console.error(`[ingest ${(performance.now() / 1000).toFixed(1)} s] ${msg}`));
// ---- (b): the plain loop's consumers ----------------------------------------------------------

/**
 * One normalized event applied to the state and handed to every consumer the pipelines wire, in
 * their order (pipelines/index.ts), by direct calls and with the same conflation: for a book change
 * persistence marks at once, the market is marked dirty for the fan-out (HubConflation, as
 * pipelines/fanout.ts) and its groups for arb/EV (`SignalEngine.markBook`, as pipelines/signals.ts);
 * for the quote change it moves persistence, the fan-out's dirty set, matching, and arb/EV (when not
 * from a book). Once per event-loop turn (a Turn, as the pipelines') the fan-out publishes each
 * dirty market once, then each dirty group is recomputed once (`SignalEngine.flush`), and a group
 * whose signals changed is published as the fan-out flow does (`publishSignals`, while (b) runs).
 */
function plainConsumers(core: Core, domain: Domain, hub: WsHub): (ev: NormalizedEvent) => void {
  const { state, persistence } = core;
  const { matching, signals } = domain;
  const turn = new Turn();
  const fanout = new HubConflation(hub);
  turn.add(() => fanout.flush());
  turn.add(() => signals.flush());
  return (ev) => {
    if (ev.type !== 'book_delta') {
      applyEvent(state, ev);
      if (ev.type === 'feed') {
        turn.flush();
        hub.onFeedEvent(ev);
      }
      return;
    }
    const errors = state.books.integrityErrors;
    const q0 = state.quotes.get(ev.venue, ev.marketId);
    const v0 = q0?.version;
    applyEvent(state, ev);
    const b = state.books.instrument(ev.venue, ev.instrument);
    if (state.books.integrityErrors === errors && b?.ready === true) {
      persistence.markBook(ev.venue, ev.instrument, b);
      fanout.markBook(ev.venue, ev.marketId, ev, b);
      signals.markBook(ev.venue, ev.marketId, b);
    }
    const q = state.quotes.get(ev.venue, ev.marketId);
    if (q !== undefined && (q !== q0 || q.version !== v0)) {
      persistence.markQuote(q.venue, q.marketId);
      fanout.markQuote(q, ev);
      matching.onQuote(q);
      if (!q.fromBook) signals.mark(q.venue, q.marketId);
    }
    turn.touch();
  };
}

/**
 * The timers the pipelines would run (persistence's minute clock, the ledger's, the malformed
 * rule), as plain intervals; closed candles reach persistence from the candle store's stream,
 * the one output a plain loop cannot call for itself. Returns the stop.
 */
function plainTimers(core: Core, domain: Domain, feed: VenueFeed): () => void {
  const { state, persistence } = core;
  const { ledger } = domain;
  const candles = state.candles.closed$.subscribe((c) => persistence.appendCandle(c));
  const ts = [
    setInterval(() => {
      state.candles.flush(Date.now());
      void persistence.flushCatalog(state);
    }, CLOCK_MS),
    setInterval(() => state.health.malformedEvent(feed.venue.label, feed.stats.malformedTotal, Date.now()), MALFORMED_CHECK_MS),
  ];
  if (ledger.intervals.advanceMs > 0) ts.push(setInterval(() => ledger.advance(ledger.time()), ledger.intervals.advanceMs));
  if (ledger.intervals.flushMs > 0) ts.push(setInterval(() => void ledger.flush(), ledger.intervals.flushMs));
  return () => {
    candles.unsubscribe();
    for (const t of ts) clearInterval(t);
  };
}

// ---- the run ---------------------------------------------------------------------------------

interface Outcome {
  readonly m: Map<string, AsyncStats>;
  readonly clients: Map<string, ClientReport[]>;
  readonly snapshotMs: number[];
  readonly dirty: number[];
  readonly groups: number;
  readonly signalRecomputes: number;
  readonly signalRefreshes: number;
  readonly snapshotIntervalMs: number;
  /** Per capture-on run: records appended, compressed bytes written, the raw bytes they hold, drops so far. */
  readonly captured: CaptureRun[];
  readonly frameBytes: number;
  readonly processCpu: Map<string, number[]>;
  /** Messages the bare fan-out's clients received, per `floorpub` run (the warm-up first). */
  readonly floorReceived: number[];
}

interface CaptureRun {
  readonly records: number;
  readonly written: number;
  readonly rawWritten: number;
  readonly drops: number;
}

async function run(dir: string, w: World, children: ChildProcess[], servers: Server[]): Promise<Outcome> {
  debug('prime: wiring, clients');
  const live = await startLive(dir, w, children, servers);
  debug('clients: ready');
  const { config, kv, clock, core, domain, capture, feed, capFeed, hub, child, groups, wire, unwire, push } = live;
  // The normalized cache behind /replay (capture.replayCache), written on the history index's thread: wired only in `capnorm`.
  const norm = core.normCache;
  if (norm === undefined) throw new Error('the normalized cache was not built (capture.replayCache)');
  const sock = (): VenueSocket => live.socket();

  const digests = new Map<string, string>();
  const clients = new Map<string, ClientReport[]>();
  const snapshotMs: number[] = [];
  const dirty: number[] = [];
  const stats0 = { malformed: feed.stats.malformedTotal, gaps: feed.stats.gaps, integrity: core.state.books.integrityErrors };
  const cap0 = { records: 0, written: 0, rawWritten: 0 };
  const captured: CaptureRun[] = [];
  /** Per workload: operations per CPU second of the whole process, every run (the warm-up's first). */
  const processCpu = new Map<string, number[]>();
  const clean = (name: string, st: EngineState, s: { malformedTotal: number; gaps: number }, base = { malformed: 0, gaps: 0, integrity: 0 }): void => {
    if (s.malformedTotal > base.malformed || s.gaps > base.gaps || st.books.integrityErrors > base.integrity)
      throw new Error(`${name}: stream not clean (malformed ${s.malformedTotal}, gaps ${s.gaps}, integrity ${st.books.integrityErrors})`);
  };
  /** After (a) or (b): same books, clean stream, what the clients got, the snapshot that follows. */
  const settle = async (name: string, s: { malformedTotal: number; gaps: number }): Promise<void> => {
    clean(name, core.state, s, stats0);
    digests.set(name, digest(core.state, kv, w.tickers));
    await sleep(150); // the last messages reach the clients
    const rep = await ask(child, 'report');
    clients.set(name, [...(clients.get(name) ?? []), rep]);
    const t = performance.now();
    const n = await core.persistence.snapshot(core.state);
    if (name === 'a') {
      snapshotMs.push(performance.now() - t);
      dirty.push(n.books + n.quotes);
    }
  };

  let plain: { mapper: KalshiMapper; stop: () => void } | undefined;
  const consume = plainConsumers(core, domain, hub);
  let fresh: { mapper: KalshiMapper; state: EngineState } | undefined;
  let floor: FloorBooks | undefined;
  /** The bare fan-out of `floorpub`, started at its first round, closed with the service. */
  let fan: FloorFanout | undefined;
  /** Messages the bare fan-out's clients received, per `floorpub` run. */
  const floorReceived: number[] = [];
  /** After a floor run: every frame applied, and its books kept for the check against every path's. */
  const settleFloor = (name: string): void => {
    if (floor!.refused > 0) throw new Error(`${name}: the floor could not apply ${floor!.refused} frames`);
    digests.set(name, floor!.digest(w.tickers));
    floor = undefined;
  };
  /** What `floorpub` publishes: per market, whether a client holds it, its two messages and topics. */
  let pub: { watched: Uint8Array; book: Buffer[]; price: Buffer[]; o: string[]; p: string[] } | undefined;
  let texts: string[] | undefined;
  /** A fresh mapper that has seen the snapshots, and (withState) a fresh state holding catalog and books. */
  const freshMapper = (withState: boolean): { mapper: KalshiMapper; state: EngineState } => {
    const mapper = new KalshiMapper(kv);
    const state = new EngineState(config.venues);
    for (const text of withState ? w.pages : []) for (const ev of mapper.map(JSON.parse(text), T0 - 5000)) applyEvent(state, ev);
    for (const text of w.snapshotOf.values()) for (const ev of mapper.map(JSON.parse(text), T0 - 1000)) if (withState) applyEvent(state, ev);
    return { mapper, state };
  };

  const cands: AsyncCandidate[] = [
    {
      name: 'a',
      setup: async () => {
        await wire();
        await ask(child, 'reset');
      },
      // The profile starts inside the run, after the full GC the bench forces before each run.
      run: async () => {
        if (profiler && PROFILE_OF === 'a') await profiler.post('Profiler.start');
        return push((b) => sock().frame(b));
      },
      teardown: async () => {
        if (profiler && PROFILE_OF === 'a') writeFileSync(PROFILE!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
        unwire();
        await settle('a', feed.stats);
      },
    },
    {
      name: 'cap',
      setup: async () => {
        await wire(true);
        await capture.flush();
        Object.assign(cap0, capture.stats);
        await ask(child, 'reset');
        if (profiler && PROFILE_OF === 'cap') await profiler.post('Profiler.start');
      },
      // Timed until every record of the run is compressed and on disk.
      run: async () => {
        const n = await push((b) => sock().frame(b));
        await capture.flush();
        return n;
      },
      teardown: async () => {
        if (profiler && PROFILE_OF === 'cap') writeFileSync(PROFILE!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
        unwire();
        const s = capture.stats;
        captured.push({ records: s.records - cap0.records, written: s.written - cap0.written, rawWritten: s.rawWritten - cap0.rawWritten, drops: s.drops });
        await settle('cap', capFeed.stats);
      },
    },
    {
      // `cap` with the history index's thread following the capture and writing the normalized cache,
      // as src/service.ts wires it by default (so the figure is the thread's whole main-thread cost,
      // the index's included): what the capture wrote before (snapshots, other runs) is mapped into
      // it before the clock starts; the run is timed until the cache has mapped every record of it.
      name: 'capnorm',
      setup: async () => {
        await wire(true, true);
        await norm.sync();
        await ask(child, 'reset');
      },
      run: async () => {
        const n = await push((b) => sock().frame(b));
        await norm.sync();
        return n;
      },
      teardown: async () => {
        unwire();
        await settle('capnorm', capFeed.stats);
      },
    },
    {
      // The capture's own work alone: the frames' text appended to the venue's writer as the runtime
      // does (a flush marker per batch, as the turn's schedule gives one per turn), then sealed,
      // compressed and written; the text is decoded before the run, as the socket does it anyway,
      // and handed over with the bytes it came from, as the socket hands them.
      name: 'caponly',
      setup: () => (texts = w.frames.map((b) => b.toString())),
      run: async () => {
        const vc = capture.venue(kv.label);
        const fr = texts!;
        for (let i = 0; i < fr.length; i += BATCH) {
          const end = Math.min(fr.length, i + BATCH);
          const t = clock.now();
          for (let k = i; k < end; k++) vc.frame(fr[k]!, 1, t, w.frames[k]);
          capture.markFlush(t);
          await immediate();
        }
        await capture.flush();
        return fr.length;
      },
      teardown: () => (texts = undefined),
    },
    {
      name: 'b',
      setup: async () => {
        const mapper = new KalshiMapper(kv);
        for (const text of w.snapshotOf.values()) for (const ev of mapper.map(JSON.parse(text), Date.now())) applyEvent(core.state, ev);
        // The engine's changes reach the hub as the fan-out flow hands them (unwired while (b) runs).
        const published = domain.signals.changes$.subscribe((g) => hub.onSignals(g));
        const timers = plainTimers(core, domain, feed);
        plain = {
          mapper,
          stop: () => {
            timers();
            published.unsubscribe();
          },
        };
        await ask(child, 'reset');
      },
      run: () => {
        const mapper = plain!.mapper;
        return push((b) => {
          const local = Date.now();
          const text = b.toString();
          if (mapper.mapText(text, local, consume)) return;
          let raw: unknown;
          try {
            raw = JSON.parse(text);
          } catch {
            mapper.stats.malformedFrame('json', 'frame is not valid JSON', text);
            return;
          }
          for (const ev of mapper.map(raw, local)) consume(ev);
        });
      },
      teardown: async () => {
        plain!.stop();
        await settle('b', plain!.mapper.stats);
      },
    },
    {
      name: 'old',
      setup: () => (fresh = freshMapper(true)),
      run: () => {
        const { mapper, state } = fresh!;
        const fr = w.frames;
        new Observable<RawFrame>((sub) => {
          for (let i = 0; i < fr.length; i++) sub.next({ data: fr[i]!.toString(), localTimestamp: w.local[i]! });
          sub.complete();
        })
          .pipe(mapFrames(mapper), applyToState(state))
          .subscribe();
        return fr.length;
      },
      teardown: () => {
        clean('old', fresh!.state, fresh!.mapper.stats);
        digests.set('old', digest(fresh!.state, kv, w.tickers));
        fresh = undefined;
      },
    },
    {
      name: 'floor',
      setup: () => (floor = new FloorBooks(w.snapshotOf.values())),
      run: () => {
        const fr = w.frames;
        for (let i = 0; i < fr.length; i++) floor!.apply(fr[i]!.toString());
        return fr.length;
      },
      teardown: () => settleFloor('floor'),
    },
    {
      // The floor with the fan-out's least: each delta on a watched market published to its orderbook
      // topic, and to its price topic when it changed a best level, as one message built before the
      // run (nothing written per delta) through a bare uWS server to clients holding the bench's
      // subscriptions; BATCH frames per event-loop turn, as the socket hands them to (a).
      name: 'floorpub',
      setup: async () => {
        floor = new FloorBooks(w.snapshotOf.values());
        const watched = subscriptions();
        fan ??= await floorFanout([...watched.map((ms) => ms.map((m) => `o:${m}`)), ...watched.map((ms) => ms.map((m) => `p:${m}`))]);
        await fan.received();
        if (pub === undefined) {
          const ids = floor.tickers.map((t) => `venue_a:${t}`);
          const on = new Uint8Array(MARKETS);
          for (const ms of watched) for (const m of ms) on[m] = 1;
          pub = {
            watched: on,
            book: ids.map((id, m) => Buffer.from(JSON.stringify({ type: 'orderbook_update', market_id: id, seq: 1, ts: T0, ...floor!.levels(m) }))),
            price: ids.map((id) => Buffer.from(JSON.stringify({ type: 'price_update', market_id: id, seq: 1, ts: T0, yes_bid: 42, yes_ask: 45 }))),
            o: ids.map((_, m) => `o:${m}`),
            p: ids.map((_, m) => `p:${m}`),
          };
        }
      },
      run: async () => {
        const f = floor!;
        const out = fan!;
        const { watched, book, price, o, p } = pub!;
        const fr = w.frames;
        for (let i = 0; i < fr.length; i += BATCH) {
          const end = Math.min(fr.length, i + BATCH);
          for (let k = i; k < end; k++) {
            const m = f.apply(fr[k]!.toString());
            if (m < 0 || watched[m] === 0) continue;
            out.publish(o[m]!, book[m]!);
            if (f.topChanged) out.publish(p[m]!, price[m]!);
          }
          await immediate();
        }
        return fr.length;
      },
      teardown: async () => {
        floorReceived.push(await fan!.received());
        debug(`floorpub: the clients received ${floorReceived.at(-1)} messages`);
        settleFloor('floorpub');
      },
    },
    {
      name: 'map',
      setup: () => (fresh = freshMapper(false)),
      run: () => {
        const { mapper } = fresh!;
        const fr = w.frames;
        let x = 0;
        const count = (): void => void x++;
        for (let i = 0; i < fr.length; i++) {
          const text = fr[i]!.toString();
          if (!mapper.mapText(text, w.local[i]!, count)) for (const _ of mapper.map(JSON.parse(text), w.local[i]!)) x++;
        }
        keep(x);
        return fr.length;
      },
      teardown: () => (fresh = undefined),
    },
    {
      name: 'parse',
      run: () => {
        const fr = w.frames;
        let x = 0;
        for (let i = 0; i < fr.length; i++) if (JSON.parse(fr[i]!.toString()) !== null) x++;
        keep(x);
        return fr.length;
      },
    },
  ]
    .filter((c) => !ONLY || ONLY.includes(c.name))
    .map((c) => ({
      ...c,
      setup: async () => {
        debug(`${c.name}: setup`);
        await c.setup?.();
        debug(`${c.name}: run`);
      },
      // Also the whole process's CPU (every thread: compression on libuv's pool, GC helpers, uWS).
      run: async () => {
        const u0 = process.cpuUsage();
        const m0 = mainThreadCpuMs();
        const t0 = performance.now();
        gcs.length = 0;
        const sig0 = [domain.signals.recomputed, domain.signals.refreshed];
        const n = await c.run();
        const u = process.cpuUsage(u0);
        processCpu.set(c.name, [...(processCpu.get(c.name) ?? []), n / ((u.user + u.system) / 1e6)]);
        debug(
          `${c.name}: ${n} ops, main ${(mainThreadCpuMs() - m0).toFixed(0)} ms, process ${((u.user + u.system) / 1e3).toFixed(0)} ms, wall ${(performance.now() - t0).toFixed(0)} ms, ${gcSummary()}, arb/EV ${domain.signals.recomputed - sig0[0]!} recomputes, ${domain.signals.refreshed - sig0[1]!} refreshes, ${[...domain.signals.all()].filter((g) => g.arbs.length > 0).length} groups with an arb`,
        );
        return n;
      },
      teardown: async () => {
        await c.teardown?.();
        if (CALIBRATE) console.error(`[ingest] ${c.name}: calibration kernel ${calibrationMs().toFixed(0)} ms of main-thread CPU`);
      },
    }));

  let profiler: Session | undefined;
  if (PROFILE) {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
  }
  const recomputed0 = domain.signals.recomputed;
  const refreshed0 = domain.signals.refreshed;
  const m = await measureEachAsync(cands, { warmup: 1, runs: ROUNDS, deadline: MEASURE_UNTIL_MS });
  const want = digests.get('b') ?? digests.get('a') ?? digests.values().next().value;
  for (const [name, d] of digests) if (d !== want) throw new Error(`path ${name} ended with different books than the plain loop`);
  const signalRecomputes = domain.signals.recomputed - recomputed0;
  const signalRefreshes = domain.signals.refreshed - refreshed0;

  profiler?.disconnect();
  await fan?.close();
  await live.close();
  const frameBytes = w.frames.reduce((n, f) => n + f.length, 0);
  return {
    m,
    clients,
    snapshotMs,
    dirty,
    groups,
    signalRecomputes,
    signalRefreshes,
    snapshotIntervalMs: config.persistence.snapshotIntervalMs,
    captured,
    frameBytes,
    processCpu,
    floorReceived,
  };
}

// ---- report ----------------------------------------------------------------------------------

function report(o: Outcome): void {
  const f0 = (x: number): string => Math.round(x).toLocaleString('en-US');
  const st = (n: string): AsyncStats | undefined => o.m.get(n);
  const range = (xs: readonly number[]): string => `${f0(Math.min(...xs))}–${f0(Math.max(...xs))}`;
  const labels: [string, string, boolean][] = [
    ['a', '(a) feed runtime → ingest pipeline → all consumers (the path that runs)', false],
    ['b', '(b) plain loop: mapper → applyEvent → the same consumer calls', true],
    ['cap', '(a) with capture on: every frame appended to the capture log, compressed and written', false],
    ['capnorm', '(a) with capture on and the history thread following it, writing the normalized cache behind /replay', false],
    ['old', 'mapFrames + applyToState into a state without consumers (the old figure)', false],
    ['floor', 'floor: the same frames read by the same scanner into one typed-array record per market (no event, top of book, quote or consumer)', false],
    ['floorpub', 'floor, and each delta on a watched market published bare to the same subscriptions (uWS, a message built before the run)', false],
    ['map', 'the mapper only (frames read in place by mapText; parse + map for any other)', false],
    ['parse', 'JSON.parse only', false],
  ];
  const rows: Row[] = labels
    .filter(([n]) => st(n))
    .map(([n, label, baseline]) => {
      const s = st(n)!;
      return {
        label,
        baseline,
        cpu: s.opsPerCpuSec,
        cpuNs: 1e9 / s.opsPerCpuSec,
        cpuSpread: range(s.cpuRates),
        wall: s.opsPerSec,
        wallSpread: range(s.rates),
        runs: s.runs,
      };
    });
  const a = st('a');
  const b = st('b');
  if (ONLY || !a || !b) {
    for (const r of rows)
      console.log(
        `${r.label}: ${f0(r['cpu'] as number)} per CPU s (${r['cpuSpread'] as string}), ${f0(r['wall'] as number)}/s wall (${r['wallSpread'] as string})`,
      );
    const alone = st('caponly');
    if (alone) console.log(`capture alone: ${f0(alone.opsPerCpuSec)} frames per main-thread CPU s, ${f0(processRate(o, 'caponly'))} per process CPU s`);
    const c = captureFigures(o);
    if (c) console.log(c.text);
    const n = normFigures(o);
    if (n) console.log(n);
    const fl = floorNote(o);
    if (fl) console.log(fl);
    return;
  }
  const slow = b.opsPerCpuSec / a.opsPerCpuSec;
  const perRun = (n: string): string => {
    const rs = o.clients.get(n) ?? [];
    const med = [...rs].sort((x, y) => x.delivered - y.delivered)[Math.floor(rs.length / 2)];
    return med ? `${f0(med.delivered)} messages (${f0(rs.reduce((s, r) => s + r.lost, 0))} missed by seq over all runs)` : '–';
  };
  const ns = (n: string): number => 1e9 / (st(n)?.opsPerCpuSec ?? NaN);
  const med = (xs: readonly number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
  const machinery = ns('a') - ns('b');
  record(
    {
      title: 'Kalshi book deltas through the path that runs',
      columns: [
        { key: 'cpu', title: 'deltas per CPU s (main thread)' },
        { key: 'cpuNs', title: 'CPU ns/delta', digits: 0 },
        { key: 'cpuSpread', title: 'min–max of runs' },
        { key: 'wall', title: 'deltas/s (wall)' },
        { key: 'wallSpread', title: 'min–max of runs (wall)' },
        { key: 'runs', title: 'runs' },
      ],
      ratio: { metric: 'cpu', title: 'vs plain loop' },
      target: {
        text: `≥ ${f0(TARGET)} Kalshi deltas/s on one core through the path that runs (feed runtime, every consumer attached), within ${TARGET_FACTOR}× of the plain loop doing the same work (measured: ${f0(a.opsPerCpuSec)} per main-thread CPU second, ${f0(a.opsPerSec)}/s wall; the plain loop ${slow.toFixed(2)}× as fast)`,
        met: a.opsPerCpuSec >= TARGET && a.opsPerSec >= TARGET && slow <= TARGET_FACTOR,
      },
      interpretation: `Per main-thread CPU second, the path that runs costs ${f0(ns('a'))} ns per delta and the plain loop doing the same work ${f0(ns('b'))} ns: the pipeline machinery (feed runtime with its socket events and protocol hooks, RxJS flows, Subjects fanning each change out to the consumers) ${machinery > 0 ? `adds ${f0(machinery)} ns` : `adds nothing measurable (${f0(-machinery)} ns less, within the spread)`}. The consumers are the cost: of the plain loop, reading and mapping the frame takes ${f0(ns('map'))} ns (JSON.parse alone, which the mapper's in-place read skips, would take ${f0(ns('parse'))} ns), applying to state ${f0(ns('old') - ns('map'))} ns, and the consumers (persistence marks, fan-out to the clients, matching and arb/EV of grouped markets) ${f0(ns('b') - ns('old'))} ns. CPU time counts only the main thread while it ran, so it leaves out waiting for a core that other work held (wall time does not); a loaded machine still slows both (shared caches), and on a quiet one they agree.`,
      notes: [
        `${MARKETS.toLocaleString('en-US')} Kalshi markets over ${SIDS} subscriptions, ${LEVELS} levels per side, ${DELTAS.toLocaleString('en-US')} \`orderbook_delta\` frames per run (one level each, relative \`delta_fp\`) spread uniformly over the markets, handed over ${BATCH} per event-loop turn as Buffers; a run is timed from the first frame to the last one processed (wall, and main-thread CPU from /proc: the scheduler's nanosecond count).`,
        `Every ${PAIR_EVERY}th Kalshi market has a venue_b (Polymarket protocol) twin with a ${LEVELS}-level book: matching formed ${o.groups.toLocaleString('en-US')} cross-venue groups, and the (a) and (b) runs recomputed arb/EV ${f0(o.signalRecomputes)} times in all (and refreshed a group without recomputing it ${f0(o.signalRefreshes)} times: every change since its last recompute was to levels it did not read).`,
        `WebSocket clients in a child process (src/capacity/ws-load.ts): ${CLIENTS} on orderbook and ${CLIENTS} on prices, ${SUBS} Kalshi markets each (${Math.min(MARKETS, CLIENTS * SUBS).toLocaleString('en-US')} markets watched). Per run (median) they received: (a) ${perRun('a')}; (b) ${perRun('b')}.`,
        `Persistence only marks books and quotes dirty inside a run; its snapshot timer (${o.snapshotIntervalMs / 1000} s) writes them. Writing what one (a) run leaves dirty (${f0(med(o.dirty))} books and quotes) to LMDB took ${med(o.snapshotMs).toFixed(0)} ms (median, after the run, untimed), about ${f0((med(o.snapshotMs) * 1e6) / DELTAS)} ns per delta of that run.`,
        `(b) runs on the same state, hub, clients and persistence with the pipelines unwired; its timers (minute clock, ledger, malformed rule) run as plain intervals. It skips the Kalshi protocol's per-frame hooks (resync inspection, subscription book-keeping), which count as feed runtime in (a). The old-figure, mapper and parse rows start from the same Buffers (toString included) and use the generated receive times.`,
        ...[floorNote(o)].filter((x) => x !== undefined),
        `Median of ${a.runs} rounds after 1 warm-up round, workloads round-robin; every path is checked to end with identical books and a clean stream (no malformed frame, gap or integrity error). The venue socket is in-process (no kernel socket or \`ws\` frame decoding); the catalog comes from a local HTTP server.`,
      ],
    },
    rows,
  );
  captureReport(o);
}

/**
 * What the floor rows say: the least this host's JavaScript spends on the workload's reading,
 * applying and publishing (bench/ingest-floor.ts), against the target's budget per delta.
 */
function floorNote(o: Outcome): string | undefined {
  const fl = o.m.get('floor');
  const fp = o.m.get('floorpub');
  if (!fl && !fp) return undefined;
  const f0 = (x: number): string => Math.round(x).toLocaleString('en-US');
  const ns = (s: AsyncStats): number => 1e9 / s.opsPerCpuSec;
  const got = [...o.floorReceived.slice(1)].sort((x, y) => x - y)[Math.floor((o.floorReceived.length - 1) / 2)];
  return [
    `The floor rows (bench/ingest-floor.ts) are the least the workload's JavaScript can do here, not a path the service could run: the same frames read by the mapper's own scanner, with its checks, into one record per market (its levels in one pool of typed arrays, found by one lookup), no event, top of book, quote, candle, persistence mark, message text or arb/EV; checked to end with the same books as every path.`,
    fl ? ` Reading and applying alone cost ${f0(ns(fl))} ns per delta` : '',
    fp
      ? `${fl ? ';' : ''} with each delta on a watched market published bare (uWS, a message built before the run, to the bench's ${CLIENTS} + ${CLIENTS} subscriptions in a child process; ${got === undefined ? 'no' : f0(got)} messages received per run, median) ${f0(ns(fp))} ns`
      : '',
    `, against the ${f0(1e9 / TARGET)} ns per delta that ${f0(TARGET)} per CPU second allows.`,
  ].join('');
}

/** Median of the timed runs' whole-process CPU rates of a workload (the first run is the warm-up). */
function processRate(o: Outcome, name: string): number {
  const xs = (o.processCpu.get(name) ?? []).slice(1).sort((x, y) => x - y);
  return xs[Math.floor(xs.length / 2)] ?? NaN;
}

interface CaptureFigures {
  /** Cost of capture on: fraction of throughput lost, per main-thread CPU second, whole-process CPU second, and wall second. */
  readonly cpu: number;
  readonly proc: number;
  readonly wall: number;
  /** The capture's work alone per frame as a share of ingest with it (main-thread CPU). */
  readonly share: number;
  readonly perFrame: number;
  readonly raw: number;
  readonly text: string;
}

/** Capture on vs off from the (a) and cap runs of one bench run, and bytes per frame of the last capture-on run. */
function captureFigures(o: Outcome): CaptureFigures | undefined {
  const a = o.m.get('a');
  const c = o.m.get('cap');
  const run = o.captured.at(-1);
  if (!a || !c || !run) return undefined;
  // Per round, (a) and cap run back to back: the median of the rounds' ratios leaves out the load's
  // drift between rounds, which the ratio of the two medians keeps.
  const cpu = 1 - pairedRatio(c.cpuRates, a.cpuRates);
  const proc = 1 - pairedRatio((o.processCpu.get('cap') ?? []).slice(1), (o.processCpu.get('a') ?? []).slice(1));
  const wall = 1 - pairedRatio(c.rates, a.rates);
  // The capture's own main-thread work per frame against (a)'s per delta: the share of ingest it takes.
  const alone = o.m.get('caponly');
  const share = alone ? 1 / alone.opsPerCpuSec / (1 / alone.opsPerCpuSec + 1 / a.opsPerCpuSec) : NaN;
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const perFrame = run.written / DELTAS;
  const raw = o.frameBytes / DELTAS;
  const drops = run.drops > 0 ? `; ${run.drops} records dropped` : '';
  const text =
    `Capture on costs ${pct(cpu)} of the deltas per main-thread CPU second (median of the rounds' on/off ratios; its work measured alone: ${pct(share)}), ${pct(proc)} per CPU second of the whole process (compression included), ${pct(wall)} of the wall rate; ` +
    `${run.records.toLocaleString('en-US')} records, ${perFrame.toFixed(1)} bytes on disk per frame against ${raw.toFixed(1)} raw (${(raw / perFrame).toFixed(1)}× smaller)${drops}`;
  return { cpu, proc, wall, share, perFrame, raw, text };
}

/** What the normalized cache behind /replay costs ingest: capture on with it (capnorm) vs without (cap), same run. */
function normFigures(o: Outcome): string | undefined {
  const c = o.m.get('cap');
  const n = o.m.get('capnorm');
  if (!c || !n) return undefined;
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  const f0 = (x: number): string => Math.round(x).toLocaleString('en-US');
  const spread = (xs: readonly number[]): string => `${f0(Math.min(...xs))}–${f0(Math.max(...xs))}`;
  return (
    `Normalized cache on costs ${pct(1 - n.opsPerCpuSec / c.opsPerCpuSec)} of the deltas per main-thread CPU second (${f0(1e9 / c.opsPerCpuSec)} → ${f0(1e9 / n.opsPerCpuSec)} ns/delta; runs ${spread(c.cpuRates)} off, ${spread(n.cpuRates)} on), ` +
    `${pct(1 - processRate(o, 'capnorm') / processRate(o, 'cap'))} per CPU second of the whole process (${f0(processRate(o, 'cap'))} → ${f0(processRate(o, 'capnorm'))} deltas), ${pct(1 - n.opsPerSec / c.opsPerSec)} of the wall rate; ${n.runs} runs each`
  );
}

/** The capture sections: ingest with capture on vs off (same run), and bytes per captured frame. */
function captureReport(o: Outcome): void {
  const f = captureFigures(o);
  const a = o.m.get('a');
  const c = o.m.get('cap');
  if (!f || !a || !c) return;
  const row = (label: string, name: string, s: AsyncStats, baseline: boolean): Row => ({
    label,
    baseline,
    cpu: s.opsPerCpuSec,
    cpuNs: 1e9 / s.opsPerCpuSec,
    proc: processRate(o, name),
    wall: s.opsPerSec,
    runs: s.runs,
  });
  record(
    {
      title: 'Capture on vs off (the path that runs)',
      columns: [
        { key: 'cpu', title: 'deltas per CPU s (main thread)' },
        { key: 'cpuNs', title: 'CPU ns/delta', digits: 0 },
        { key: 'proc', title: 'deltas per CPU s (whole process)' },
        { key: 'wall', title: 'deltas/s (wall)' },
        { key: 'runs', title: 'runs' },
      ],
      ratio: { metric: 'cpu', title: 'vs capture off' },
      target: {
        text: 'capture costs ≤ 10% of ingest throughput (per main-thread CPU second, on vs off and its work alone)',
        met: f.cpu <= 0.1 && f.share <= 0.1,
      },
      interpretation: `${f.text}.${normFigures(o) ? ` ${normFigures(o)!}.` : ''} The feed runtime appends each frame to its venue's block in the block's byte layout (the socket's bytes copied once, a 24-byte header); a full block's buffer goes to Brotli on libuv's thread pool as it is and is written with async file I/O, so the main thread pays the append and a few calls per block; the whole-process figure adds the compression, which on a machine whose cores are all taken competes with ingest (and the wall figure waits for the last block's write).`,
      notes: [
        'Capture on is (a) with the same Kalshi feed built with the capture sink and the capture flow wired (per-turn flush markers, the 1 s write interval), as src/service.ts does; each capture-on run is timed until `Capture.flush()` has written every record of it. Whole-process CPU: `process.cpuUsage()` over the run (every thread of the process; the WebSocket clients run in another process).',
      ],
    },
    [
      row('(a) capture off', 'a', a, true),
      row('(a) capture on, written and flushed', 'cap', c, false),
      ...(o.m.get('caponly') ? [row("the capture's work alone, per frame (append, seal, compress, write)", 'caponly', o.m.get('caponly')!, false)] : []),
      ...(o.m.get('capnorm')
        ? [
            row(
              '(a) capture on with the history thread writing the normalized cache behind /replay (capture.replayCache)',
              'capnorm',
              o.m.get('capnorm')!,
              false,
            ),
          ]
        : []),
    ],
  );
  record(
    {
      title: 'Bytes per captured frame',
      columns: [{ key: 'perFrame', title: 'bytes per frame', digits: 1 }],
      ratio: { metric: 'perFrame', title: 'vs raw' },
      target: { text: 'captured frames ≥ 5× smaller on disk than the raw frames', met: f.raw / f.perFrame >= 5 },
      interpretation: `Of the last capture-on run: every byte it added to the segments (block and record headers, flush markers and feed events included) over its ${DELTAS.toLocaleString('en-US')} frames, against the frames as the socket delivered them.`,
    },
    [
      { label: 'raw frame', baseline: true, perFrame: f.raw },
      { label: 'capture segments on disk', perFrame: f.perFrame },
    ],
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cb-ingest-'));
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
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      cleanup();
      process.exit(130);
    });
  const deadline = setTimeout(() => {
    console.error(`ingest bench: still running after ${DEADLINE_MS / 1000} s, stopping`);
    cleanup();
    process.exit(1);
  }, DEADLINE_MS);
  deadline.unref();
  try {
    begin(
      'Ingest throughput',
      "Kalshi `orderbook_delta` text frames through the path the service runs (the Kalshi feed on the feed runtime, the ingest pipeline, every consumer wired as the service wires them, WebSocket clients attached), against a plain loop doing the same work in the same run. Synthetic, seeded traffic in the venue's real wire format (bench/gen.ts).",
    );
    debug('world');
    const w = world();
    debug('world built');
    const o = await run(dir, w, children, servers);
    report(o);
  } finally {
    clearTimeout(deadline);
    cleanup();
  }
  // uWS and LMDB handles closed; anything left (a pending timer of a closed room) must not hold the bench.
  setTimeout(() => process.exit(process.exitCode ?? 0), 200).unref();
}

await main();
