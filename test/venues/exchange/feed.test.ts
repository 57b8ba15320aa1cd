import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { VenueConfig } from '../../../src/config/schema.js';
import { OrderBook } from '../../../src/core/book.js';
import { complement } from '../../../src/core/price.js';
import { log } from '../../../src/core/log.js';
import type { FeedEvent, Level, MarketUpsert, NormalizedEvent } from '../../../src/core/types.js';
import { serve } from '../../../src/sim/protocols/exchange.js';
import type { SimListing, SimServer } from '../../../src/sim/types.js';
import { createWorld, type SimWorld } from '../../../src/sim/world.js';
import { createExchangeFeed } from '../../../src/venues/exchange/feed.js';
import { exchangeBookSchema, exchangeEventsSchema } from '../../../src/venues/exchange/raw.js';
import { apiMarketId, type VenueFeed } from '../../../src/venues/protocol.js';

const cfg = loadConfig({ env: {} });
const ingest = { ...cfg.ingest, heartbeatMs: 100, catalogRefreshMs: 200, reconnectMinMs: 20, reconnectMaxMs: 200 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Books as a downstream store would keep them from the feed's events: one per instrument. */
class Books {
  readonly books = new Map<string, OrderBook>();
  readonly markets = new Map<string, MarketUpsert>();
  readonly feed: FeedEvent[] = [];
  apply(e: NormalizedEvent): void {
    switch (e.type) {
      case 'book_snapshot':
        this.book(e.instrument).snapshot(e.bids, e.asks, e.timestamp);
        break;
      case 'book_delta': {
        const b = this.book(e.instrument);
        if (b.ready) b.apply(e.changes, e.timestamp);
        break;
      }
      case 'market':
        this.markets.set(e.marketId, e);
        break;
      case 'feed':
        this.feed.push(e);
        if (e.state === 'gap' && e.instrument) this.books.get(e.instrument)?.reset();
        if (e.state === 'disconnected' || e.state === 'stalled') for (const b of this.books.values()) b.reset();
        break;
      default:
    }
  }
  book(instrument: string): OrderBook {
    let b = this.books.get(instrument);
    if (!b) this.books.set(instrument, (b = new OrderBook(instrument)));
    return b;
  }
  levels(instrument: string): { bids: Level[]; asks: Level[] } | undefined {
    const b = this.books.get(instrument);
    return b?.ready ? { bids: b.bids.levels(), asks: b.asks.levels() } : undefined;
  }
}

const mirror = (levels: readonly Level[]): Level[] => levels.map(([p, s]) => [complement(p), s]);

/** What our books must equal: each listing's YES book, and its mirror as the NO book on a two-sided venue. */
function expected(listings: readonly SimListing[], twoSided: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const l of listings) {
    out[l.id] = { bids: l.book.bids.levels(), asks: l.book.asks.levels() };
    if (twoSided) out[`${l.id}:no`] = { bids: mirror(l.book.asks.levels()), asks: mirror(l.book.bids.levels()) };
  }
  return out;
}

function actual(books: Books, listings: readonly SimListing[], twoSided: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const l of listings) {
    out[l.id] = books.levels(l.id);
    if (twoSided) out[`${l.id}:no`] = books.levels(`${l.id}:no`);
  }
  return out;
}

async function start(label: string, world: SimWorld): Promise<{ venue: VenueConfig; server: SimServer; feed: VenueFeed; books: Books }> {
  const venue = cfg.venues.find((v) => v.label === label)!;
  const server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
  cleanups.push(() => server.close());
  const feed = createExchangeFeed({ venue, endpoints: server.endpoints, ingest, log });
  const books = new Books();
  const sub = feed.events$.subscribe((e) => books.apply(e));
  cleanups.push(() => sub.unsubscribe());
  return { venue, server, feed, books };
}

// A failure guard sized for a loaded machine, not a time the feed must meet.
const WAIT = { timeout: 30_000, interval: 20 };

