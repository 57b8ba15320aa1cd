import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { from, type Subscription } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type WebSocket from 'ws';
import { loadConfig } from '../../../src/config/load.js';
import { log } from '../../../src/core/log.js';
import type { FeedEvent, MarketStatusChange, MarketUpsert, NormalizedEvent } from '../../../src/core/types.js';
import { feedEvent, mapFrames } from '../../../src/venues/common/frames.js';
import { createVenueFeed, type FeedRuntime, type FeedSession } from '../../../src/venues/common/runtime.js';
import type { Mapper } from '../../../src/venues/common/mapper.js';
import { KalshiMapper } from '../../../src/venues/kalshi/mappers.js';
import { PolymarketMapper } from '../../../src/venues/polymarket/mappers.js';
import type { VenueFeed } from '../../../src/venues/protocol.js';
import { ScriptedSocket } from '../../support/scripted-socket.js';

/**
 * The feed runtime (src/venues/common/runtime.ts) driven with fake timers: a scripted WebSocket in
 * place of the `ws` client (it opens, closes and delivers frames when the test says so), the real
 * Kalshi mapper and recorded Kalshi payloads from test/fixtures/kalshi.
 */

const cfg = loadConfig({ env: {} });
const venue = cfg.venues.find((v) => v.protocol === 'kalshi')!;
const ingest = { ...cfg.ingest, reconnectMinMs: 100, reconnectMaxMs: 1_000, heartbeatMs: 60_000, catalogRefreshMs: 10_000 };
const T0 = 1_800_000_000_000;
const fixture = (name: string): unknown => JSON.parse(readFileSync(join(__dirname, '../../fixtures/kalshi', name), 'utf8')) as unknown;

interface Harness {
  feed: VenueFeed;
  events: NormalizedEvent[];
  sockets: ScriptedSocket[];
  rt: () => FeedRuntime;
  sub: Subscription;
}

const subs: Subscription[] = [];

/** A feed on the runtime with the Kalshi mapper; `start` is what the protocol would set going. */
function harness(
  start: (rt: FeedRuntime) => void,
  hooks: Partial<FeedSession> = {},
  mapper = (rt: FeedRuntime): Mapper => new KalshiMapper(rt.venue, rt.log, { stats: rt.stats }),
): Harness {
  const sockets: ScriptedSocket[] = [];
  let runtime: FeedRuntime | undefined;
  const feed = createVenueFeed(
    { venue, endpoints: { rest: 'http://127.0.0.1:9/', ws: 'ws://127.0.0.1:9/' }, ingest, log },
    'kalshi',
    (rt) => {
      runtime = rt;
      return { ...hooks, mapper: mapper(rt), start: () => start(rt) };
    },
    {
      createWebSocket: () => {
        const s = new ScriptedSocket();
        sockets.push(s);
        return s as unknown as WebSocket;
      },
    },
  );
  const events: NormalizedEvent[] = [];
  const sub = feed.events$.subscribe((e) => events.push(e));
  subs.push(sub);
  return { feed, events, sockets, rt: () => runtime!, sub };
}

