import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../../src/config/load.js';
import type { NormalizedEvent } from '../../../src/core/types.js';
import { serve } from '../../../src/sim/protocols/polymarket_us.js';
import type { SimListing, SimServer } from '../../../src/sim/types.js';
import { createWorld, type SimWorld } from '../../../src/sim/world.js';
import { PolymarketUsMapper, statusOfState } from '../../../src/venues/polymarket_us/mappers.js';
import {
  isMarketBook,
  MARKET_STATES,
  usEventsResponseSchema,
  usMarketBookSchema,
  usMarketsResponseSchema,
  usSettlementSchema,
} from '../../../src/venues/polymarket_us/raw.js';

/**
 * No recorded Polymarket US payloads exist (test/fixtures/polymarket_us/NOTES.md). These tests run
 * the mapper over what the simulator serves (SYNTHETIC DATA) in the shapes of the official clients,
 * and over variants of those messages for bad input.
 */

const cfg = loadConfig({ env: {} });
const venue = cfg.venues.find((v) => v.protocol === 'polymarket_us')!;
const LOCAL = 1_700_000_000_000;
let world: SimWorld;
let server: SimServer;

beforeAll(async () => {
  world = createWorld({ seed: 5, venues: cfg.venues });
  server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await server.close();
});

const get = async (path: string): Promise<unknown> => (await fetch(`${server.endpoints.rest}${path}`)).json();
const mapper = (): PolymarketUsMapper => new PolymarketUsMapper(venue);
const run = (m: PolymarketUsMapper, raw: unknown): NormalizedEvent[] => [...m.map(raw, LOCAL)];
const open = (): SimListing[] => world.listings(venue.label).filter((l) => l.status === 'active');

/** Subscribes a plain client and returns the first `n` messages. */
async function messages(slugs: string[], n: number): Promise<Record<string, unknown>[]> {
  const ws = new WebSocket(server.endpoints.ws!);
  const got: Record<string, unknown>[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      ws.on('open', () => ws.send(JSON.stringify({ subscribe: { requestId: 'r1', subscriptionType: 'SUBSCRIPTION_TYPE_MARKET_DATA', marketSlugs: slugs } })));
      ws.on('message', (d) => {
        got.push(JSON.parse(d.toString()) as Record<string, unknown>);
        if (got.length >= n) resolve();
      });
      ws.on('error', reject);
      // No 2 s deadline (a starved machine missed it): the test's timeout is the failure guard, and
      // a server that closes first fails at once with what it sent.
      ws.on('close', () => reject(new Error(`closed after ${got.length} of ${n} messages`)));
    });
  } finally {
    ws.terminate();
  }
  return got;
}

describe('polymarket_us REST (simulator) through zod and the mapper', () => {
  it('the listing, events, book and settlement bodies pass their schemas', async () => {
    const markets = usMarketsResponseSchema.parse(await get('/v1/markets?limit=500&offset=0'));
    expect(markets.markets.length).toBe(world.listings(venue.label).length);
    const events = usEventsResponseSchema.parse(await get('/v1/events?limit=500&active=true&closed=false'));
    expect(events.events.length).toBeGreaterThan(5);
    const l = open()[0]!;
    expect(usMarketBookSchema.safeParse(await get(`/v1/markets/${l.id}/book`)).success).toBe(true);
    const settled = world.listings(venue.label).find((x) => x.status === 'finalized')!;
    expect(usSettlementSchema.parse(await get(`/v1/markets/${settled.id}/settlement`)).settlementPrice.currency).toBe('USD');
    expect(usMarketsResponseSchema.safeParse({ markets: [{ slug: 'x' }] }).success).toBe(false);
    expect(usMarketsResponseSchema.safeParse({ markets: [{ ...markets.markets[0], id: '12' }] }).success).toBe(false);
  });

  it('maps markets to upserts keyed venue_g_<slug>, YES-only', async () => {
    const l = open()[0]!;
    const [u, ...rest] = run(mapper(), await get(`/v1/markets?slug=${l.id}`));
    expect(rest).toEqual([]);
    expect(u).toEqual({
      type: 'market',
      venue: 'venue_g',
      timestamp: LOCAL,
      localTimestamp: LOCAL,
      marketId: `venue_g_${l.id}`,
      title: l.title,
      outcome: l.outcome,
      category: l.category,
      status: 'active',
      closeTime: l.closeTime,
      url: `https://polymarket.us/market/${l.id}`,
      yesInstrument: l.id,
      volume: l.volume,
      liquidity: expect.any(Number) as number,
      extra: { slug: l.id, id: expect.any(Number) as number, eventSlug: l.ids['event_slug'] },
    });
    // Through /v1/events the event title, id and tags come along.
    const evs = run(mapper(), await get('/v1/events?limit=500'));
    const fromEvent = evs.find((e) => e.type === 'market' && e.marketId === `venue_g_${l.id}`);
    expect(fromEvent).toMatchObject({ eventTitle: l.eventTitle, tags: [...l.tags], yesInstrument: l.id });
    expect(fromEvent).not.toHaveProperty('noInstrument');
  });
});

