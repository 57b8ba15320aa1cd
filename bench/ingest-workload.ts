/**
 * The ingest bench's workload and the live service it runs through, shared by bench/ingest.bench.ts
 * and bench/replay-pipeline.bench.ts (which replays what this workload captured), so both measure the
 * same frames through the same service.
 *
 * Synthetic, seeded traffic (bench/gen.ts) in Kalshi's wire format; every fifth Kalshi market has a
 * Polymarket-protocol twin on venue_b (same question, outcome and close time) with a book, so
 * matching groups them and their book changes recompute arb/EV. The service is built by
 * src/compose.ts on a temporary DATA_DIR and listens on 127.0.0.1; only the venue's socket is
 * in-process (an injected `createWebSocket` that hands the runtime the frames as `ws` would, Buffers)
 * and the catalog comes from a local HTTP server. WebSocket clients (the project's load generator,
 * src/capacity/ws-load.ts) run in a child process, so the measured process's CPU is the service's
 * own: `node ingest-workload.js clients …` is that child.
 *
 * Env: INGEST_DELTAS, INGEST_MARKETS, INGEST_CLIENTS (per channel).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Subscription } from 'rxjs';
import type WebSocket from 'ws';
import { ingestFlow } from '../pipelines/ingest.js';
import { startPipelines } from '../pipelines/index.js';
import { WsLoad } from '../src/capacity/ws-load.js';
import { captureSettings, type Capture } from '../src/capture/index.js';
import { buildCore, buildDomain, buildHttp, type Core, type Domain, type HttpLayer } from '../src/compose.js';
import { loadConfig } from '../src/config/load.js';
import type { Config, VenueConfig } from '../src/config/schema.js';
import { wallClock, type StepClock } from '../src/core/clock.js';
import { log } from '../src/core/log.js';
import type { Level } from '../src/core/types.js';
import { applyEvent, type EngineState } from '../src/state/engine.js';
import type { VenueFeed } from '../src/venues/protocol.js';
import { createKalshiFeed } from '../src/venues/kalshi/feed.js';
import { PolymarketMapper } from '../src/venues/polymarket/mappers.js';
import type { WsHub } from '../src/ws/hub.js';
import { gammaMarket, kalshiStream, polyBookFrame, polyIds, seedModel, T0, venueOf } from './gen.js';
import { askChild, rng } from './lib.js';

const num = (name: string, def: number): number => Number(process.env[name] ?? def);
export const MARKETS = num('INGEST_MARKETS', 10_000);
export const LEVELS = 10;
export const DELTAS = num('INGEST_DELTAS', 100_000);
/** Kalshi subscriptions (sids) the markets are spread over: one per subscribe command of 200 tickers. */
export const SIDS = Math.max(1, Math.ceil(MARKETS / 200));
/** Every PAIR_EVERY-th Kalshi market has a venue_b twin. */
export const PAIR_EVERY = 5;
/** Clients per channel (orderbook, prices), each subscribed to SUBS markets. */
export const CLIENTS = num('INGEST_CLIENTS', 100);
export const SUBS = 50;
/** Frames handed over per event-loop turn, about what one 64 KiB socket read holds. */
export const BATCH = num('INGEST_BATCH', 256);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const immediate = (): Promise<void> => new Promise((r) => setImmediate(r));

export async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

// ---- the workload ---------------------------------------------------------------------------

export interface World {
  /** Kalshi `/markets` pages (status open), as the catalog server answers them. */
  readonly pages: string[];
  readonly tickers: string[];
  readonly snapshotOf: Map<string, string>;
  /** The `orderbook_delta` frames as the socket delivers them, and their generated receive times. */
  readonly frames: Buffer[];
  readonly local: Float64Array;
  /** venue_b: Gamma pages and YES-token `book` frames of the twins. */
  readonly polyPages: string[];
  readonly polyBooks: string[];
}

