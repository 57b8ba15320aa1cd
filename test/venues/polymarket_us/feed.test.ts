import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { OrderBook } from '../../../src/core/book.js';
import { log } from '../../../src/core/log.js';
import type { MarketUpsert, NormalizedEvent } from '../../../src/core/types.js';
import { serve } from '../../../src/sim/protocols/polymarket_us.js';
import type { SimListing } from '../../../src/sim/types.js';
import { createWorld } from '../../../src/sim/world.js';
import { createPolymarketUsFeed } from '../../../src/venues/polymarket_us/feed.js';

const cfg = loadConfig({ env: {} });
const venue = cfg.venues.find((v) => v.protocol === 'polymarket_us')!;
const ingest = { ...cfg.ingest, reconnectMinMs: 20, reconnectMaxMs: 200, heartbeatMs: 1_000 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(what: string, pred: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('polymarket_us feed against the simulator', () => {
  it('builds every YES book of the world exactly, through ticks, a disconnect, gaps and bad frames', async () => {
    const world = createWorld({ seed: 9, venues: cfg.venues });
    const server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const feed = createPolymarketUsFeed({ venue, endpoints: server.endpoints, ingest, log });
    const books = new Map<string, OrderBook>();
    const markets = new Map<string, MarketUpsert>();
    const feedEvents: NormalizedEvent[] = [];
    const sub = feed.events$.subscribe((e) => {
      if (e.type === 'book_snapshot') {
        const b = books.get(e.instrument) ?? new OrderBook(e.instrument);
        b.snapshot(e.bids, e.asks, e.timestamp);
        books.set(e.instrument, b);
      } else if (e.type === 'book_delta') throw new Error('polymarket_us sends full books only');
      else if (e.type === 'market') markets.set(e.marketId, e);
      else if (e.type === 'feed') {
        feedEvents.push(e);
        if (e.state === 'disconnected' || e.state === 'stalled') for (const b of books.values()) b.reset();
      }
    });
    cleanups.push(() => sub.unsubscribe());

    const open = world.listings(venue.label).filter((l) => l.status === 'active' || l.status === 'initialized');
    expect(open.length).toBeGreaterThan(50);
    const diff = (): SimListing[] =>
      open.filter((l) => {
        const b = books.get(l.id);
        return !b?.ready || JSON.stringify([b.bids.levels(), b.asks.levels()]) !== JSON.stringify([l.book.bids.levels(), l.book.asks.levels()]);
      });

    await until('initial books', () => diff().length === 0);
    for (const l of open) expect(markets.get(`venue_g_${l.id}`)).toMatchObject({ title: l.title, eventTitle: l.eventTitle, yesInstrument: l.id });

    world.tick(3_000);
    await until('books after ticks', () => diff().length === 0);

    server.fault({ kind: 'disconnect' });
    world.tick(500);
    await until('disconnected', () => feedEvents.some((e) => e.type === 'feed' && e.state === 'disconnected'));
    await until('books after reconnect', () => diff().length === 0);
    expect(feed.stats.reconnects).toBe(1);

    // A skipped message costs nothing once the market changes again: every message is the full book.
    let dropped: SimListing | undefined;
    const off = world.onChange((c) => {
      if (!dropped && c.type !== 'trade' && c.listing.venue === venue.label && open.includes(c.listing)) dropped = c.listing;
    });
    server.fault({ kind: 'gap' });
    server.fault({ kind: 'malformed', count: 5 });
    server.fault({ kind: 'duplicate_snapshot' });
    for (let i = 0; i < 100_000 && !dropped; i++) world.tick(1);
    off();
    const v = dropped!.version;
    for (let i = 0; i < 100_000 && dropped!.version === v; i++) world.tick(1);
    await until('books after gap and malformed', () => diff().length === 0 && feed.stats.malformedTotal >= 4);
    expect(Object.fromEntries(feed.stats.malformed)).toEqual({ json: 1, marketData: 3 });
    expect(feed.stats.unknown.get('requestId,marketDepthV2')).toBe(1);
  });
});