describe('polymarket_us market data (simulator) through the mapper', () => {
  it('maps each full-book message to a snapshot equal to the listing book, plus its stats', async () => {
    const ls = open().slice(0, 3);
    const msgs = await messages(
      ls.map((l) => l.id),
      3,
    );
    for (const msg of msgs) expect(isMarketBook(msg['marketData'])).toBe(true);
    const m = mapper();
    for (const l of ls)
      m.learn({
        type: 'market',
        venue: 'venue_g',
        timestamp: LOCAL,
        localTimestamp: LOCAL,
        marketId: `venue_g_${l.id}`,
        title: l.title,
        status: 'active',
        yesInstrument: l.id,
      });
    const out = msgs.flatMap((x) => run(m, x));
    expect(out).toEqual(
      ls.flatMap((l) => [
        {
          type: 'book_snapshot',
          venue: 'venue_g',
          timestamp: l.book.timestamp,
          localTimestamp: LOCAL,
          marketId: `venue_g_${l.id}`,
          instrument: l.id,
          bids: l.book.bids.levels(),
          asks: l.book.asks.levels(),
        },
        {
          type: 'quote',
          venue: 'venue_g',
          timestamp: l.book.timestamp,
          localTimestamp: LOCAL,
          marketId: `venue_g_${l.id}`,
          lastPrice: l.last,
          volume: l.volume,
          openInterest: l.openInterest,
        },
      ]),
    );
    // The same stats again: no second quote; a new state: one market_status.
    const again = structuredClone(msgs[0]!);
    expect(run(m, again).map((e) => e.type)).toEqual(['book_snapshot']);
    (again['marketData'] as Record<string, unknown>)['state'] = 'MARKET_STATE_HALTED';
    expect(run(m, again).map((e) => e.type)).toEqual(['book_snapshot', 'market_status']);
    expect(run(m, again).map((e) => e.type)).toEqual(['book_snapshot']);
    m.reset();
    expect(run(m, again).map((e) => e.type)).toEqual(['book_snapshot', 'quote']);
  });

  it('counts and drops bad messages, maps heartbeats and errors', async () => {
    const [msg] = await messages([open()[0]!.id], 1);
    const md = msg!['marketData'] as Record<string, unknown>;
    const m = mapper();
    const bad: [unknown, string][] = [
      ['text', 'frame'],
      [{ marketData: { ...md, bids: 'none' } }, 'marketData'],
      [{ marketData: { ...md, marketSlug: 7 } }, 'marketData'],
      [{ marketData: { ...md, bids: [{ px: { value: '1.5', currency: 'USD' }, qty: '10' }] } }, 'marketData'],
      [{ marketData: { ...md, offers: [{ px: { value: '0.5', currency: 'USD' }, qty: '-10' }] } }, 'marketData'],
      [{ marketData: { ...md, offers: [{ px: { value: '0.5', currency: 'EUR' }, qty: '10' }] } }, 'marketData'],
      [{ marketData: { ...md, transactTime: 'yesterday' } }, 'marketData'],
      [{ marketDataLite: { marketSlug: 'x', bestBid: { value: '-1' } } }, 'marketDataLite'],
      [{ markets: [{ slug: 'x' }] }, 'markets'],
    ];
    for (const [raw] of bad) expect(run(m, raw)).toEqual([]);
    const kinds: Record<string, number> = {};
    for (const [, k] of bad) kinds[k] = (kinds[k] ?? 0) + 1;
    expect(Object.fromEntries(m.stats.malformed)).toEqual(kinds);

    expect(run(m, { heartbeat: {} })).toEqual([]);
    expect(run(m, { marketDepthV2: {} })).toEqual([]);
    expect(m.stats.unknown.get('marketDepthV2')).toBe(1);
    expect(run(m, { requestId: 'md-1', error: 'unknown market' })).toEqual([
      { type: 'feed', venue: 'venue_g', timestamp: LOCAL, localTimestamp: LOCAL, state: 'error', detail: 'md-1: unknown market' },
    ]);
    expect(run(m, { marketDataLite: { marketSlug: 'x', bestBid: { value: '0.41', currency: 'USD' } } })).toEqual([
      {
        type: 'quote',
        venue: 'venue_g',
        timestamp: LOCAL,
        localTimestamp: LOCAL,
        marketId: 'venue_g_x',
        yesBid: 4100,
        yesAsk: undefined,
        lastPrice: undefined,
      },
    ]);
  });

  it('knows every market state', () => {
    expect(MARKET_STATES.map(statusOfState)).toEqual(['active', 'initialized', 'closed', 'closed', 'closed', 'finalized', 'active']);
    expect(statusOfState('MARKET_STATE_NEW_THING')).toBeUndefined();
  });
});
