import WebSocket from 'ws';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { serve } from '../../../src/sim/protocols/kalshi.js';
import type { SimServer } from '../../../src/sim/types.js';
import { createWorld, type SimWorld } from '../../../src/sim/world.js';
import { mapRestOrderbooks } from '../../../src/venues/kalshi/mappers.js';
import {
  kalshiEventResponseSchema,
  kalshiEventsPageSchema,
  kalshiExchangeStatusSchema,
  kalshiMarketResponseSchema,
  kalshiMarketsPageSchema,
  kalshiOrderbookResponseSchema,
  kalshiOrderbooksSchema,
  kalshiRestErrorSchema,
  kalshiSeriesListSchema,
  wsServerFrameSchema,
} from '../../../src/venues/kalshi/raw.js';

/** The simulated Kalshi server speaks the shapes of the real fixtures (SYNTHETIC DATA). */

const venue = loadConfig({ env: {} }).venues.find((v) => v.protocol === 'kalshi')!;
let world: SimWorld;
let server: SimServer;
const cleanups: (() => unknown)[] = [];

beforeAll(async () => {
  world = createWorld({ seed: 5, venues: [venue], ticksPerSecond: 0 });
  server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
  return async () => {
    await server.close();
  };
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const get = async (path: string): Promise<{ status: number; body: unknown }> => {
  const r = await fetch(server.endpoints.rest + path);
  return { status: r.status, body: (await r.json()) as unknown };
};

describe('simulated Kalshi REST', () => {
  it('walks /markets by cursor: every listing once, every object valid', async () => {
    const seen: string[] = [];
    let cursor = '';
    for (let i = 0; i < 20; i++) {
      const { body } = await get(`/markets?limit=40${cursor ? `&cursor=${cursor}` : ''}`);
      const page = kalshiMarketsPageSchema.parse(body);
      seen.push(...(page.markets ?? []).map((m) => m.ticker));
      cursor = page.cursor ?? '';
      if (!cursor) break;
    }
    expect(seen).toEqual(world.listings(venue.label).map((l) => l.id));
  });

  it('filters by status, series, event and tickers', async () => {
    const ls = world.listings(venue.label);
    const open = kalshiMarketsPageSchema.parse((await get('/markets?status=open&limit=1000')).body);
    expect(open.markets!.map((m) => m.ticker)).toEqual(ls.filter((l) => l.status === 'active').map((l) => l.id));
    expect(new Set(open.markets!.map((m) => m.status))).toEqual(new Set(['active']));
    const settled = kalshiMarketsPageSchema.parse((await get('/markets?status=settled&limit=1000')).body);
    expect(settled.markets!.map((m) => m.ticker)).toEqual(ls.filter((l) => l.status === 'finalized').map((l) => l.id));
    const l = ls[0]!;
    const bySeries = kalshiMarketsPageSchema.parse((await get(`/markets?series_ticker=${l.ids['series_ticker']}&limit=1000`)).body);
    expect(bySeries.markets!.every((m) => m.event_ticker.startsWith(l.ids['series_ticker']!))).toBe(true);
    const byEvent = kalshiMarketsPageSchema.parse((await get(`/markets?event_ticker=${l.ids['event_ticker']}`)).body);
    expect(byEvent.markets!.map((m) => m.ticker)).toContain(l.id);
    const byTickers = kalshiMarketsPageSchema.parse((await get(`/markets?tickers=${ls[1]!.id},${ls[0]!.id}`)).body);
    expect(byTickers.markets!.map((m) => m.ticker)).toEqual([ls[0]!.id, ls[1]!.id]);
  });

  it('answers bad requests and unknown tickers with the venue error body', async () => {
    for (const path of ['/markets?status=open,bogus', '/markets?limit=5000', '/markets?cursor=zzz', '/markets/orderbooks']) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(kalshiRestErrorSchema.parse(r.body).error.code).toBe('bad_request');
    }
    const r = await get('/markets/NOPE-1');
    expect(r.status).toBe(404);
    expect(kalshiRestErrorSchema.parse(r.body).error.code).toBe('not_found');
  });

  it('serves books ascending with the best bid last, which map back to the listing book', async () => {
    const ls = world
      .listings(venue.label)
      .filter((l) => l.status === 'active')
      .slice(0, 5);
    const doc = kalshiOrderbooksSchema.parse((await get(`/markets/orderbooks?tickers=${ls.map((l) => l.id).join(',')}`)).body);
    const yes = doc.orderbooks![0]!.orderbook_fp.yes_dollars!;
    expect(Number(yes[0]![0])).toBeLessThan(Number(yes[yes.length - 1]![0]));
    const snaps = mapRestOrderbooks(venue, doc, 0, 0);
    expect(snaps.map((s) => [s.instrument, s.bids, s.asks])).toEqual(ls.map((l) => [l.id, l.book.bids.levels(), l.book.asks.levels()]));
    const one = kalshiOrderbookResponseSchema.parse((await get(`/markets/${ls[0]!.id}/orderbook?depth=2`)).body);
    expect(one.orderbook_fp.yes_dollars).toHaveLength(2);
  });

  it('serves market, events (nested or not), series and exchange status in the venue shapes', async () => {
    const l = world.listings(venue.label)[0]!;
    expect(kalshiMarketResponseSchema.parse((await get(`/markets/${l.id}`)).body).market).toMatchObject({
      ticker: l.id,
      title: l.title,
      yes_sub_title: l.outcome,
    });
    const nested = kalshiEventResponseSchema.parse((await get(`/events/${l.ids['event_ticker']}?with_nested_markets=true`)).body);
    expect(nested.markets).toEqual([]);
    expect(nested.event).toMatchObject({ event_ticker: l.ids['event_ticker'], series_ticker: l.ids['series_ticker'], title: l.eventTitle });
    expect(nested.event.markets!.length).toBeGreaterThan(0);
    const flat = kalshiEventResponseSchema.parse((await get(`/events/${l.ids['event_ticker']}`)).body);
    expect(flat.markets!.length).toBe(nested.event.markets!.length);
    const events = kalshiEventsPageSchema.parse((await get('/events?status=open&limit=200')).body);
    expect(events.events!.length).toBeGreaterThan(10);
    const series = kalshiSeriesListSchema.parse((await get('/series')).body);
    expect(series.series!.find((s) => s.ticker === l.ids['series_ticker'])).toMatchObject({
      category: l.category,
      tags: [...l.tags],
      frequency: l.ids['frequency'],
      fee_type: 'quadratic',
    });
    const sports = kalshiSeriesListSchema.parse((await get('/series?category=sports')).body);
    expect(sports.series!.every((s) => s.category === 'Sports')).toBe(true);
    expect(kalshiExchangeStatusSchema.parse((await get('/exchange/status')).body).trading_active).toBe(true);
  });
});

/** A raw client that records every text frame. */
async function client(): Promise<{
  ws: WebSocket;
  texts: string[];
  frames: () => Record<string, unknown>[];
  send: (c: unknown) => void;
  until: (pred: () => boolean) => Promise<void>;
}> {
  const ws = new WebSocket(server.endpoints.ws!);
  const texts: string[] = [];
  ws.on('message', (d) => texts.push(d.toString()));
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  cleanups.push(() => ws.terminate());
  const frames = (): Record<string, unknown>[] =>
    texts.flatMap((t) => {
      try {
        return [JSON.parse(t) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  const until = async (pred: () => boolean): Promise<void> => {
    const end = Date.now() + 30_000;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timeout; got ${texts.slice(-5).join('\n')}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return { ws, texts, frames, send: (c) => ws.send(typeof c === 'string' ? c : JSON.stringify(c)), until };
}

/** Per-sid seq must go up by one on every frame that carries one. */
function seqOk(frames: Record<string, unknown>[]): boolean {
  const last = new Map<number, number>();
  for (const f of frames) {
    if (typeof f['sid'] !== 'number' || typeof f['seq'] !== 'number') continue;
    const prev = last.get(f['sid']);
    if (prev !== undefined && f['seq'] !== prev + 1) return false;
    last.set(f['sid'], f['seq']);
  }
  return true;
}

describe('simulated Kalshi WebSocket', () => {
  it('subscribe → subscribed per channel, snapshots first, then sequenced deltas, tickers and trades in the venue shapes', async () => {
    const c = await client();
    const tickers = world
      .listings(venue.label)
      .filter((l) => l.status === 'active')
      .map((l) => l.id);
    c.send({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta', 'ticker', 'trade'], market_tickers: tickers } });
    c.send({ id: 2, cmd: 'subscribe', params: { channels: ['market_lifecycle_v2'] } });
    await c.until(() => c.frames().filter((f) => f['type'] === 'subscribed').length === 4);
    const subscribed = c.frames().filter((f) => f['type'] === 'subscribed');
    expect(subscribed.map((f) => f['msg'])).toEqual([
      { channel: 'orderbook_delta', sid: 1 },
      { channel: 'ticker', sid: 2 },
      { channel: 'trade', sid: 3 },
      { channel: 'market_lifecycle_v2', sid: 4 },
    ]);
    expect(c.frames().filter((f) => f['type'] === 'orderbook_snapshot')).toHaveLength(tickers.length);
    world.tick(300);
    await c.until(
      () =>
        c.frames().some((f) => f['type'] === 'orderbook_delta') &&
        c.frames().some((f) => f['type'] === 'trade') &&
        c.frames().some((f) => f['type'] === 'ticker'),
    );
    for (const f of c.frames()) expect(wsServerFrameSchema.safeParse(f).success, JSON.stringify(f)).toBe(true);
    expect(seqOk(c.frames())).toBe(true);
    // Ticker frames carry no seq; every other data frame does.
    expect(
      c
        .frames()
        .filter((f) => f['type'] === 'ticker')
        .every((f) => f['seq'] === undefined),
    ).toBe(true);
    // Deltas of a bid side are YES bids, asks become NO bids at 1 − price.
    expect(
      new Set(
        c
          .frames()
          .filter((f) => f['type'] === 'orderbook_delta')
          .map((f) => (f['msg'] as { side: string }).side),
      ),
    ).toEqual(new Set(['yes', 'no']));
  });

  it('answers commands as the spec examples: errors, list_subscriptions, update_subscription (acks use a seq), get_snapshot, unsubscribe', async () => {
    const c = await client();
    const [a, b, d] = world
      .listings(venue.label)
      .filter((l) => l.status === 'active')
      .map((l) => l.id);
    c.send('{"id":1,"cmd":"subscribe"');
    c.send({ id: 2, cmd: 'dance' });
    c.send({ id: 3, cmd: 'subscribe', params: { channels: ['orderbook_delta'] } });
    c.send({ id: 4, cmd: 'subscribe', params: { channels: ['bogus'] } });
    c.send({ id: 5, cmd: 'subscribe', params: { channels: ['fill'] } });
    c.send({ id: 6, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_ticker: a } });
    c.send({ id: 7, cmd: 'update_subscription', params: { sids: [1], market_tickers: [b], action: 'add_markets' } });
    c.send({ id: 8, cmd: 'update_subscription', params: { sid: 1, market_tickers: [d], action: 'get_snapshot' } });
    c.send({ id: 9, cmd: 'update_subscription', params: { sids: [1, 2], market_tickers: [d], action: 'add_markets' } });
    c.send({ id: 10, cmd: 'list_subscriptions' });
    c.send({ id: 11, cmd: 'unsubscribe', params: { sids: [1, 99] } });
    await c.until(() => c.frames().some((f) => f['id'] === 11 && f['type'] === 'error'));
    const strip = (f: Record<string, unknown>): Record<string, unknown> =>
      f['type'] === 'orderbook_snapshot' ? { ...f, msg: (f['msg'] as { market_ticker: string }).market_ticker } : f;
    expect(c.frames().map(strip)).toEqual([
      { type: 'error', msg: { code: 1, msg: 'Unable to process message' } },
      { id: 2, type: 'error', msg: { code: 5, msg: 'Unknown command' } },
      { id: 3, type: 'error', msg: { code: 14, msg: 'Market Ticker required' } },
      { id: 4, type: 'error', msg: { code: 8, msg: 'Unknown channel name' } },
      { id: 5, type: 'error', msg: { code: 9, msg: 'Authentication required' } },
      { id: 6, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } },
      { type: 'orderbook_snapshot', sid: 1, seq: 1, msg: a },
      { id: 7, sid: 1, seq: 2, type: 'ok', msg: { market_tickers: [a, b] } },
      { type: 'orderbook_snapshot', sid: 1, seq: 3, msg: b },
      { type: 'orderbook_snapshot', id: 8, sid: 1, seq: 4, msg: d },
      { id: 9, type: 'error', msg: { code: 12, msg: 'Exactly one subscription ID is required' } },
      { id: 10, type: 'ok', msg: [{ channel: 'orderbook_delta', sid: 1 }] },
      { id: 11, sid: 1, seq: 5, type: 'unsubscribed' },
      { id: 11, type: 'error', msg: { code: 7, msg: 'Unknown subscription ID' } },
    ]);
  });

  it('faults: gap skips one seq per sid, malformed sends undecodable frames, duplicate_snapshot re-sends snapshots in sequence', async () => {
    const c = await client();
    const l = world.listings(venue.label).find((x) => x.status === 'active')!;
    c.send({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: [l.id] } });
    await c.until(() => c.frames().some((f) => f['type'] === 'orderbook_snapshot'));
    server.fault({ kind: 'duplicate_snapshot' });
    await c.until(() => c.frames().filter((f) => f['type'] === 'orderbook_snapshot').length === 2);
    expect(
      c
        .frames()
        .filter((f) => f['type'] === 'orderbook_snapshot')
        .map((f) => f['seq']),
    ).toEqual([1, 2]);
    server.fault({ kind: 'gap' });
    server.fault({ kind: 'duplicate_snapshot' });
    await c.until(() => c.frames().filter((f) => f['type'] === 'orderbook_snapshot').length === 3);
    expect(
      c
        .frames()
        .filter((f) => f['type'] === 'orderbook_snapshot')
        .map((f) => f['seq']),
    ).toEqual([1, 2, 4]);
    const before = c.texts.length;
    server.fault({ kind: 'malformed', count: 8 });
    await c.until(() => c.texts.length === before + 8);
    const bad = c.texts.slice(before);
    for (const t of bad) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(t);
      } catch {
        continue;
      }
      expect(wsServerFrameSchema.safeParse(parsed).success, t).toBe(false);
    }
    expect(
      bad.filter((t) => {
        try {
          JSON.parse(t);
          return false;
        } catch {
          return true;
        }
      }).length,
    ).toBeGreaterThanOrEqual(2);
  });

  it('stall: nothing arrives (no pong either) until the stall ends, then the queued frames in order', async () => {
    const c = await client();
    const l = world.listings(venue.label).find((x) => x.status === 'active')!;
    // The stall ends no earlier than this (the server reads the same clock, later). Each frame and
    // the pong is stamped when it arrives: none may arrive before the end, however late the test
    // runs. (It slept 120 ms and asserted nothing had come, which fails when a busy machine holds
    // this process past the stall's 200 ms.)
    const stallEnds = Date.now() + 200;
    server.fault({ kind: 'stall', ms: 200 });
    const arrived: number[] = [];
    c.ws.on('message', () => arrived.push(Date.now()));
    let pongAt: number | undefined;
    c.ws.on('pong', () => (pongAt ??= Date.now()));
    c.ws.ping();
    c.send({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: [l.id] } });
    await c.until(() => c.frames().some((f) => f['type'] === 'orderbook_snapshot'));
    expect(arrived.filter((t) => t < stallEnds)).toEqual([]);
    // A ping read during the stall goes unanswered; one read after it (this process held that long) may be.
    expect(pongAt === undefined || pongAt >= stallEnds).toBe(true);
    expect(c.frames().map((f) => f['type'])).toEqual(['subscribed', 'orderbook_snapshot']);
  });
});
