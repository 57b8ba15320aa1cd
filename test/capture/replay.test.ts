import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { from, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { Capture, CaptureStore, readBatches, ReplayFeed, replayItems, type ReplayItem } from '../../src/capture/index.js';
import { loadConfig } from '../../src/config/load.js';
import type { Protocol, VenueConfig } from '../../src/config/schema.js';
import { VirtualClock, type Clock } from '../../src/core/clock.js';
import { log } from '../../src/core/log.js';
import type { NormalizedEvent, Trade } from '../../src/core/types.js';
import { mapFrames } from '../../src/venues/common/frames.js';
import type { Mapper } from '../../src/venues/common/mapper.js';
import { createVenueFeed, type FeedRuntime } from '../../src/venues/common/runtime.js';
import type { FeedStats } from '../../src/venues/common/stats.js';
import { KalshiMapper } from '../../src/venues/kalshi/mappers.js';
import { PolymarketMapper } from '../../src/venues/polymarket/mappers.js';
import { ScriptedSocket } from '../support/scripted-socket.js';

/**
 * Replay reproduces live: the real Kalshi mapper on the feed runtime with a capture sink (a scripted
 * WebSocket delivers recorded frames, the connection closes, the protocol builds events and reads a
 * REST page), then the capture read back through ReplayFeed gives the same normalized events, in
 * the same order, as the live feed emitted. Recorded frames from test/fixtures.
 */

const cfg = loadConfig({ env: {} });
const kalshi = cfg.venues.find((v) => v.protocol === 'kalshi')!;
const poly = cfg.venues.find((v) => v.protocol === 'polymarket')!;
const T0 = 1_800_000_000_000;
const fixture = (path: string): unknown => JSON.parse(readFileSync(join(__dirname, '../fixtures', path), 'utf8')) as unknown;
const frames = (path: string): string[] => (fixture(path) as unknown[]).map((f) => JSON.stringify(f));

const dirs: string[] = [];
const subs: Subscription[] = [];
afterEach(() => {
  for (const s of subs.splice(0)) s.unsubscribe();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function capture(): Capture {
  const dir = mkdtempSync(join(tmpdir(), 'crossbook-replay-'));
  dirs.push(dir);
  const clock: Clock = new VirtualClock(T0 + 5_000);
  return new Capture(new CaptureStore(dir), { clock, log });
}

async function replayed(cap: Capture): Promise<ReplayItem[]> {
  await cap.close();
  const out: ReplayItem[] = [];
  for await (const item of replayItems(readBatches(cap.store, { from: 0, to: Number.MAX_SAFE_INTEGER }), cfg.venues, log)) out.push(item);
  return out;
}

const eventsOf = (items: readonly ReplayItem[]): NormalizedEvent[] => items.flatMap((i) => (i.type === 'event' ? [i.event] : []));

/** A feed on the runtime with a capture sink, its socket scripted by the test: what it emits live, its runtime, its sockets. */
function scriptedFeed(
  cap: Capture,
  venue: VenueConfig,
  protocol: Protocol,
  mapper: (r: FeedRuntime) => Mapper,
): { live: NormalizedEvent[]; rt: FeedRuntime; sockets: ScriptedSocket[]; stats: FeedStats } {
  const sockets: ScriptedSocket[] = [];
  let rt: FeedRuntime | undefined;
  const ingest = { ...cfg.ingest, heartbeatMs: 600_000, reconnectMinMs: 600_000, reconnectMaxMs: 600_000 };
  const feed = createVenueFeed(
    { venue, endpoints: { rest: 'http://127.0.0.1:9/', ws: 'ws://127.0.0.1:9/' }, ingest, log, capture: cap },
    protocol,
    (r) => {
      rt = r;
      return { mapper: mapper(r), start: () => void r.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined }) };
    },
    {
      createWebSocket: () => {
        const s = new ScriptedSocket();
        sockets.push(s);
        return s as unknown as WebSocket;
      },
    },
  );
  const live: NormalizedEvent[] = [];
  subs.push(feed.events$.subscribe((e) => live.push(e)));
  return { live, rt: rt!, sockets, stats: feed.stats };
}

describe('replay through the live frame path', () => {
  it('Kalshi on the feed runtime: frames, a close, built events and a REST page give the live events again', async () => {
    const cap = capture();
    const { live, rt, sockets, stats } = scriptedFeed(cap, kalshi, 'kalshi', (r) => new KalshiMapper(r.venue, r.log, { stats: r.stats }));
    rt.frame(fixture('kalshi/rest_markets_page_first2_2026-09-13.json'), T0);
    sockets[0]!.open();
    for (const f of [...frames('kalshi/ws_orderbook_snapshot_then_delta_spec_example.json'), ...frames('kalshi/ws_ticker_capture_2026-02-12.json')])
      sockets[0]!.frame(f);
    sockets[0]!.frame('{"type":"orderbook_delta","sid":2,'); // cut off: counted as malformed live and on replay
    sockets[0]!.fail(1001, 'going away');
    // A frame after the close: the mapper was reset, live and on replay.
    sockets[0]!.frame(frames('kalshi/ws_orderbook_snapshot_then_delta_spec_example.json')[1]!);
    const trade: Trade = {
      type: 'trade',
      venue: kalshi.label,
      timestamp: T0,
      localTimestamp: T0 + 1,
      marketId: 'FED-23DEC-T3.00',
      tradeId: 't1',
      price: 5000,
      yesPrice: Number.NaN,
      size: 3,
    };
    rt.emit(trade);
    rt.feed('catalog', '2 markets');
    const kinds = new Set(live.map((e) => e.type));
    // (The spec example's delta takes a level below zero: a gap, live and on replay.)
    expect([...kinds].sort()).toEqual(['book_snapshot', 'feed', 'market', 'quote', 'trade']);

    const items = await replayed(cap);
    expect(eventsOf(items)).toEqual(live);
    // Events carry the sequence number of the record they came from, in order.
    const seqs = items.map((i) => i.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(stats.malformedTotal).toBe(1);
  });

  it("Polymarket as the live feed builds its mapper: a last trade is a last price with the data-api on, the catalog's tokens are learned, and the capture says so", async () => {
    const cap = capture();
    // The mapper as src/venues/polymarket/feed.ts makes it when the data-api gives the trades.
    const { live, rt, sockets } = scriptedFeed(cap, poly, 'polymarket', (r) => new PolymarketMapper(r.venue, r.log, { stats: r.stats, lastTradeAs: 'quote' }));
    // The catalog walk's upsert of the market of two of the recorded trades (its tokens, YES then NO).
    rt.emit({
      type: 'market',
      venue: poly.label,
      timestamp: T0,
      localTimestamp: T0,
      marketId: '0x14002070e74acaf96f70c8dfb881586b156c814fac0c1ac417b84c6c76687d00',
      title: 'A recorded market',
      status: 'active',
      yesInstrument: '7849332184617640056758089974170387917558941201674921732369975950049491747956',
      noInstrument: '1627500284739545390204314775735988068784669364445492030335161034375823784781',
    });
    sockets[0]!.open();
    for (const f of frames('polymarket/ws_last_trade_price_captures_2026-02-12.json')) sockets[0]!.frame(f);
    // Live: the known market's last trades are last prices (NO's in YES terms), no trades; the others dropped.
    const prices = live.filter((e) => e.type === 'quote');
    expect(prices.length).toBeGreaterThan(0);
    expect(prices.every((q) => q.type === 'quote' && q.lastPrice !== undefined && Number.isFinite(q.lastPrice))).toBe(true);
    expect(live.filter((e) => e.type === 'trade')).toEqual([]);

    const items = await replayed(cap);
    expect(eventsOf(items)).toEqual(live);
  });

  it('a mapper record the protocol cannot take is logged and the default mapper replays', async () => {
    const cap = capture();
    const v = cap.venue(poly.label);
    v.session({ lastTradeAs: 'sometimes' });
    const texts = frames('polymarket/ws_price_change_burst_capture_2026-09-29.json');
    texts.forEach((t, i) => v.frame(t, 1, T0 + i));
    const live: NormalizedEvent[] = [];
    from(texts.map((data, i) => ({ data, localTimestamp: T0 + i })))
      .pipe(mapFrames(new PolymarketMapper(poly)))
      .subscribe((e) => live.push(e));
    expect(live.length).toBeGreaterThan(0);
    expect(eventsOf(await replayed(cap))).toEqual(live);
  });

  it('Polymarket frames with a scoped reset and flush markers: the same events as the mapper path, flushes where they were marked', async () => {
    const cap = capture();
    const texts = frames('polymarket/ws_price_change_burst_capture_2026-09-29.json');
    const v = cap.venue(poly.label);
    const half = Math.floor(texts.length / 2);
    texts.slice(0, half).forEach((t, i) => v.frame(t, 1, T0 + i));
    cap.markFlush(T0 + half);
    cap.markFlush(T0 + half); // nothing captured since: not marked again
    const instrument = '76670567130917723816490572615540605537878462672464291990940067659127658071111';
    v.reset(1, [instrument]);
    texts.slice(half).forEach((t, i) => v.frame(t, 1, T0 + half + i));
    cap.markFlush(T0 + texts.length);

    // Live: the same frames through the frame path with the same reset in between.
    const mapper = new PolymarketMapper(poly);
    const live: NormalizedEvent[] = [];
    const push = (list: string[], t0: number): void =>
      void from(list.map((data, i) => ({ data, localTimestamp: t0 + i })))
        .pipe(mapFrames(mapper))
        .subscribe((e) => live.push(e));
    push(texts.slice(0, half), T0);
    mapper.resetInstruments([instrument]);
    push(texts.slice(half), T0 + half);

    const items = await replayed(cap);
    expect(eventsOf(items)).toEqual(live);
    expect(items.filter((i) => i.type === 'flush')).toEqual([
      { type: 'flush', seq: half + 1, at: T0 + half },
      { type: 'flush', seq: texts.length + 3, at: T0 + texts.length },
    ]);
    // The reset reached the mapper: the token's deltas before its next book were dropped.
    expect(live.filter((e) => e.type === 'book_snapshot')).toHaveLength(2);
  });

  it("Polymarket's PONG keep-alive answers in the capture are skipped on replay as live skips them, not counted malformed", async () => {
    const cap = capture();
    const texts = frames('polymarket/ws_price_change_burst_capture_2026-09-29.json').slice(0, 6);
    const v = cap.venue(poly.label);
    // As captured live: the server's text answers to our PING between the market frames.
    texts.forEach((t, i) => {
      v.frame(t, 1, T0 + 2 * i);
      v.frame('PONG', 1, T0 + 2 * i + 1);
    });
    await cap.close();
    const feed = new ReplayFeed(cfg.venues, log);
    const items: ReplayItem[] = [];
    for await (const batch of feed.items(readBatches(cap.store, { from: 0, to: Number.MAX_SAFE_INTEGER }))) items.push(...batch);
    const live: NormalizedEvent[] = [];
    from(texts.map((data, i) => ({ data, localTimestamp: T0 + 2 * i })))
      .pipe(mapFrames(new PolymarketMapper(poly)))
      .subscribe((e) => live.push(e));
    expect(eventsOf(items)).toEqual(live);
    const stats = feed.mapper(poly.label)!.stats;
    expect(stats.malformedTotal).toBe(0);
    expect(stats.ignored).toBeGreaterThanOrEqual(texts.length);
  });

  it('records of a venue not in the registry are skipped, not fatal', async () => {
    const cap = capture();
    cap.venue('venue_z').frame('{"x":1}', 1, T0);
    const feed = new ReplayFeed(cfg.venues, log);
    const items: ReplayItem[] = [];
    await cap.close();
    for await (const batch of feed.items(readBatches(cap.store, { from: 0, to: Number.MAX_SAFE_INTEGER }))) items.push(...batch);
    expect(items).toEqual([]);
  });
});