const feeds = (events: readonly NormalizedEvent[]): FeedEvent[] => events.filter((e): e is FeedEvent => e.type === 'feed');

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  for (const s of subs.splice(0)) s.unsubscribe();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('feed runtime: reconnects', () => {
  it('retries a failing connection on the exponential backoff schedule, silent until it opens; one outage is one disconnected', () => {
    // Jitter draws the delay between half and all of the exponential step; pin it at three quarters.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const h = harness((rt) => void rt.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined }));
    expect(h.sockets).toHaveLength(1);
    // Attempt n fails → next after 0.75 × min(max, min × 2^n): 150, 300, 600, 750 (capped), 750.
    for (const delay of [150, 300, 600, 750, 750]) {
      h.sockets[h.sockets.length - 1]!.fail();
      const n = h.sockets.length;
      vi.advanceTimersByTime(delay - 1);
      expect(h.sockets).toHaveLength(n);
      vi.advanceTimersByTime(1);
      expect(h.sockets).toHaveLength(n + 1);
    }
    expect(h.sockets.map((s) => s.createdAt - T0)).toEqual([0, 150, 450, 1050, 1800, 2550]);
    expect(feeds(h.events)).toEqual([]);

    h.sockets[5]!.open();
    expect(feeds(h.events).map((e) => [e.state, e.detail])).toEqual([['connected', 'after 6 attempts']]);
    // An open connection resets the schedule: its close retries after 0.75 × min.
    h.sockets[5]!.fail(1001, 'going away');
    expect(feeds(h.events).map((e) => [e.state, e.detail])).toEqual([
      ['connected', 'after 6 attempts'],
      ['disconnected', '1001 going away; retry in 75 ms'],
    ]);
    vi.advanceTimersByTime(74);
    expect(h.sockets).toHaveLength(6);
    vi.advanceTimersByTime(1);
    expect(h.sockets).toHaveLength(7);
    h.sockets[6]!.open();
    expect(feeds(h.events).map((e) => e.state)).toEqual(['connected', 'disconnected', 'connected']);
    expect(h.feed.stats.reconnects).toBe(1);
  });

  it('unsubscribing stops the retries', () => {
    const h = harness((rt) => void rt.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined }));
    h.sockets[0]!.fail();
    h.sub.unsubscribe();
    vi.advanceTimersByTime(60_000);
    expect(h.sockets).toHaveLength(1);
  });

  it('sends the protocol subscribe on every open and its keepalive text while open', () => {
    const h = harness(
      (rt) =>
        void rt.stream({
          url: 'ws://127.0.0.1:9/',
          onOpen: (send) => send('{"cmd":"subscribe"}'),
          keepalive: { text: 'PING', everyMs: 1_000 },
        }),
    );
    h.sockets[0]!.open();
    vi.advanceTimersByTime(2_500);
    expect(h.sockets[0]!.sent).toEqual(['{"cmd":"subscribe"}', 'PING', 'PING']);
    h.sockets[0]!.fail();
    vi.advanceTimersByTime(5_000);
    expect(h.sockets[0]!.sent).toHaveLength(3);
    h.sockets[1]!.open();
    expect(h.sockets[1]!.sent).toEqual(['{"cmd":"subscribe"}']);
  });
});

