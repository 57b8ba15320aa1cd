import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { OrderBook } from '../../../src/core/book.js';
import { log } from '../../../src/core/log.js';
import type { MarketStatus, NormalizedEvent } from '../../../src/core/types.js';
import { serve } from '../../../src/sim/protocols/kalshi.js';
import type { SimServer } from '../../../src/sim/types.js';
import { createWorld, type SimWorld } from '../../../src/sim/world.js';
import { createKalshiFeed, type KalshiFeedOptions } from '../../../src/venues/kalshi/feed.js';

/**
 * End to end over loopback: the simulator's Kalshi server (SYNTHETIC DATA from a seeded world) and
 * the real feed. Every event is applied to an OrderBook per instrument exactly as the state layer
 * would (snapshot replaces, delta applies, gap resets the instrument, disconnect resets all); the
 * books must then equal the world's listing books level for level.
 */

const cfg = loadConfig({ env: {} });
const venue = cfg.venues.find((v) => v.protocol === 'kalshi')!;
const ingest = { ...cfg.ingest, reconnectMinMs: 20, reconnectMaxMs: 200, heartbeatMs: 1_000, catalogRefreshMs: 60_000 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Harness {
  world: SimWorld;
  server: SimServer;
  events: NormalizedEvent[];
  books: Map<string, OrderBook>;
  status: Map<string, MarketStatus>;
  feed: ReturnType<typeof createKalshiFeed>;
}

async function setup(opts: { now?: () => number; ingest?: Partial<typeof ingest>; feed?: KalshiFeedOptions } = {}): Promise<Harness> {
  const world = createWorld({ seed: 11, venues: [venue], ticksPerSecond: 0, ...(opts.now ? { now: opts.now } : {}) });
  cleanups.push(() => world.stop());
  const server = await serve(world, venue, { host: '127.0.0.1', port: 0 });
  cleanups.push(() => server.close());
  const feed = createKalshiFeed(
    { venue, endpoints: server.endpoints, ingest: { ...ingest, ...opts.ingest }, log },
    { resyncRetryMs: 300, settledLookbackMs: 3_650 * 86_400_000, ...opts.feed },
  );
  const h: Harness = { world, server, events: [], books: new Map(), status: new Map(), feed };
  const sub = feed.events$.subscribe((e) => {
    h.events.push(e);
    switch (e.type) {
      case 'book_snapshot': {
        let b = h.books.get(e.instrument);
        if (!b) h.books.set(e.instrument, (b = new OrderBook(e.instrument)));
        b.snapshot(e.bids, e.asks, e.timestamp);
        break;
      }
      case 'book_delta':
        // Throws (failing the test) on a delta to a book that is not ready: the feed must never send one.
        h.books.get(e.instrument)!.apply(e.changes, e.timestamp);
        break;
      case 'feed':
        if (e.state === 'gap' && e.instrument) h.books.get(e.instrument)?.reset();
        if (e.state === 'disconnected' || e.state === 'stalled') for (const b of h.books.values()) b.reset();
        break;
      case 'market':
      case 'market_status':
        h.status.set(e.marketId, e.status);
        break;
    }
  });
  cleanups.push(() => sub.unsubscribe());
  return h;
}

async function waitFor(what: string, pred: () => boolean, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const levels = (b: { readonly bids: { levels(): unknown }; readonly asks: { levels(): unknown } }): string =>
  JSON.stringify([b.bids.levels(), b.asks.levels()]);

/** Tradable listings whose books differ from ours (empty = all equal). */
function mismatched(h: Harness): string[] {
  const bad: string[] = [];
  for (const l of h.world.listings(venue.label)) {
    if (l.status !== 'active' && l.status !== 'initialized') continue;
    const b = h.books.get(l.id);
    if (!b || !b.ready || levels(b) !== levels(l.book)) bad.push(l.id);
  }
  return bad;
}

const feedStates = (h: Harness): string[] => h.events.flatMap((e) => (e.type === 'feed' ? [e.state] : []));

describe('Kalshi feed against the simulator (end to end)', () => {
  it('lists the catalog, then keeps every book equal to the world through hundreds of ticks; trades and quotes arrive', async () => {
    const h = await setup();
    await waitFor('catalog and snapshots', () => feedStates(h).includes('catalog') && mismatched(h).length === 0);
    const listings = h.world.listings(venue.label);
    const tradable = listings.filter((l) => l.status === 'active');
    expect(tradable.length).toBeGreaterThan(100);
    // One upsert per listing, with the world's status, title and outcome.
    const ups = h.events.filter((e) => e.type === 'market');
    expect(new Set(ups.map((e) => e.marketId)).size).toBe(listings.length);
    for (const l of listings) {
      const u = ups.find((e) => e.marketId === l.id)!;
      expect(u).toMatchObject({
        status: l.status,
        title: l.title,
        eventId: l.ids['event_ticker'],
        seriesId: l.ids['series_ticker'],
        category: l.category,
        eventTitle: l.eventTitle,
      });
    }
    const tradesBefore = h.world.trades(venue.label).length;
    h.world.tick(400);
    await waitFor(
      'books to follow 400 ticks',
      () => mismatched(h).length === 0 && h.events.filter((e) => e.type === 'trade').length === h.world.trades(venue.label).length - tradesBefore,
    );
    expect(mismatched(h)).toEqual([]);
    const trades = h.events.filter((e) => e.type === 'trade');
    expect(trades.length).toBeGreaterThan(10);
    const worldTrades = h.world.trades(venue.label).slice(tradesBefore);
    expect(trades.map((t) => [t.tradeId, t.yesPrice, t.size, t.takerSide])).toEqual(worldTrades.map((t) => [t.id, t.price, t.size, t.takerSide]));
    // The last quote of each market matches its top of book.
    const quotes = new Map<string, NormalizedEvent>();
    for (const e of h.events) if (e.type === 'quote') quotes.set(e.marketId, e);
    expect(quotes.size).toBeGreaterThan(10);
    for (const [id, q] of quotes) {
      const l = h.world.listing(venue.label, id)!;
      // An empty side is absent from the quote (the venue's 0 / 1.0000 placeholders mean "none").
      expect([(q as { yesBid?: number }).yesBid, (q as { yesAsk?: number }).yesAsk, (q as { volume?: number }).volume]).toEqual([
        l.book.bids.best(),
        l.book.asks.best(),
        l.volume,
      ]);
    }
    expect(h.feed.stats.malformedTotal).toBe(0);
    expect(h.feed.stats.gaps).toBe(0);
  });

  it('the periodic catalog walk repeats (feed catalog) without re-emitting unchanged markets', async () => {
    const h = await setup({ ingest: { catalogRefreshMs: 100 } });
    await waitFor('three catalog walks', () => feedStates(h).filter((s) => s === 'catalog').length >= 3);
    expect(h.events.filter((e) => e.type === 'market')).toHaveLength(h.world.listings(venue.label).length);
    // A market whose record changed (volume after trades) is emitted again on the next walk.
    h.world.tick(300);
    const traded = new Set(h.world.trades(venue.label).map((t) => t.listing.id));
    const walks = feedStates(h).filter((s) => s === 'catalog').length;
    await waitFor('another walk', () => feedStates(h).filter((s) => s === 'catalog').length >= walks + 2);
    const again = h.events.filter((e) => e.type === 'market').slice(h.world.listings(venue.label).length);
    expect(new Set(again.map((e) => e.marketId))).toEqual(traded);
  });

  it('a sequence gap resets the books of the sid, the feed re-snapshots them (resynced) and they equal the world again', async () => {
    const h = await setup();
    await waitFor('initial books', () => mismatched(h).length === 0 && h.books.size > 0);
    h.world.tick(50);
    h.server.fault({ kind: 'gap' });
    h.world.tick(200);
    await waitFor('gap', () => feedStates(h).includes('gap'));
    const gapped = new Set(
      h.events.flatMap((e) => (e.type === 'feed' && e.state === 'gap' && e.instrument && !e.instrument.startsWith('sid:') ? [e.instrument] : [])),
    );
    expect(gapped.size).toBeGreaterThan(100);
    await waitFor('resync', () => {
      const resynced = new Set(h.events.flatMap((e) => (e.type === 'feed' && e.state === 'resynced' ? [e.instrument] : [])));
      return [...gapped].every((t) => resynced.has(t)) && mismatched(h).length === 0;
    });
    h.world.tick(200);
    await waitFor('books after more ticks', () => mismatched(h).length === 0);
    expect(h.feed.stats.gaps).toBeGreaterThanOrEqual(1);
  });

  it('a disconnect: disconnected, connected again, fresh snapshots, books equal (also after ticks while away)', async () => {
    const h = await setup();
    await waitFor('initial books', () => mismatched(h).length === 0 && h.books.size > 0);
    h.server.fault({ kind: 'disconnect' });
    h.world.tick(150);
    await waitFor('reconnect', () => feedStates(h).filter((s) => s === 'connected').length === 2);
    expect(feedStates(h)).toEqual(['catalog', 'connected', 'disconnected', 'connected']);
    h.world.tick(150);
    await waitFor('books after reconnect', () => mismatched(h).length === 0);
    expect(h.feed.stats.reconnects).toBe(1);
  });

  it('malformed frames are counted and dropped, duplicate snapshots replace, a stall is survived: books stay equal', async () => {
    const h = await setup({ ingest: { heartbeatMs: 100 } });
    await waitFor('initial books', () => mismatched(h).length === 0 && h.books.size > 0);
    h.server.fault({ kind: 'malformed', count: 8 });
    h.server.fault({ kind: 'duplicate_snapshot' });
    h.world.tick(100);
    await waitFor('malformed counted', () => h.feed.stats.malformedTotal >= 8 && mismatched(h).length === 0);
    expect(feedStates(h).filter((s) => s === 'gap')).toEqual([]);
    // Long enough for the heartbeat (100 ms × 2.5) to give up on the silent socket and reconnect.
    h.server.fault({ kind: 'stall', ms: 500 });
    h.world.tick(100);
    await waitFor('reconnect after stall', () => feedStates(h).filter((s) => s === 'connected').length >= 2);
    h.world.tick(100);
    await waitFor('books after stall', () => mismatched(h).length === 0);
  });

  it('the world moving a day on: new markets are announced and subscribed, games close and settle', async () => {
    // The world's clock: yesterday 00:30 UTC, then a day later, running from there. Never the time of
    // day the test runs at: at 22:00 UTC the new day's games had already ended and closed.
    const DAY = 86_400_000;
    const t0 = Math.floor(Date.now() / DAY) * DAY - DAY + 30 * 60_000;
    const moved: { at?: number } = {};
    const h = await setup({ now: () => (moved.at === undefined ? t0 : t0 + DAY + (Date.now() - moved.at)) });
    await waitFor('initial books', () => mismatched(h).length === 0 && h.books.size > 0);
    const before = h.world.listings(venue.label).length;
    const statusesBefore = new Map(h.world.listings(venue.label).map((l) => [l.id, l.status]));
    moved.at = Date.now();
    h.world.start();
    await waitFor('lifecycle to run', () => h.world.listings(venue.label).length > before);
    h.world.stop();
    const listings = h.world.listings(venue.label);
    const changed = listings.filter((l) => statusesBefore.has(l.id) && statusesBefore.get(l.id) !== l.status);
    expect(changed.length).toBeGreaterThan(0);
    h.world.tick(300);
    await waitFor('statuses and books', () => listings.every((l) => h.status.get(l.id) === l.status) && mismatched(h).length === 0);
    // The new listings still open have books (one may open and close within the run when the machine
    // is slow and the world runs longer: a closed market has no book to subscribe).
    const added = listings.slice(before).filter((l) => l.status === 'active' || l.status === 'initialized');
    expect(added.length).toBeGreaterThan(0);
    for (const l of added) expect(h.books.get(l.id)?.ready, l.id).toBe(true);
    expect(h.events.some((e) => e.type === 'market_status' && e.status === 'finalized')).toBe(true);
  });
});