describe('exchange feed against the simulator', () => {
  for (const [label, twoSided] of [
    ['venue_e', true],
    ['venue_f', false],
  ] as const) {
    it(`${label}: books equal the world's, after it moves, and after a gap, a disconnect and bad frames`, async () => {
      const world = createWorld({ seed: 3, venues: cfg.venues });
      const { server, feed, books } = await start(label, world);
      const listings = world.listings(label).filter((l) => l.status !== 'finalized');
      expect(listings.length).toBeGreaterThan(3);
      const check = (): void => expect(actual(books, listings, twoSided)).toEqual(expected(listings, twoSided));
      await vi.waitFor(check, WAIT);

      world.tick(3000);
      await vi.waitFor(check, WAIT);

      server.fault({ kind: 'gap' });
      world.tick(3000);
      await vi.waitFor(() => expect(feed.stats.gaps).toBeGreaterThan(0), WAIT);
      await vi.waitFor(check, WAIT);
      expect(books.feed.filter((e) => e.state === 'resynced').length).toBeGreaterThan(0);

      server.fault({ kind: 'malformed', count: 4 });
      server.fault({ kind: 'duplicate_snapshot' });
      world.tick(500);
      await vi.waitFor(() => expect(feed.stats.malformedTotal).toBeGreaterThanOrEqual(3), WAIT);
      await vi.waitFor(check, WAIT);

      server.fault({ kind: 'disconnect' });
      world.tick(1000);
      await vi.waitFor(() => expect(books.feed.filter((e) => e.state === 'connected').length).toBeGreaterThanOrEqual(2), WAIT);
      await vi.waitFor(check, WAIT);
      expect(Object.fromEntries(feed.stats.malformed)).toMatchObject({ json: 1, update: 1, snapshot: 1 });
      expect(Object.fromEntries(feed.stats.unknown)).toEqual({ book_v2: 1 });
    });
  }

  it('venue_h: prefixed outcome markets with fee inputs, live state as market updates, resync after a stall', async () => {
    let now = Date.now();
    const world = createWorld({ seed: 3, venues: cfg.venues, now: () => now, ticksPerSecond: 0 });
    const { venue, server, feed, books } = await start('venue_h', world);

    // What the simulator serves is our protocol, by our own wire schemas.
    const doc: unknown = await (await fetch(`${server.endpoints.rest}/events`)).json();
    expect(exchangeEventsSchema.safeParse(doc).success).toBe(true);
    const listings = world.listings('venue_h').filter((l) => l.status !== 'finalized');
    const one = listings[0]!;
    const rest: unknown = await (await fetch(`${server.endpoints.rest}/book/${one.id}`)).json();
    expect(exchangeBookSchema.safeParse(rest).success).toBe(true);
    expect((await fetch(`${server.endpoints.rest}/book/${one.id}:no`)).status).toBe(404);

    // Settled markets are not subscribed again after a reconnect, so compare what is still trading.
    const open = (): SimListing[] => world.listings('venue_h').filter((l) => l.status !== 'finalized');
    const check = (): void => expect(actual(books, open(), false)).toEqual(expected(open(), false));
    await vi.waitFor(check, WAIT);
    for (const l of listings) {
      expect(books.markets.get(apiMarketId(venue, l.id))).toMatchObject({
        marketId: `venue_h_${l.id}`,
        title: l.title,
        eventTitle: l.eventTitle,
        outcome: l.outcome,
        yesInstrument: l.id,
        extra: { live: l.event.state === 'live', league: l.event.league, futures: l.event.futures },
      });
      expect(books.markets.get(apiMarketId(venue, l.id))).not.toHaveProperty('noInstrument');
    }
    // Both sides of a game's moneyline are outcomes of one venue market (spec 2.2: its id is ticker_name).
    const moneyline = listings.filter(
      (l) => l.ids['market_name'] === 'Moneyline' && l.event.id === listings.find((x) => x.ids['market_name'] === 'Moneyline')!.event.id,
    );
    expect(moneyline).toHaveLength(2);
    const venueMarkets = moneyline.map((l) => books.markets.get(apiMarketId(venue, l.id))!.extra!['venueMarketId']);
    expect(venueMarkets[0]).toMatch(/^\d{9}$/);
    expect(venueMarkets[1]).toBe(venueMarkets[0]);
    expect(moneyline.map((l) => l.id)).not.toContain(venueMarkets[0]);

    // A scheduled game starts: its markets come again with live = true.
    const game = listings
      .filter((l) => l.event.state === 'scheduled' && !l.event.futures && l.event.home !== undefined && l.event.startTime > now)
      .sort((a, b) => a.event.startTime - b.event.startTime)[0]!;
    expect(game).toBeDefined();
    now = game.event.startTime + 1000;
    world.start();
    cleanups.push(() => world.stop());
    const id = apiMarketId(venue, game.id);
    await vi.waitFor(() => expect(books.markets.get(id)?.extra).toMatchObject({ live: true, eventState: 'live' }), WAIT);
    world.stop();

    // A stall longer than 2.5 heartbeats: the feed gives up on the socket, reconnects and resyncs.
    server.fault({ kind: 'stall', ms: 600 });
    world.tick(2000);
    await vi.waitFor(() => expect(books.feed.some((e) => e.state === 'stalled')).toBe(true), WAIT);
    await vi.waitFor(check, WAIT);
    expect(feed.stats.reconnects).toBeGreaterThan(0);
  });
});