export function world(): World {
  const ks = kalshiStream({ seed: 11, markets: MARKETS, sids: SIDS, levels: LEVELS, deltas: DELTAS });
  const r = rng(12);
  const twins = polyIds(r, Math.ceil(MARKETS / PAIR_EVERY));
  const gamma: Record<string, unknown>[] = [];
  const polyBooks: string[] = [];
  let i = 0;
  const pages = ks.pages.map((text) => {
    const page = JSON.parse(text) as { cursor: string; markets: Record<string, unknown>[] };
    for (const m of page.markets) {
      if (i % PAIR_EVERY === 0) {
        const k = i / PAIR_EVERY;
        const who = m['yes_sub_title'] as string;
        m['title'] = `Will ${who} win the 2026 bench championship #${i}?`;
        gamma.push({ ...gammaMarket(r, k, twins[k]!), question: m['title'], groupItemTitle: who, endDate: m['close_time'] });
        polyBooks.push(polyBookFrame(twins[k]!, twins[k]!.yes, seedModel(r, LEVELS, 100), T0 - 1000, r));
      }
      i++;
    }
    return JSON.stringify(page);
  });
  const polyPages: string[] = [];
  for (let p = 0; p < gamma.length; p += 500) polyPages.push(JSON.stringify(gamma.slice(p, p + 500)));
  const tickers = ks.ids.map((m) => m.ticker);
  return {
    pages,
    tickers,
    snapshotOf: new Map(tickers.map((t, j) => [t, ks.snapshots[j]!])),
    frames: ks.deltas.map((d) => Buffer.from(d)),
    local: ks.local,
    polyPages,
    polyBooks,
  };
}

