import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { log } from '../../../src/core/log.js';
import type { MarketUpsert, NormalizedEvent, Quote } from '../../../src/core/types.js';
import { createWorld } from '../../../src/sim/world.js';
import { serve } from '../../../src/sim/protocols/predictit.js';
import type { SimListing, SimServer } from '../../../src/sim/types.js';
import { createPredictItFeed } from '../../../src/venues/predictit/feed.js';

const cfg = loadConfig({ env: {} });
const venue = cfg.venues.find((v) => v.protocol === 'predictit')!;
const ingest = { ...cfg.ingest, pollMs: 20 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Latest state per market as the feed told it. */
function collect(events: NormalizedEvent[]): { quotes: Map<string, Quote>; markets: Map<string, MarketUpsert> } {
  const quotes = new Map<string, Quote>();
  const markets = new Map<string, MarketUpsert>();
  for (const e of events) {
    if (e.type === 'quote') quotes.set(e.marketId, e);
    else if (e.type === 'market') markets.set(e.marketId, e);
  }
  return { quotes, markets };
}

/** What a quote of this listing must say: the top of its YES book, whole cents. */
function expectedQuote(l: SimListing): Record<string, number> {
  const q: Record<string, number> = {};
  const bid = l.book.bids.best();
  const ask = l.book.asks.best();
  if (bid !== undefined) q['yesBid'] = bid;
  if (ask !== undefined) q['yesAsk'] = ask;
  if (l.last !== undefined) q['lastPrice'] = l.last;
  return q;
}

function priceOf(q: Quote | undefined): Record<string, number> {
  const o: Record<string, number> = {};
  if (q?.yesBid !== undefined) o['yesBid'] = q.yesBid;
  if (q?.yesAsk !== undefined) o['yesAsk'] = q.yesAsk;
  if (q?.lastPrice !== undefined) o['lastPrice'] = q.lastPrice;
  return o;
}

describe('predictit feed against the simulator', () => {
  it('produces the quotes of the world, before and after it moves, through faults', async () => {
    const world = createWorld({ seed: 11, venues: cfg.venues });
    const server: SimServer = await serve(world, venue, { host: '127.0.0.1', port: 0 });
    cleanups.push(() => server.close());
    const feed = createPredictItFeed({ venue, endpoints: server.endpoints, ingest, log });
    const events: NormalizedEvent[] = [];
    const sub = feed.events$.subscribe((e) => events.push(e));
    cleanups.push(() => sub.unsubscribe());

    const listed = world.listings(venue.label).filter((l) => l.status !== 'finalized');
    expect(listed.length).toBeGreaterThan(5);
    const check = (): void => {
      const { quotes } = collect(events);
      const got = Object.fromEntries(listed.map((l) => [l.id, priceOf(quotes.get(l.id))]));
      const want = Object.fromEntries(listed.map((l) => [l.id, expectedQuote(l)]));
      expect(got).toEqual(want);
    };
    await vi.waitFor(check, { timeout: 30_000, interval: 20 });

    const { markets } = collect(events);
    for (const l of listed) {
      expect(markets.get(l.id)).toMatchObject({
        venue: 'venue_c',
        marketId: l.id,
        title: l.title,
        eventTitle: l.eventTitle,
        eventId: l.ids['market_id'],
        outcome: l.outcome,
        status: l.status === 'active' ? 'active' : 'closed',
        closeTime: l.closeTime,
      });
    }

    const quotesBefore = events.filter((e) => e.type === 'quote').length;
    world.tick(3000);
    await vi.waitFor(check, { timeout: 30_000, interval: 20 });
    // The world moved these books, so the check above compared new prices, not the first ones.
    expect(events.filter((e) => e.type === 'quote').length).toBeGreaterThan(quotesBefore);

    // Bad bodies are counted and dropped; nothing listed is closed by mistake and prices stay right.
    server.fault({ kind: 'malformed', count: 3 });
    await vi.waitFor(() => expect(feed.stats.malformedTotal).toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 20 });
    expect(events.filter((e) => e.type === 'market_status')).toEqual([]);
    server.fault({ kind: 'disconnect' });
    world.tick(2000);
    await vi.waitFor(check, { timeout: 30_000, interval: 20 });
    expect(feed.stats.malformed.get('contract')).toBeGreaterThanOrEqual(1);
    expect(feed.stats.malformed.get('market')).toBeGreaterThanOrEqual(1);
    expect(feed.stats.malformed.get('all')).toBeGreaterThanOrEqual(1);
  });
});

describe('predictit feed against a venue that answers badly', () => {
  it('counts a truncated body, reports the error once, and recovers', async () => {
    const good = `{"markets":[${readFileSync('test/fixtures/predictit/marketdata_market_7085_2021-02-26.json', 'utf8')}]}`;
    let calls = 0;
    const server: Server = createServer((_req, res) => {
      calls++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(calls <= 2 ? good.slice(0, 40) : good);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    const { port } = server.address() as AddressInfo;
    const feed = createPredictItFeed({ venue, endpoints: { rest: `http://127.0.0.1:${port}/api/marketdata` }, ingest, log });
    const events: NormalizedEvent[] = [];
    const sub = feed.events$.subscribe((e) => events.push(e));
    cleanups.push(() => sub.unsubscribe());
    await vi.waitFor(() => expect(events.filter((e) => e.type === 'quote')).toHaveLength(2), { timeout: 30_000, interval: 10 });
    expect(events.map((e) => (e.type === 'feed' ? `feed:${e.state}` : e.type))).toEqual([
      'feed:error',
      'feed:connected',
      'market',
      'quote',
      'market',
      'quote',
      'feed:catalog',
    ]);
    expect(feed.stats.malformed.get('http_json')).toBe(2);
    expect(feed.stats.reconnects).toBe(1);
  });
});