describe('feed runtime: catalog loop', () => {
  it('retries a failed walk on backoff (min, doubling), then refreshes every catalogRefreshMs', async () => {
    const calls: number[] = [];
    const h = harness((rt) =>
      rt.catalog(async () => {
        calls.push(Date.now() - T0);
        if (calls.length <= 3) throw new Error('503 unavailable');
        return `${calls.length} walks`;
      }),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual([0]);
    await vi.advanceTimersByTimeAsync(99);
    expect(calls).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([0, 100]);
    await vi.advanceTimersByTimeAsync(200 + 400);
    expect(calls).toEqual([0, 100, 300, 700]);
    expect(feeds(h.events).map((e) => [e.state, e.detail])).toEqual([
      ['error', 'catalog: 503 unavailable'],
      ['error', 'catalog: 503 unavailable'],
      ['error', 'catalog: 503 unavailable'],
      ['catalog', '4 walks'],
    ]);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(calls).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([0, 100, 300, 700, 10_700]);
    h.sub.unsubscribe();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(5);
  });
});

describe('feed runtime: frame path', () => {
  it('de-duplicates market upserts: an unchanged one is held back, a changed one or one after a status change passes', () => {
    const h = harness(() => undefined);
    const page = fixture('rest_markets_page_first2_2026-09-13.json');
    h.rt().frame(page, T0);
    const first = h.events.filter((e): e is MarketUpsert => e.type === 'market');
    expect(first).toHaveLength(2);
    // The same page again, later: same records, other timestamps.
    h.rt().frame(page, T0 + 1_000);
    expect(h.events).toHaveLength(2);

    const [a, b] = first as [MarketUpsert, MarketUpsert];
    h.rt().emit({ ...a, title: `${a.title} (renamed)` });
    expect(h.events).toHaveLength(3);
    const status: MarketStatusChange = { type: 'market_status', venue: venue.label, timestamp: T0, localTimestamp: T0, marketId: b.marketId, status: 'closed' };
    h.rt().emit(status);
    h.rt().emit(b);
    expect(h.events.slice(3)).toEqual([status, b]);
  });

  it('mapFrames applies the same de-duplication', () => {
    const page = JSON.stringify(fixture('rest_markets_page_first2_2026-09-13.json'));
    const out: NormalizedEvent[] = [];
    from([
      { data: page, localTimestamp: T0 },
      { data: page, localTimestamp: T0 + 1 },
    ])
      .pipe(mapFrames(new KalshiMapper(venue)))
      .subscribe((e) => out.push(e));
    expect(out.map((e) => e.type)).toEqual(['market', 'market']);
  });

  it('counts a frame that is not JSON as malformed json and drops it; the next frame maps', () => {
    const h = harness((rt) => void rt.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined }));
    h.sockets[0]!.open();
    const [snapshot] = fixture('ws_orderbook_snapshot_then_delta_spec_example.json') as unknown[];
    const text = JSON.stringify(snapshot);
    h.sockets[0]!.frame(text.slice(0, 40));
    expect(h.feed.stats.malformed.get('json')).toBe(1);
    expect(h.feed.stats.frames).toBe(1);
    expect(h.events.map((e) => e.type)).toEqual(['feed']);
    h.sockets[0]!.frame(text);
    expect(h.events.map((e) => e.type)).toEqual(['feed', 'book_snapshot']);
    expect(h.feed.stats.malformedTotal).toBe(1);
  });

  it("a protocol's control text (Polymarket's PONG) is counted as ignored, never parsed; another protocol's mapper finds it malformed", () => {
    const poly = harness(
      (rt) => void rt.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined }),
      {},
      (rt) => new PolymarketMapper(rt.venue, rt.log, { stats: rt.stats }),
    );
    poly.sockets[0]!.open();
    poly.sockets[0]!.frame('PONG');
    expect(poly.feed.stats.ignored).toBe(1);
    expect(poly.feed.stats.malformedTotal).toBe(0);
    const kalshi = harness((rt) => void rt.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined }));
    kalshi.sockets[0]!.open();
    kalshi.sockets[0]!.frame('PONG');
    expect(kalshi.feed.stats.malformed.get('json')).toBe(1);
  });

  it('hooks see frames and events in order', () => {
    const seen: string[] = [];
    const h = harness((rt) => void rt.stream({ url: 'ws://127.0.0.1:9/', onOpen: () => undefined }), {
      inspect: (raw) => seen.push(`frame ${(raw as { type: string }).type}`),
      onEvent: (e) => seen.push(`event ${e.type}`),
      afterFrame: () => seen.push('after'),
    });
    h.sockets[0]!.open();
    const [snapshot] = fixture('ws_orderbook_snapshot_then_delta_spec_example.json') as unknown[];
    h.sockets[0]!.frame(JSON.stringify(snapshot));
    expect(seen).toEqual(['frame orderbook_snapshot', 'event book_snapshot', 'after']);
  });
});

describe('feed runtime: feed events', () => {
  it('are built with the venue, one timestamp for both clocks, and no undefined fields', () => {
    expect(feedEvent('venue_a', 'gap', T0, undefined, 'sid:2')).toEqual({
      type: 'feed',
      venue: 'venue_a',
      timestamp: T0,
      localTimestamp: T0,
      state: 'gap',
      instrument: 'sid:2',
    });
    expect(Object.keys(feedEvent('venue_a', 'catalog', T0))).toEqual(['type', 'venue', 'timestamp', 'localTimestamp', 'state']);
    const h = harness((rt) => {
      vi.setSystemTime(T0 + 5);
      rt.feed('error', 'no WebSocket endpoint configured; catalog only');
    });
    expect(h.events).toEqual([
      { type: 'feed', venue: venue.label, timestamp: T0 + 5, localTimestamp: T0 + 5, state: 'error', detail: 'no WebSocket endpoint configured; catalog only' },
    ]);
  });

  it('polled venues: connected on the first answer, error once per outage, connected again after it (a reconnect)', () => {
    const h = harness(() => undefined);
    const rt = h.rt();
    rt.reachable();
    rt.reachable();
    rt.unreachable(new Error('ECONNREFUSED'));
    rt.unreachable(new Error('ECONNREFUSED'));
    rt.reachable();
    expect(feeds(h.events).map((e) => [e.state, e.detail])).toEqual([
      ['connected', undefined],
      ['error', 'ECONNREFUSED'],
      ['connected', undefined],
    ]);
    expect(h.feed.stats.reconnects).toBe(1);
  });
});