/** The Kalshi REST catalog: no series or events, the generated markets under status=open. */
function catalogServer(pages: readonly string[]): Promise<Server> {
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://catalog');
    let body = '{}';
    if (u.pathname.endsWith('/series')) body = '{"series":[]}';
    else if (u.pathname.endsWith('/events')) body = '{"cursor":"","events":[]}';
    else if (u.pathname.endsWith('/markets')) {
      const c = u.searchParams.get('cursor');
      body = u.searchParams.get('status') === 'open' ? pages[c ? Number(c.slice(1)) / 1000 : 0]! : '{"cursor":"","markets":[]}';
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * The venue's end of the feed's WebSocket, as the `ws` client presents it to
 * src/venues/common/socket.ts: opens on the next turn, answers each `orderbook_delta` subscribe
 * with the snapshots of its tickers, and delivers the frames the bench pushes as Buffers.
 */
export class VenueSocket extends EventEmitter {
  readyState = 0;
  snapshotsSent = 0;

  constructor(private readonly snapshotOf: ReadonlyMap<string, string>) {
    super();
    setImmediate(() => {
      this.readyState = 1;
      this.emit('open');
    });
  }

  send(data: string): void {
    const c = JSON.parse(data) as { cmd: string; params?: { channels?: string[]; market_tickers?: string[] } };
    if (c.cmd !== 'subscribe' || !c.params?.channels?.includes('orderbook_delta')) return;
    const tickers = c.params.market_tickers ?? [];
    setImmediate(() => {
      for (const t of tickers) {
        const s = this.snapshotOf.get(t);
        if (s === undefined || this.readyState !== 1) continue;
        this.frame(Buffer.from(s));
        this.snapshotsSent++;
      }
    });
  }

  frame(b: Buffer): void {
    this.emit('message', b, false);
  }

  ping(): void {}

  terminate(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.emit('close', 1006, Buffer.alloc(0));
  }
}

/** Top 10 levels of every Kalshi book, to check that every path ends in the same books. */
export function digest(state: EngineState, venue: VenueConfig, tickers: readonly string[]): string {
  const l = (x: Level[]): string => x.map((v) => `${v[0]}x${v[1]}`).join(',');
  return tickers
    .map((t) => {
      const b = state.books.instrument(venue.label, t);
      return b ? `${t}|${l(b.levelsOf(true, 10))}|${l(b.levelsOf(false, 10))}` : `${t}|missing`;
    })
    .join('\n');
}

// ---- the client process ----------------------------------------------------------------------

export interface ClientReport {
  readonly delivered: number;
  readonly lost: number;
  readonly failed: number;
  readonly lastFailure: string;
}

/** The child: CLIENTS orderbook and CLIENTS prices clients; answers `reset`, `report`, `close`. */
async function clientProcess(wsUrl: string, key: string, subsFile: string): Promise<void> {
  const subs = JSON.parse(readFileSync(subsFile, 'utf8')) as string[][];
  const loads = [new WsLoad(wsUrl, key, 'orderbook'), new WsLoad(wsUrl, key, 'prices')];
  for (const l of loads) await l.grow(subs.length, (i) => subs[i]!);
  const report = (): ClientReport => ({
    delivered: loads[0]!.delivered + loads[1]!.delivered,
    lost: loads[0]!.lost + loads[1]!.lost,
    failed: loads[0]!.failed + loads[1]!.failed,
    lastFailure: loads[0]!.lastFailure || loads[1]!.lastFailure,
  });
  process.on('message', (m: { kind: string }) => {
    if (m.kind === 'reset') for (const l of loads) l.reset();
    if (m.kind === 'close') {
      for (const l of loads) l.close();
      process.exit(0);
    }
    process.send!({ kind: m.kind, ...report() });
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ kind: 'ready', ...report() });
}

/** Sends `kind` to the client process and waits for its answer. */
export const ask = (child: ChildProcess, kind: string): Promise<ClientReport> => askChild<ClientReport>(child, kind);

/** The markets each of the CLIENTS clients of a channel holds, by index into the world's tickers. */
export function subscriptions(): number[][] {
  return Array.from({ length: CLIENTS }, (_, c) => Array.from({ length: SUBS }, (_, k) => (c * SUBS + k) % MARKETS));
}

// ---- the live service ------------------------------------------------------------------------

/** The service the workload runs through, built and primed, its clients subscribed; the pipelines unwired. */
export interface Live {
  readonly config: Config;
  readonly kv: VenueConfig;
  readonly clock: StepClock;
  readonly core: Core;
  readonly domain: Domain;
  readonly capture: Capture;
  /** The Kalshi feed without the capture log (a), and the one that appends every frame to it (cap). */
  readonly feed: VenueFeed;
  readonly capFeed: VenueFeed;
  readonly layer: HttpLayer;
  readonly hub: WsHub;
  readonly child: ChildProcess;
  /** Cross-venue groups after the prime. */
  readonly groups: number;
  /**
   * Wires the pipelines as src/service.ts does and waits for every snapshot: without capture, with
   * the service's capture log (`true`; `withNorm`: and the history thread's normalized cache), or
   * with another capture log (a `Capture` opened on another DATA_DIR).
   */
  wire(withCapture?: boolean | Capture, withNorm?: boolean): Promise<void>;
  /** Appends venue_b's Gamma pages and books to `capture` as REST documents, as a venue_b feed records what it receives (so a replay of the log has the twins too). */
  recordTwins(capture: Capture): void;
  unwire(): void;
  /** Hands every delta frame to the venue socket, BATCH per event-loop turn, through `each`; returns how many. */
  push(each: (b: Buffer, i: number) => void): Promise<number>;
  /** The socket of the current connection. */
  socket(): VenueSocket;
  /** Stops the clients and closes every room. */
  close(): Promise<void>;
}

/** The path of this module's compiled file: the client child runs it. */
const SELF = fileURLToPath(import.meta.url);

/**
 * Builds the service on `dir` (capture on, capture.replayCache on), with venue_b's twins in the
 * state as a restart finds them, primes it with one catalog walk, and starts the clients.
 */
export async function startLive(dir: string, w: World, children: ChildProcess[], servers: Server[]): Promise<Live> {
  log.level = 'silent';
  // capture.replayCache on (the default) for the ingest bench's capnorm workload: the history index's thread, which writes it, is wired only there.
  const config = loadConfig({ env: { DATA_DIR: dir }, overrides: { capture: { replayCache: true } } });
  const kv = venueOf(config.venues, 'kalshi');
  const pv = venueOf(config.venues, 'polymarket');
  // The service's clock (src/service.ts): wall time in steps, every event and flush a unit of it.
  const clock = wallClock();
  const core = buildCore(config, { log, clock });
  const capture = core.capture;
  if (capture === undefined) throw new Error('capture is off in the configuration; the bench needs it on');
  // venue_b as a restart finds it: the twins' catalog and books already in the state.
  const pm = new PolymarketMapper(pv);
  for (const text of [...w.polyPages, ...w.polyBooks]) for (const ev of pm.map(JSON.parse(text), Date.now())) applyEvent(core.state, ev);
  const recordTwins = (c: Capture): void => {
    const vc = c.venue(pv.label);
    for (const text of [...w.polyPages, ...w.polyBooks]) vc.doc(JSON.parse(text), clock.now());
  };
  const domain = buildDomain(core);

  const catalog = await catalogServer(w.pages);
  servers.push(catalog);
  const addr = catalog.address() as { port: number };
  let sock: VenueSocket | undefined;
  // The same feed twice: one without the capture log (a), one that appends every frame to it (cap),
  // as src/service.ts wires it; only one is subscribed at a time.
  const kalshiFeed = (sink: Capture | undefined): VenueFeed =>
    createKalshiFeed(
      {
        venue: kv,
        endpoints: { rest: `http://127.0.0.1:${addr.port}/trade-api/v2`, ws: 'ws://venue.invalid/trade-api/ws/v2' },
        ingest: config.ingest,
        log,
        clock,
        capture: sink,
      },
      { env: {}, runtime: { createWebSocket: () => (sock = new VenueSocket(w.snapshotOf)) as unknown as WebSocket } },
    );
  const feed = kalshiFeed(undefined);
  const capFeed = kalshiFeed(capture);
  const layer = buildHttp(core, domain, { feeds: [feed], hub: { subscribeRate: 1_000_000 } });
  const hub = layer.ws!;
  const port = await layer.http.listen('127.0.0.1', 0);
  const key = core.keys.create('enterprise', 'ingest bench').key;

  let flows: Subscription | undefined;
  const wire = async (withCapture: boolean | Capture = false, withNorm = false): Promise<void> => {
    sock = undefined;
    const c = withCapture === true ? capture : withCapture === false ? undefined : withCapture;
    const f = c === undefined ? feed : c === capture ? capFeed : kalshiFeed(c);
    flows = startPipelines({
      state: core.state,
      ingest: ingestFlow([f], core.state, log, clock),
      capture: c ? { capture: c, settings: captureSettings(config), history: withNorm ? core.bookHistory : undefined } : undefined,
      persistence: core.persistence,
      persistenceOptions: { snapshotIntervalMs: config.persistence.snapshotIntervalMs },
      rooms: domain,
      hub,
      log,
      clock,
    });
    await until(() => sock !== undefined && sock.snapshotsSent === MARKETS, 30_000, 'the feed subscribed every market');
    // Matching indexes the catalog a slice per turn and re-groups a window after the last slice.
    await until(() => domain.matching.settled, 30_000, 'matching grouped the catalog');
    // The last snapshots marked every group dirty and touched the turn, whose flush (setImmediate)
    // recomputes them: wait for it here, or it can run inside the first timed batch. The poll
    // above resumes in the timers phase, and when the clients' answer to the run's `reset` came in
    // before the check phase, the run started first and its first flush recomputed all 2,000 groups
    // (BENCHMARKS.md issue 34 `ingest22`: 14,021 recomputes in such rounds against 12,049).
    await immediate();
  };
  const unwire = (): void => {
    flows?.unsubscribe();
    flows = undefined;
  };

  // Prime: one catalog walk so the Kalshi markets exist, then the clients subscribe to them.
  await wire();
  const groups = [...domain.matching.served()].length;
  const subsFile = join(dir, 'subs.json');
  writeFileSync(subsFile, JSON.stringify(subscriptions().map((ms) => ms.map((m) => w.tickers[m]!))));
  const child = fork(SELF, ['clients', `ws://127.0.0.1:${port}/api/v2/ws`, key, subsFile], {
    execArgv: process.execArgv.filter((a) => !a.startsWith('--cpu-prof')),
  });
  children.push(child);
  const ready = await ask(child, 'ready');
  if (ready.failed > 0) throw new Error(`${ready.failed} clients failed to subscribe: ${ready.lastFailure}`);
  unwire();

  const push = async (each: (b: Buffer, i: number) => void): Promise<number> => {
    const fr = w.frames;
    for (let i = 0; i < fr.length; i += BATCH) {
      const end = Math.min(fr.length, i + BATCH);
      for (let k = i; k < end; k++) each(fr[k]!, k);
      await immediate();
    }
    return fr.length;
  };
  const close = async (): Promise<void> => {
    unwire();
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.send({ kind: 'close' });
    });
    hub.close();
    layer.http.close();
    domain.matching.close();
    await domain.alerts.close();
    await domain.ledger.close();
    await core.persistence.close();
    await core.bookHistory?.close();
    await capture.close();
  };
  const socket = (): VenueSocket => {
    if (sock === undefined) throw new Error('no venue socket: the pipelines are not wired');
    return sock;
  };
  return { config, kv, clock, core, domain, capture, feed, capFeed, layer, hub, child, groups, wire, unwire, recordTwins, push, socket, close };
}

if (process.argv[1] === SELF && process.argv[2] === 'clients') await clientProcess(process.argv[3]!, process.argv[4]!, process.argv[5]!);
